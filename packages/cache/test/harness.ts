/** Test harness: an embedded server with a small tick, clients that record their states, polling. */
import type { EmbeddedServer, EmbeddedServerOptions } from '@tenure/server';
import type { Client } from '@tenure/client';
import { connectRecording, startTestServer, type RecordedClient } from '@tenure/testing';

export const TICK_MS = 100;

export const startServer = (options: EmbeddedServerOptions = {}): EmbeddedServer => startTestServer({ tickMs: TICK_MS, ...options });

export type Recorded = RecordedClient;

/** A started client on `server` (or on `connectString`) whose state events are recorded. */
export const connect = connectRecording;

export { eventually, sleep } from '@tenure/testing';
/** Watch entries the server holds for the client's session (0 when none). */
export function serverWatches(server: EmbeddedServer, client: Client): number {
  return server.watchCounts().get(client.sessionId) ?? 0;
}

/** The server's subtree at `root`: path → data and mzxid (read from the embedded server itself). */
export function serverTree(server: EmbeddedServer, root: string): Map<string, { data: string; mzxid: bigint }> {
  const out = new Map<string, { data: string; mzxid: bigint }>();
  const walk = (path: string): void => {
    const n = server.node(path);
    if (!n) return;
    out.set(path, { data: n.data?.toString() ?? '', mzxid: n.stat.mzxid });
    for (const c of n.children) walk(path === '/' ? `/${c}` : `${path}/${c}`);
  };
  walk(root);
  return out;
}

/** The differences between a cache's content and a tree (empty when they agree). */
export function treeDiff(
  cache: { entries(): IterableIterator<[string, { data: Buffer; stat: { mzxid: bigint } }]> },
  tree: Map<string, { data: string; mzxid: bigint }>,
): string[] {
  const diff: string[] = [];
  const seen = new Set<string>();
  for (const [path, node] of cache.entries()) {
    seen.add(path);
    const t = tree.get(path);
    if (!t) diff.push(`extra ${path}`);
    else if (t.mzxid !== node.stat.mzxid || t.data !== node.data.toString()) diff.push(`stale ${path}`);
  }
  for (const path of tree.keys()) if (!seen.has(path)) diff.push(`missing ${path}`);
  return diff;
}
