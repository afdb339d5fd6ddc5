/** Test harness: an embedded server, clients closed after each test, and a transport that loses replies on cue. */
import { OpCode, type Connection, type ConnectionHandlers, type ConnectParams, type Transport } from '@tenure/protocol';
import type { EmbeddedServer } from '@tenure/server';
import { nextEvent as testingNextEvent } from '@tenure/testing';
export { untilTree as whenTree } from '@tenure/testing';

export { startTestServer as startServer, TestClients as Clients, eventually, sleep } from '@tenure/testing';

/** Watches the server holds, over all sessions. */
export function totalWatches(server: EmbeddedServer): number {
  let n = 0;
  for (const c of server.watchCounts().values()) n += c;
  return n;
}

export type SetDataFault = 'lose-reply' | 'drop-before';

/**
 * The embedded server's transport, with a fault armed for the next setData of this client:
 * `lose-reply` applies it and drops the connection before the reply (server.loseNextReply);
 * `drop-before` drops the connection before the request reaches the server.
 */
export function faultyTransport(server: EmbeddedServer): Transport & { arm(fault: SetDataFault): void } {
  const inner = server.transport();
  let armed: SetDataFault | null = null;
  const wrap = (conn: Connection): Connection =>
    new Proxy(conn, {
      get(target, key) {
        if (key === 'send') {
          return (req: { type: number }, onReply?: unknown) => {
            const fault = req.type === OpCode.setData ? armed : null;
            if (fault !== null) armed = null;
            if (fault === 'lose-reply') server.loseNextReply(target.sessionId);
            if (fault === 'drop-before') server.dropConnection(target.sessionId);
            return (target.send as (r: unknown, h?: unknown) => Promise<unknown>)(req, onReply);
          };
        }
        const v: unknown = Reflect.get(target, key);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  return {
    get hosts() {
      return inner.hosts;
    },
    async connect(host: string, params: ConnectParams, handlers: ConnectionHandlers) {
      const r = await inner.connect(host, params, handlers);
      return r.kind === 'connected' ? { ...r, connection: wrap(r.connection) } : r;
    },
    arm(fault: SetDataFault) {
      armed = fault;
    },
  };
}

/** @tenure/testing's nextEvent with a longer default bound (10 s), as these suites also run on real ZooKeeper. */
export const nextEvent = <T = unknown>(
  emitter: Parameters<typeof testingNextEvent>[0],
  event: string,
  predicate?: (value: T) => boolean,
  options: { timeoutMs?: number } = {},
): Promise<T> => testingNextEvent<T>(emitter, event, predicate, { timeoutMs: 10_000, ...options });

/** Resolves once the handle's cached count is `n`: at once, or at the change event that makes it so. */
export async function whenCount(
  count: { readonly count: number } & Parameters<typeof testingNextEvent>[0],
  n: number,
  timeoutMs = 10_000,
): Promise<void> {
  if (count.count !== n) await nextEvent<{ value: number }>(count, 'change', (v) => v.value === n, { timeoutMs });
}
