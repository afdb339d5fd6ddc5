/**
 * DistributedBarrier (Curator's DistributedBarrier): one node that holds every waiter until
 * someone removes it.
 *
 * Protocol, Curator's layout, so Curator and Tenure processes share a barrier:
 * - `<path>`: PERSISTENT, missing parents as containers, empty data (Curator writes its default
 *   data; nobody reads it). It outlives the session that set it.
 * - `setBarrier()` creates it (already there is fine); `removeBarrier()` deletes it (already gone
 *   is fine), as a guaranteed delete so a lost connection cannot leave it up.
 * - `waitOnBarrier()` reads `exists(<path>)` with a watch. No node: passed. Otherwise it waits for
 *   the watch (deleted, changed, re-created...) and reads again: only an absent node passes.
 */
import { NoNodeError, NodeExistsError, type Client, type WaitOptions } from '@tenure/client';
import { HandleClose, OneShot, unless } from './handle-close.js';

/**
 * A barrier that holds waiters while its node exists.
 *
 * | Node | Mode | Data |
 * |---|---|---|
 * | `<path>` | PERSISTENT (parents: containers) | empty |
 *
 * ```ts
 * // the coordinator
 * await new DistributedBarrier(client, '/jobs/start').setBarrier();
 * // each worker, in its own process
 * await new DistributedBarrier(client, '/jobs/start').waitOnBarrier({ timeoutMs: 60_000 });
 * // the coordinator, when the workers may go: every waiter passes
 * await barrier.removeBarrier();
 * ```
 */
export class DistributedBarrier implements AsyncDisposable {
  /** Every watch goes through this view, so close() can take them all back. */
  private readonly watches: Client;
  private readonly life: HandleClose;

  constructor(
    private readonly client: Client,
    /** The barrier node. */
    readonly path: string,
  ) {
    this.watches = client.trackingWatches();
    this.life = new HandleClose(`DistributedBarrier ${path}`);
  }

  /** Raises the barrier: creates its node (parents as containers). Already raised: nothing to do. */
  async setBarrier(): Promise<void> {
    this.life.join(undefined);
    // Raised by us or anyone, the barrier is up: a lost reply's NodeExists is the answer wanted.
    await this.client.create(this.path, null, { createParentContainers: true, retryAmbiguousWrites: 'raw' }).catch(unless(NodeExistsError));
  }

  /** Removes the barrier, releasing every waiter. Already removed: nothing to do. */
  async removeBarrier(): Promise<void> {
    this.life.join(undefined);
    await this.client.delete(this.path, { guaranteed: true }).catch(unless(NoNodeError));
  }

  /**
   * Resolves once the barrier node does not exist (at once if it never did). Rejects with
   * TimeoutError after `timeoutMs`, AbortError when `signal` aborts, ClosedError when this barrier
   * or its client closes. It never resolves without the barrier being down.
   */
  async waitOnBarrier(options?: WaitOptions): Promise<void> {
    using scope = this.client.waitScope(this.life.join(options), `waitOnBarrier ${this.path}`);
    for (;;) {
      const change = new OneShot();
      try {
        const stat = await scope.race(this.watches.exists(this.path, { watch: change.watch, signal: scope.signal }));
        if (stat === null) return;
        await scope.race(change.fired);
      } finally {
        change.drop(this.watches, this.path);
      }
    }
  }

  /** Ends pending waits with ClosedError and removes their watches. The barrier node stays as it is. */
  async close(): Promise<void> {
    this.life.close();
    await this.watches.removeAllWatches();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
