/**
 * Waiting for a node's children to reach a state by following its child watch, not by polling:
 * each read sets the watch, and the next read happens only when the watch fires.
 */
import { NoNodeError, TimeoutError, WatcherType, type Client } from '@tenure/client';

export interface ChildrenUntilOptions {
  /** Real milliseconds before rejecting with the last listing seen (default 10,000). */
  timeoutMs?: number;
}

/**
 * Resolves with `path`'s children once `predicate` holds for them (a missing node counts as no
 * children; its exists watch is followed until it appears).
 */
export async function childrenUntil(
  client: Client,
  path: string,
  predicate: (children: string[]) => boolean,
  options: ChildrenUntilOptions = {},
): Promise<string[]> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  let last: string[] | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new TimeoutError(`timed out after ${timeoutMs} ms waiting for the children of ${path}; last seen: ${JSON.stringify(last)}`)),
      timeoutMs,
    );
  });
  expired.catch(() => {});
  let watch: (() => void) | undefined;
  try {
    for (;;) {
      let fired!: () => void;
      const changed = new Promise<void>((resolve) => (fired = resolve));
      watch = (): void => fired();
      try {
        last = (await Promise.race([client.getChildren(path, { watch }), expired])).children.sort();
      } catch (err) {
        if (!(err instanceof NoNodeError)) throw err;
        last = [];
        if (predicate(last)) return last;
        // Gone: wait for it to come back (or for the exists reply to say it already has).
        if ((await Promise.race([client.exists(path, { watch }), expired])) !== null) continue;
        await Promise.race([changed, expired]);
        continue;
      }
      if (predicate(last)) return last;
      await Promise.race([changed, expired]);
    }
  } finally {
    clearTimeout(timer);
    // The last watch has not fired: take it back, so the caller's client holds nothing of ours.
    if (watch !== undefined && !client.closed)
      await client.removeWatches(path, WatcherType.Any, { watcher: watch, quietly: true }).catch(() => {});
  }
}
