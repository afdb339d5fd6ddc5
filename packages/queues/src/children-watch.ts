/**
 * The one children watch a queue keeps on its node. Every listing goes through it and re-arms the
 * same callback (the client keeps one registration per callback and path), and every change, or a
 * reconnect that may have hidden one, bumps `version`. Consumers list only when the version has
 * moved since their last listing, so a drain costs a listing per batch, not one per item.
 */
import { ConnectionState, NoNodeError, type Client, type Stat, type WaitScope, type WatchCallback } from '@tenure/client';

export class ChildrenWatch {
  private changes = 0;
  private readonly waiters = new Set<() => void>();
  private readonly onEvent: WatchCallback = (event) => {
    if (event.type !== 'ChildWatchRemoved') this.bump();
  };
  private readonly onState = (state: ConnectionState): void => {
    if (state === ConnectionState.CONNECTED || state === ConnectionState.RECONNECTED) this.bump();
  };

  /**
   * @param client a `trackingWatches()` view: the queue removes the watch on close.
   * @param recreate makes the queue node again when a listing finds it gone.
   */
  constructor(
    private readonly client: Client,
    readonly path: string,
    private readonly recreate: () => Promise<void>,
  ) {
    client.on('stateChanged', this.onState);
  }

  /** Moves on every change of the children seen (or possibly missed). */
  get version(): number {
    return this.changes;
  }

  /** The children's names (unsorted) and the node's Stat, re-arming the watch. */
  async list(signal?: AbortSignal): Promise<{ children: string[]; stat: Stat }> {
    try {
      return await this.client.getChildren(this.path, { watch: this.onEvent, signal });
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      await this.recreate();
      return await this.client.getChildren(this.path, { watch: this.onEvent, signal });
    }
  }

  /** Resolves once `version` differs from `since`; rejects with the scope's reason when the wait ends first. */
  async changedSince(since: number, scope: WaitScope): Promise<void> {
    if (this.changes !== since) return;
    let wake!: () => void;
    const changed = new Promise<void>((resolve) => (wake = resolve));
    this.waiters.add(wake);
    try {
      await scope.race(changed);
    } finally {
      this.waiters.delete(wake);
    }
  }

  /** Counts as a change: consumers list again (an item they skipped may be free now). */
  poke(): void {
    this.bump();
  }

  close(): void {
    this.client.off('stateChanged', this.onState);
  }

  private bump(): void {
    this.changes++;
    for (const wake of [...this.waiters]) wake();
  }
}
