/**
 * The one clock every timer of the client, the server and the recipes goes through. Tests inject a
 * manual one (`ManualClock` in @tenure/testing); nothing else reads the time or arms a timer directly.
 */
/** What a clock's setTimeout returns (a Node Timeout, a browser's number, a manual timer): never nullish, so `| null` means "none". */
export type TimerHandle = NonNullable<unknown>;

export interface Clock {
  /** Monotonic milliseconds (any origin). */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Ignores a handle that is undefined or already fired. */
  clearTimeout(handle: TimerHandle | undefined): void;
}

/** The process clock: `performance.now()` and the global timers. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, Math.max(0, ms)),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Lets the process exit while this timer is armed (a Node timer's `unref()`; a no-op for other handles). */
export function unrefTimer(handle: TimerHandle): TimerHandle {
  (handle as { unref?: () => void } | undefined)?.unref?.();
  return handle;
}
