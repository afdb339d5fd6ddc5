/**
 * The one clock every timer of the client goes through. Tests and simulations can inject their own;
 * nothing else in the package reads the time or arms a timer directly.
 */
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
