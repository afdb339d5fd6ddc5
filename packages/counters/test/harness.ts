/** Test harness: an embedded server, clients closed after each test, and a transport that loses replies on cue. */
import { OpCode, type Connection, type ConnectionHandlers, type ConnectParams, type Transport } from '@tenure/protocol';
import type { Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';

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

/** Anything with on/off (eventemitter3 or Node's EventEmitter). */
export interface Emitter {
  // Method syntax with `never`: any typed on/off (eventemitter3's generic ones included) fits.
  on(event: never, fn: never): unknown;
  off(event: never, fn: never): unknown;
}

/**
 * The next `event` of `emitter` whose first argument satisfies `predicate` (any, when omitted):
 * resolves with that argument. No polling; `timeoutMs` (real time) only bounds a test that would hang.
 */
export function nextEvent<T = unknown>(
  emitter: Emitter,
  event: string,
  predicate: (value: T) => boolean = () => true,
  options: { timeoutMs?: number } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise<T>((resolve, reject) => {
    const listener = (value: T): void => {
      if (!predicate(value)) return;
      done();
      resolve(value);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no '${event}' event within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = (): void => {
      clearTimeout(timer);
      emitter.off(event as never, listener as never);
    };
    emitter.on(event as never, listener as never);
  });
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

/** Resolves once the handle's cached count is `n`: at once, or at the change event that makes it so. */
export async function whenCount(count: { readonly count: number } & Emitter, n: number, timeoutMs = 10_000): Promise<void> {
  if (count.count !== n) await nextEvent<{ value: number }>(count, 'change', (v) => v.value === n, { timeoutMs });
}
