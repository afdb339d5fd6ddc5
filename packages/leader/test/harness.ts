/** Test harness: an embedded server with a short tick, clients closed after each test, polling. */
import { createClient, RetryPolicies, type Client, type ClientOptions, type Transport } from '@tenure/client';
import { createEmbeddedServer, type EmbeddedServer, type EmbeddedServerOptions } from '@tenure/server';

export function startServer(options: EmbeddedServerOptions = {}): EmbeddedServer {
  return createEmbeddedServer({ tickMs: 100, containerCheckIntervalMs: 50, ...options });
}

/** Clients opened by a test, closed by `closeAll`. */
export class Clients {
  readonly all: Client[] = [];

  constructor(private readonly transport: () => Transport) {}

  async open(options: Partial<ClientOptions> = {}): Promise<Client> {
    const client = createClient({
      transport: this.transport(),
      sessionTimeoutMs: 1500,
      connectionTimeoutMs: 3000,
      retryPolicy: RetryPolicies.exponentialBackoff(20, 10, 200),
      ...options,
    });
    this.all.push(client);
    await client.start();
    return client;
  }

  async openMany(n: number, options: Partial<ClientOptions> = {}): Promise<Client[]> {
    return Promise.all(Array.from({ length: n }, () => this.open(options)));
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.all.splice(0).map((c) => c.close()));
  }
}

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
