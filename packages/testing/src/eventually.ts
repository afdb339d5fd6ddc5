/** Polling helpers for tests: behaviour is awaited, never assumed after a fixed sleep. */
import { TimeoutError } from '@tenure/protocol';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns truthy (or throws after `timeoutMs`, naming `what` and the last error). */
export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 5000, what = 'condition'): Promise<NonNullable<T>> {
  const until = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (performance.now() > until) throw new TimeoutError(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(15);
  }
}
