/** Test harness: an embedded server with a short tick, and clients that are closed after each test. */
import type { Transport } from '@tenure/client';
import type { ConnectParams, ConnectionHandlers } from '@tenure/protocol';
import type { EmbeddedServer, EmbeddedServerOptions } from '@tenure/server';
import { startTestServer } from '@tenure/testing';

export function startServer(options: EmbeddedServerOptions = {}): EmbeddedServer {
  return startTestServer({ containerCheckIntervalMs: 50, ...options });
}

/** Clients opened by a test, closed by `closeAll`. */
export { TestClients as Clients } from '@tenure/testing';

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
