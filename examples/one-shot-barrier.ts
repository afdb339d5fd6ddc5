/**
 * OneShotBarrier: a recipe written on the client's kit (the client README's "Writing a recipe").
 *
 * Protocol: the barrier is one persistent node at `path`, its parents containers. `raise()`
 * creates it; `lower()` deletes it (guaranteed, so a lost connection cannot leave it up);
 * `passed()` resolves once the node does not exist, watching it with `exists` meanwhile.
 */
import { NoNodeError, NodeExistsError, type Client, type WaitOptions } from '@tenure/client';

export class OneShotBarrier implements AsyncDisposable {
  /** Every watch goes through this view, so close() can take them all back. */
  private readonly watches: Client;

  constructor(
    private readonly client: Client,
    readonly path: string,
  ) {
    this.watches = client.trackingWatches();
  }

  async raise(): Promise<void> {
    await this.client.create(this.path, null, { createParentContainers: true }).catch(ignore(NodeExistsError));
  }

  async lower(): Promise<void> {
    await this.client.delete(this.path, { guaranteed: true }).catch(ignore(NoNodeError));
  }

  /** Resolves once the barrier is down; TimeoutError, AbortError or ClosedError otherwise. */
  async passed(options?: WaitOptions): Promise<void> {
    using scope = this.client.waitScope(options, `barrier ${this.path}`);
    for (;;) {
      let changed!: () => void;
      const change = new Promise<void>((resolve) => (changed = resolve));
      const stat = await scope.race(this.watches.exists(this.path, { watch: () => changed(), signal: scope.signal }));
      if (stat === null) return;
      await scope.race(change);
    }
  }

  async close(): Promise<void> {
    await this.watches.removeAllWatches();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

const ignore = (type: new (...args: never[]) => Error) => (err: unknown) => {
  if (!(err instanceof type)) throw err;
};
