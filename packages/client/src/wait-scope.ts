/**
 * The one waiting primitive of the client and of every recipe: one AbortSignal that joins the
 * caller's signal, a timeout on the client's clock and the client's close (plus anything that calls
 * `abort()`), whichever comes first. Its reason is already the typed error the wait rejects with:
 * TimeoutError, AbortError or ClosedError, so a wait never has to translate.
 */
import { AbortError, ClosedError, TimeoutError, InvalidArgumentError, asError } from '@tenure/protocol';
import type { Clock, TimerHandle } from '@tenure/protocol';

/** How long to wait, and what may end a wait early. Every wait in Tenure takes these. */
export interface WaitOptions {
  /** Give up after this many milliseconds: the wait rejects with TimeoutError. */
  timeoutMs?: number;
  /** Give up when this aborts: the wait rejects with AbortError (a typed reason passes through as is). */
  signal?: AbortSignal;
}

/** What a scope runs on; `client.waitScope()` fills it in. */
export interface WaitScopeDeps {
  clock: Clock;
  /** Aborts when the owner closes (`client.closedSignal`). */
  closed?: AbortSignal | undefined;
  /** The error for the timeout; default TimeoutError("<what> timed out after N ms"). */
  timeoutError?: ((timeoutMs: number) => Error) | undefined;
}

export class WaitScope implements Disposable {
  private readonly controller = new AbortController();
  private timer: TimerHandle | null = null;
  private readonly clock: Clock;
  private readonly userSignal: AbortSignal | undefined;
  private readonly closed: AbortSignal | undefined;
  private readonly onUserAbort = (): void => this.abort(typedReason(this.userSignal!, this.what));
  private readonly onClosed = (): void => this.abort(closedReason(this.closed!));

  constructor(
    private readonly what: string,
    options: WaitOptions | undefined,
    deps: WaitScopeDeps,
  ) {
    const { timeoutMs, signal } = options ?? {};
    if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0)) {
      throw new InvalidArgumentError(`${what}: timeoutMs must be a number >= 0, got ${String(timeoutMs)}`);
    }
    this.clock = deps.clock;
    this.userSignal = signal;
    this.closed = deps.closed;
    if (signal?.aborted) {
      this.abort(typedReason(signal, what));
      return;
    }
    if (this.closed?.aborted) {
      this.abort(closedReason(this.closed));
      return;
    }
    signal?.addEventListener('abort', this.onUserAbort, { once: true });
    this.closed?.addEventListener('abort', this.onClosed, { once: true });
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
      const timeoutError = deps.timeoutError;
      this.timer = this.clock.setTimeout(() => {
        this.timer = null;
        this.abort(timeoutError ? timeoutError(timeoutMs) : new TimeoutError(`${what} timed out after ${timeoutMs} ms`, timeoutMs));
      }, timeoutMs);
    }
  }

  /** Aborts when the wait is over; its reason is the typed error. Hand it to inner waits and operations. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /** The typed error this wait rejects with (undefined while it goes on). */
  get reason(): Error {
    return this.controller.signal.reason as Error;
  }

  /** Throws the reason if the wait is over. */
  check(): void {
    if (this.controller.signal.aborted) throw this.reason;
  }

  /** Ends the wait with `reason` (the first reason wins). Stops the timer and the listeners. */
  abort(reason: Error): void {
    if (this.controller.signal.aborted) return;
    this.release();
    this.controller.abort(reason);
  }

  /** Resolves when the scope aborts (never rejects). */
  get whenAborted(): Promise<void> {
    const s = this.controller.signal;
    if (s.aborted) return Promise.resolve();
    return new Promise((resolve) => s.addEventListener('abort', () => resolve(), { once: true }));
  }

  /** Settles as `task` does, or rejects with the reason once the wait is over, whichever comes first. */
  race<T>(task: PromiseLike<T>): Promise<T> {
    return raceSignal(task, this.controller.signal, this.what);
  }

  /**
   * Waits for a callback: `listen(resolve, reject)` registers it and returns its removal. Settles
   * with the first of the callback or the scope's end; then removes the callback and disposes the
   * scope (for a scope made for this one wait).
   */
  until<T>(listen: (resolve: (value: T) => void, reject: (err: Error) => void) => () => void): Promise<T> {
    const s = this.controller.signal;
    if (s.aborted) return Promise.reject(this.reason);
    return new Promise<T>((resolve, reject) => {
      let over = false;
      // Not const: `listen` may settle synchronously, and finish() then reads it before the assignment (a TDZ error).
      // eslint-disable-next-line prefer-const
      let unlisten: (() => void) | undefined;
      const finish = (): void => {
        over = true;
        unlisten?.();
        s.removeEventListener('abort', onAbort);
        this.release();
      };
      const onAbort = (): void => {
        finish();
        reject(this.reason);
      };
      s.addEventListener('abort', onAbort, { once: true });
      unlisten = listen(
        (v) => {
          if (over) return;
          finish();
          resolve(v);
        },
        (e) => {
          if (over) return;
          finish();
          reject(e);
        },
      );
      if (over) unlisten();
    });
  }

  /** Releases the timer and the listeners; the scope's signal stays as it is. */
  dispose(): void {
    this.release();
  }

  [Symbol.dispose](): void {
    this.release();
  }

  private release(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.userSignal?.removeEventListener('abort', this.onUserAbort);
    this.closed?.removeEventListener('abort', this.onClosed);
  }
}

/**
 * Settles as `task` does, or rejects with `signal`'s typed reason once it aborts: a scope's race
 * for a bare signal, with no controller or timer of its own (the per-request path of operations).
 */
export function raceSignal<T>(task: PromiseLike<T>, signal: AbortSignal, what?: string): Promise<T> {
  if (signal.aborted) return Promise.reject(typedReason(signal, what));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(typedReason(signal, what));
    signal.addEventListener('abort', onAbort, { once: true });
    task.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(asError(e));
      },
    );
  });
}

/**
 * A caller's abort as our typed error. Typed reasons pass through (a recipe hands its own scope's
 * signal to an inner wait), and AbortSignal.timeout()'s DOMException becomes our TimeoutError.
 */
export function typedReason(signal: AbortSignal, what?: string): Error {
  const r: unknown = signal.reason;
  if (r instanceof AbortError || r instanceof TimeoutError || r instanceof ClosedError) return r;
  if (r instanceof Error && r.name === 'TimeoutError') {
    const typed = new TimeoutError(what ? `${what} timed out` : 'the operation timed out');
    (typed as { cause?: unknown }).cause = r;
    return typed;
  }
  return new AbortError(what ? `${what} was aborted` : undefined, { cause: r });
}

const ELAPSED = new TimeoutError('elapsed');

/** Sleeps `ms` on `clock`; rejects with the typed reason when `signal` aborts first. */
export async function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 && !signal) return;
  const scope = new WaitScope('sleep', { timeoutMs: Math.max(0, ms), signal }, { clock, timeoutError: () => ELAPSED });
  await scope.whenAborted;
  if (scope.reason !== ELAPSED) throw scope.reason;
}

function closedReason(closed: AbortSignal): Error {
  const r: unknown = closed.reason;
  return r instanceof Error ? r : new ClosedError('client');
}
