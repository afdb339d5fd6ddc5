/** Test harness: an embedded server with a short tick, clients closed after each test, and what a barrier left behind. */
import type { EmbeddedServer } from '@tenure/server';
import { startTestServer } from '@tenure/testing';
export { untilTree as whenTree, roundTrip } from '@tenure/testing';

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
