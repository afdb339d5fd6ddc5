/**
 * The one clock every timer of the client goes through. Tests and simulations can inject their own;
 * nothing else in the package reads the time or arms a timer directly.
 */
import { AbortError, TimeoutError } from '@tenure/protocol';

export type TimerHandle = unknown;

export interface Clock {
  /** Monotonic milliseconds (any origin). */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The process clock: `performance.now()` and the global timers. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, Math.max(0, ms)),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** The reason a signal aborted, as our typed AbortError. */
export function abortReason(signal: AbortSignal, what?: string): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof AbortError) return reason;
  if (reason instanceof TimeoutError) return reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    // AbortSignal.timeout() aborts with a DOMException: give callers our typed TimeoutError.
    const typed = new TimeoutError(what ? `${what} timed out` : 'the operation timed out');
    (typed as { cause?: unknown }).cause = reason;
    return typed;
  }
  return new AbortError(what ? `${what} was aborted` : undefined, { cause: reason });
}

/** Sleeps `ms` on `clock`; rejects with AbortError when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  if (ms <= 0 && !signal) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clock.clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
