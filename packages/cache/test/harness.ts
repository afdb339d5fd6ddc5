/** Test harness: an embedded server with a small tick, clients that record their states, polling. */
import { createEmbeddedServer, type EmbeddedServer, type EmbeddedServerOptions } from '@tenure/server';
import { createClient, RetryPolicies, type Client, type ClientOptions, type ConnectionState } from '@tenure/client';

export const TICK_MS = 100;

export function startServer(options: EmbeddedServerOptions = {}): EmbeddedServer {
  return createEmbeddedServer({ tickMs: TICK_MS, containerCheckIntervalMs: 100, ...options });
}

export interface Recorded {
  client: Client;
  states: ConnectionState[];
}

/** A started client on `server` (or on `connectString`) whose state events are recorded. */
export async function connect(target: EmbeddedServer | string, options: Partial<ClientOptions> = {}): Promise<Recorded> {
  const client = createClient({
    ...(typeof target === 'string' ? { connectString: target } : { transport: target.transport() }),
    sessionTimeoutMs: 1000,
    connectionTimeoutMs: 3000,
    retryPolicy: RetryPolicies.exponentialBackoff(20, 10, 200),
    ...options,
  });
  const states: ConnectionState[] = [];
  client.on('stateChanged', (s) => void states.push(s));
  await client.start();
  return { client, states };
}

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
