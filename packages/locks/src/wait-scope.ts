/**
 * One AbortSignal for one wait: the caller's signal, its timeout (on the client's clock), the
 * client closing and the lock closing (abort()), whichever comes first. Its reason is already the typed error the wait rejects
 * with: TimeoutError, AbortError or ClosedError.
 */
import { AbortError, ClosedError, TimeoutError, type Client, type TimerHandle } from '@tenure/client';
import { clientClosedSignal } from './client-closed.js';

export interface WaitOptions {
  /** Give up after this many milliseconds: the wait rejects with TimeoutError. */
  timeoutMs?: number;
  /** Give up when this aborts: the wait rejects with AbortError. */
  signal?: AbortSignal;
}

export class WaitScope {
  private readonly controller = new AbortController();
  private timer: TimerHandle | null = null;
  private readonly userSignal: AbortSignal | undefined;
  private readonly onUserAbort = (): void => this.abort(userReason(this.userSignal!, this.what));
  private readonly closed: AbortSignal;
  private readonly onClosed = (): void => this.abort(this.closed.reason as Error);

  constructor(
    private readonly client: Client,
    options: WaitOptions,
    private readonly what: string,
  ) {
    const { timeoutMs, signal } = options;
    this.closed = clientClosedSignal(client);
    if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0)) {
      throw new RangeError(`${what}: timeoutMs must be a number >= 0, got ${String(timeoutMs)}`);
    }
    this.userSignal = signal;
    if (signal?.aborted) {
      this.abort(userReason(signal, what));
      return;
    }
    signal?.addEventListener('abort', this.onUserAbort, { once: true });
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
      this.timer = client.clock.setTimeout(() => {
        this.timer = null;
        this.abort(new TimeoutError(`${what} timed out after ${timeoutMs} ms`, timeoutMs));
      }, timeoutMs);
    }
    if (this.closed.aborted) {
      this.abort(this.closed.reason as Error);
      return;
    }
    this.closed.addEventListener('abort', this.onClosed, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /** The typed error this wait rejects with. */
  get reason(): Error {
    return this.controller.signal.reason as Error;
  }

  /** Throws the reason if the wait is over. */
  check(): void {
    if (this.aborted) throw this.reason;
  }

  abort(reason: Error): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** Resolves when the scope aborts (never rejects). */
  get whenAborted(): Promise<void> {
    const s = this.controller.signal;
    if (s.aborted) return Promise.resolve();
    return new Promise((resolve) => s.addEventListener('abort', () => resolve(), { once: true }));
  }

  dispose(): void {
    if (this.timer !== null) this.client.clock.clearTimeout(this.timer);
    this.timer = null;
    this.userSignal?.removeEventListener('abort', this.onUserAbort);
    this.closed.removeEventListener('abort', this.onClosed);
  }
}

function userReason(signal: AbortSignal, what: string): Error {
  const r: unknown = signal.reason;
  // Typed reasons pass through (a recipe hands its own scope's signal to an inner wait).
  if (r instanceof AbortError || r instanceof TimeoutError || r instanceof ClosedError) return r;
  return new AbortError(`${what} was aborted`, { cause: r });
}
