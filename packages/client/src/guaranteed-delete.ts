/**
 * Guaranteed deletes (Curator's `delete().guaranteed()`): when a delete fails with a connection
 * problem, it is retried in the background until it succeeds or the session ends. The caller's
 * promise settles only then, so `await` means "the node is gone, or the session that owned it is".
 * `client.pendingDeletes` lists what is still being retried.
 */
import { ClosedError, NoNodeError, SessionExpiredError } from '@tenure/protocol';
import { abortReason, sleep } from './clock.js';
import type { ClientCore } from './client-core.js';
import { isRetryableError } from './retry-policies.js';

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
        const clock = this.core.clock;
        const lifetime = this.core.lifetimeSignal;
        for (let n = 0; ; n++) {
          if (this.core.closed || this.core.session.epoch !== epoch) return;
          await sleep(clock, Math.min(1000, 25 * 2 ** Math.min(n, 6)), lifetime).catch(() => {});
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
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        register();
        return reject(abortReason(signal));
      }
      const onAbort = (): void => {
        register(); // the first attempt may have landed or not: keep going in the background
        reject(abortReason(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      outcome.then(
        () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        (e: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      );
    });
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
    const timer = new AbortController();
    await Promise.race([Promise.allSettled([...this.running]), sleep(this.core.clock, ms, timer.signal).catch(() => {})]);
    timer.abort();
  }

  clear(): void {
    for (const p of [...this.pending]) p.settle();
    this.pending.clear();
  }
}
