/** Test harness: an embedded server with a short tick, clients closed after each test, and what a barrier left behind. */
import type { Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { startTestServer } from '@tenure/testing';

export function startServer(): EmbeddedServer {
  return startTestServer({ containerCheckIntervalMs: 50 });
}

export { TestClients as Clients, eventually, sleep } from '@tenure/testing';

/** The children of `path` on an embedded server, sorted ([] when it does not exist). */
export function childrenOf(server: EmbeddedServer, path: string): string[] {
  return [...(server.node(path)?.children ?? [])].sort();
}

/** Watches the server holds, over all sessions. */
export function totalWatches(server: EmbeddedServer): number {
  let n = 0;
  for (const c of server.watchCounts().values()) n += c;
  return n;
}

/** Whether `p` settles within `ms` (without consuming its outcome for the caller). */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setTimeout(r, ms));
  return settled;
}

/**
 * Resolves once `predicate()` holds: checked now, then at each change under `path` that
 * `observer` hears through a persistent recursive watch (removed before this resolves). No
 * polling: the server's own notifications drive it. Use a client the test does not inspect.
 */
export async function whenTree(observer: Client, path: string, predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  if (predicate()) return;
  let hit!: () => void;
  const changed = new Promise<void>((resolve) => (hit = resolve));
  const watch = await observer.addWatch(path, { recursive: true, listener: () => predicate() && hit() });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    if (predicate()) return;
    await Promise.race([
      changed,
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`whenTree ${path}: not within ${timeoutMs} ms`)), timeoutMs)),
      ),
    ]);
  } finally {
    clearTimeout(timer);
    await watch.close();
  }
}

/**
 * A round trip on every client: each comes back after the requests its client sent before (watch
 * removals a close or a timeout sends without waiting for them), so the server has handled those.
 */
export async function roundTrip(clients: readonly Client[]): Promise<void> {
  await Promise.all(clients.map((c) => c.sync('/')));
}
