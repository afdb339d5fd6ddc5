/**
 * A later turn of the event loop, after the I/O already pending: `setImmediate` in Node, and
 * `setTimeout(0)` where there is none (browsers), so the locks run in both. Looked up on
 * globalThis at each call (fake timers in tests replace it).
 */
export function nextTurn(fn: () => void): void {
  const immediate = (globalThis as { setImmediate?: (fn: () => void) => unknown }).setImmediate;
  if (typeof immediate === 'function') immediate(fn);
  else setTimeout(fn, 0);
}
