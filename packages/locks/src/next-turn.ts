/**
 * A later turn of the event loop, after the I/O already pending: `setImmediate` in Node, and
 * `setTimeout(0)` where there is none (browsers), so the locks run in both.
 */
export const nextTurn: (fn: () => void) => void =
  typeof setImmediate === 'function' ? (fn) => void setImmediate(fn) : (fn) => void setTimeout(fn, 0);
