/**
 * Waiting on the server's nodes without polling: a persistent recursive watch reports every change
 * under a path, and the condition is checked again at each one.
 */
import { TimeoutError, type Client } from '@tenure/client';

/**
 * Resolves once `done()` holds: checked now, then at every change under `path` that `observer`
 * hears through a persistent recursive watch (closed before this settles). For conditions on the
 * server's nodes (who owns a node, how many wait in a queue) that no recipe event announces. Use a
 * client the test does not inspect. `timeoutMs` (real time) only bounds a test that would hang.
 */
export async function untilTree(observer: Client, path: string, done: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  if (await done()) return;
  const watch = await observer.addWatch(path, { recursive: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    // Ends the iteration below; the finally's close is the one that reports a failure.
    watch.close().catch(() => undefined);
  }, timeoutMs);
  try {
    if (await done()) return;
    for await (const _event of watch) if (await done()) return;
    if (timedOut) throw new TimeoutError(`timed out after ${timeoutMs} ms waiting for a change under ${path}`, timeoutMs);
    throw new TimeoutError(`the watch on ${path} ended before the condition held`);
  } finally {
    clearTimeout(timer);
    await watch.close();
  }
}

/**
 * A round trip on each client (given one by one or as arrays): whatever each sent before (a create
 * racing a close, the watch removals a close sends without waiting) has been served.
 */
export async function roundTrip(...clients: Array<Client | readonly Client[]>): Promise<void> {
  await Promise.all(clients.flat().map((c) => c.sync('/')));
}
