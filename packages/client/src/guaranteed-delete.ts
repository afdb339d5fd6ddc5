/**
 * Guaranteed deletes (Curator's `delete().guaranteed()`): when a delete fails with a connection
 * problem, it is retried in the background until it succeeds or the session ends. The caller's
 * promise settles only then, so `await` means "the node is gone, or the session that owned it is".
 * The retries are paced by the client's retry policy, as Curator's go through its retry loop.
 * `client.pendingDeletes` lists what is still being retried.
 */
import { ClosedError, NoNodeError, SessionExpiredError } from '@tenure/protocol';
import type { ClientCore } from './client-core.js';
import { isRetryableError } from './retry-policies.js';
import { WaitScope } from './wait-scope.js';

interface PendingDelete {
  /** Server path. */
  path: string;
  epoch: number;
  settle: () => void;
}

export class GuaranteedDeletes {
  private readonly pending = new Set<PendingDelete>();
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly core: ClientCore) {}

  /** Server paths still being retried. */
  get paths(): string[] {
    return [...this.pending].map((p) => p.path);
  }

  /**
   * Runs `attempt` (one delete, waiting for a connection) until it succeeds. A NoNode on the first
   * attempt is an error, as for any delete; after a connection loss it means the delete landed.
   */
  run(path: string, attempt: (epoch: number) => Promise<void>, signal: AbortSignal | undefined): Promise<void> {
    const epoch = this.core.session.epoch;
    const entry: PendingDelete = { path, epoch, settle: () => {} };
    let registered = false;
    const register = (): void => {
      if (!registered) {
        registered = true;
        this.pending.add(entry);
      }
    };
    const work = (async () => {
      try {
        try {
          await attempt(epoch);
          return;
        } catch (err) {
          if (!isRetryableError(err)) throw err;
        }
        register();
        const lifetime = this.core.lifetimeSignal;
        for (let n = 0; ; n++) {
          if (this.core.closed || this.core.session.epoch !== epoch) return;
          await this.core.backoff(n, lifetime);
          if (this.core.closed || this.core.session.epoch !== epoch) return;
          try {
            await attempt(epoch);
            return;
          } catch (err) {
            if (err instanceof NoNodeError || err instanceof SessionExpiredError || err instanceof ClosedError) return;
            if (!isRetryableError(err)) throw err;
          }
        }
      } finally {
        this.pending.delete(entry);
      }
    })();
    this.running.add(work);
    void work.then(
      () => this.running.delete(work),
      () => this.running.delete(work),
    );
    // The session ending settles the caller at once, even while an attempt waits for a connection.
    const ended = new Promise<void>((resolve) => (entry.settle = resolve));
    const outcome = Promise.race([work, ended]);
    if (!signal) return outcome;
    // A caller that stops waiting does not stop the delete: the first attempt may have landed or not.
    const scope = new WaitScope(`delete ${path}`, { signal }, { clock: this.core.clock });
    if (scope.aborted) register();
    else scope.signal.addEventListener('abort', register, { once: true });
    return scope.race(outcome).finally(() => scope.dispose());
  }

  /** The session of `epoch` ended: its deletes are moot. */
  sessionEnded(epoch: number): void {
    for (const p of [...this.pending]) {
      if (p.epoch === epoch) {
        this.pending.delete(p);
        p.settle();
      }
    }
  }

  /** Waits up to `ms` for running deletes (the client is closing on a live connection). */
  async flush(ms: number): Promise<void> {
    if (this.running.size === 0) return;
    using scope = new WaitScope('flushing guaranteed deletes', { timeoutMs: ms }, { clock: this.core.clock });
    await Promise.race([Promise.allSettled([...this.running]), scope.whenAborted]);
  }

  clear(): void {
    for (const p of [...this.pending]) p.settle();
    this.pending.clear();
  }
}
