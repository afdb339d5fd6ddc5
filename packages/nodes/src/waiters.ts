/** A one-time outcome that callers wait for with a timeout and an AbortSignal. */
import { AbortError, TimeoutError } from '@tenure/protocol';
import type { Clock } from '@tenure/client';

export interface WaitOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

export class Outcome {
  private settled: { error: Error | null } | null = null;
  private readonly waiters = new Set<(error: Error | null) => void>();

  get done(): boolean {
    return this.settled !== null;
  }

  resolve(): void {
    this.settle(null);
  }

  reject(error: Error): void {
    this.settle(error);
  }

  /** Resolves once settled; rejects with the settling error, TimeoutError or AbortError. */
  wait(clock: Clock, what: string, options: WaitOptions = {}): Promise<void> {
    if (this.settled) return this.settled.error ? Promise.reject(this.settled.error) : Promise.resolve();
    const { timeoutMs, signal } = options;
    if (signal?.aborted) return Promise.reject(new AbortError(`${what} was aborted`, { cause: signal.reason }));
    return new Promise<void>((resolve, reject) => {
      let timer: unknown = null;
      const finish = (error: Error | null): void => {
        this.waiters.delete(finish);
        if (timer !== null) clock.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve();
      };
      const onAbort = (): void => finish(new AbortError(`${what} was aborted`, { cause: signal!.reason }));
      this.waiters.add(finish);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) timer = clock.setTimeout(() => finish(new TimeoutError(`${what}: not within ${timeoutMs} ms`, timeoutMs)), timeoutMs);
    });
  }

  private settle(error: Error | null): void {
    if (this.settled) return;
    this.settled = { error };
    for (const w of [...this.waiters]) w(error);
  }
}
