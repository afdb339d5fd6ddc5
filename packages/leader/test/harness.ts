/** Test harness: an embedded server with a short tick, clients closed after each test, polling. */
import type { EmbeddedServer, EmbeddedServerOptions } from '@tenure/server';
import { startTestServer } from '@tenure/testing';

export function startServer(options: EmbeddedServerOptions = {}): EmbeddedServer {
  return startTestServer({ containerCheckIntervalMs: 50, ...options });
}

/** Clients opened by a test, closed by `closeAll`. */
export { TestClients as Clients } from '@tenure/testing';

export { eventually, sleep } from '@tenure/testing';
/** Every node under `path` on an embedded server (full paths, depth first). */
export function subtree(server: EmbeddedServer, path: string): string[] {
  const n = server.node(path);
  if (!n) return [];
  const out: string[] = [];
  for (const c of [...n.children].sort()) {
    const p = path === '/' ? `/${c}` : `${path}/${c}`;
    out.push(p, ...subtree(server, p));
  }
  return out;
}

/** Watches the server holds, over all sessions. */
export function totalWatches(server: EmbeddedServer): number {
  let n = 0;
  for (const c of server.watchCounts().values()) n += c;
  return n;
}
