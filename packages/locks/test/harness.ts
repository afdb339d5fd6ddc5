/** Test harness: an embedded server with a short tick, and clients that are closed after each test. */
import { createClient, RetryPolicies, type Client, type ClientOptions, type Transport } from '@tenure/client';
import type { ConnectParams, ConnectionHandlers } from '@tenure/protocol';
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

/** A watch event as a connection delivered it (server path). */
export interface SeenEvent {
  type: number;
  path: string;
}

/** Wraps a transport to record every watch event the server delivers on its connections. */
export function countingTransport(inner: Transport): Transport & { events: SeenEvent[] } {
  const events: SeenEvent[] = [];
  return {
    events,
    get hosts() {
      return inner.hosts;
    },
    connect(host: string, params: ConnectParams, handlers: ConnectionHandlers) {
      return inner.connect(host, params, {
        onClose: (reason) => handlers.onClose(reason),
        onEvent: (ev, zxid) => {
          events.push({ type: ev.type, path: ev.path });
          handlers.onEvent(ev, zxid);
        },
      });
    },
  };
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

/** Nodes under `path` that are ephemeral (lock and lease nodes). */
export function ephemeralsUnder(server: EmbeddedServer, path: string): string[] {
  return subtree(server, path).filter((p) => (server.node(p)?.stat.ephemeralOwner ?? 0n) !== 0n);
}
