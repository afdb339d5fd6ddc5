/**
 * One watched node at a time (a latch's predecessor, or its own node while it leads), set with the
 * sequence queue's watchNode. A watch replaced or dropped while it is still being set is taken back
 * as it lands, so a slot never leaves a watch behind.
 */
import { watchNode, type Client, type NodeWatch, type WatchEvent } from '@tenure/client';

interface Entry {
  readonly path: string;
  /** null while it is being set. */
  watch: NodeWatch | null;
}

/** How a watch() ended: set, the node already gone (no watch left), or dropped/fired meanwhile. */
export type WatchResult = 'watching' | 'gone' | 'dropped';

export class WatchSlot {
  private current: Entry | null = null;

  /** `live()`: whether the owner still wants watches (false once it closed). */
  constructor(
    private readonly client: Client,
    private readonly live: () => boolean,
  ) {}

  /** Nothing watched, or being set: the last watch fired, was dropped or failed. */
  get idle(): boolean {
    return this.current === null;
  }

  /** Whether `path` is watched and its watch has not fired (the client re-sets it after a reconnect). */
  holds(path: string): boolean {
    return this.current?.path === path && this.current.watch !== null;
  }

  /**
   * Watches `path` instead of what was watched. `onChange` is called once, when the node changes
   * or goes, unless the watch was dropped or replaced first. Rejects as the read does.
   */
  async watch(path: string, onChange: (event: WatchEvent) => void): Promise<WatchResult> {
    this.drop();
    const entry: Entry = { path, watch: null };
    this.current = entry;
    let watch: NodeWatch | null;
    try {
      watch = await watchNode(this.client, path, (ev) => {
        if (this.current !== entry || !this.live()) return;
        this.current = null;
        onChange(ev);
      });
    } catch (err) {
      if (this.current === entry) this.current = null;
      throw err;
    }
    // (Watched reads carry no abort signal: a read that lands after a drop or a close is undone.)
    if (this.current !== entry || !this.live()) {
      await watch?.cancel();
      return 'dropped';
    }
    if (watch === null) {
      this.current = null;
      return 'gone';
    }
    entry.watch = watch;
    return 'watching';
  }

  /** Takes the watch back (on the server too); one still being set is taken back as it lands. */
  drop(): void {
    const entry = this.current;
    this.current = null;
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- never rejects (NodeWatch.cancel)
    void entry?.watch?.cancel();
  }

  /** Forgets the watch without a request: its node is being deleted by us, which fires and removes it. */
  forget(): void {
    this.current = null;
  }
}
