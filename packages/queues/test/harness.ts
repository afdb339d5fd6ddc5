/** Test harness: an embedded server, clients closed after each test, and a transport that counts requests. */
import type { Transport } from '@tenure/client';
import type { Connection, ConnectParams, ConnectionHandlers, Request } from '@tenure/protocol';
import type { EmbeddedServer } from '@tenure/server';

export { startTestServer, TestClients, eventually, sleep } from '@tenure/testing';

/** Every node under `path` (full paths, depth first). */
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

export const noWatches = (server: EmbeddedServer): boolean => server.sessions().every((s) => s.watches === 0);

/** What a counting transport saw: requests by op type, and the child names getChildren returned. */
export interface RequestCounts {
  byType: Map<number, number>;
  childNamesRead: number;
  total(): number;
  reset(): void;
}

/** Wraps a transport to count every request sent on its connections (counting, not mocking: requests still go to the server). */
export function countingTransport(inner: Transport): Transport & { counts: RequestCounts } {
  const counts: RequestCounts = {
    byType: new Map(),
    childNamesRead: 0,
    total: () => [...counts.byType.values()].reduce((a, b) => a + b, 0),
    reset: () => {
      counts.byType.clear();
      counts.childNamesRead = 0;
    },
  };
  return {
    counts,
    get hosts() {
      return inner.hosts;
    },
    async connect(host: string, params: ConnectParams, handlers: ConnectionHandlers) {
      const result = await inner.connect(host, params, handlers);
      if (result.kind !== 'connected') return result;
      const conn = result.connection;
      const counted: Connection = {
        get sessionId() {
          return conn.sessionId;
        },
        get passwd() {
          return conn.passwd;
        },
        get negotiatedTimeoutMs() {
          return conn.negotiatedTimeoutMs;
        },
        get readOnly() {
          return conn.readOnly;
        },
        get server() {
          return conn.server;
        },
        get closed() {
          return conn.closed;
        },
        close: () => conn.close(),
        send: ((request: Request, onReply?: (reply: never) => void) => {
          counts.byType.set(request.type, (counts.byType.get(request.type) ?? 0) + 1);
          return conn.send(request, onReply as never).then((reply) => {
            const children = (reply.response as { children?: string[] } | undefined)?.children;
            if (children) counts.childNamesRead += children.length;
            return reply;
          });
        }) as Connection['send'],
      };
      return { kind: 'connected', connection: counted };
    },
  };
}
