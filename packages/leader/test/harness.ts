/** Test harness: an embedded server with a short tick, clients closed after each test, polling. */
import type { EmbeddedServer, EmbeddedServerOptions } from '@tenure/server';
import { startTestServer } from '@tenure/testing';

export function startServer(options: EmbeddedServerOptions = {}): EmbeddedServer {
  return startTestServer({ containerCheckIntervalMs: 50, ...options });
}

/** Clients opened by a test, closed by `closeAll`. */
export { TestClients as Clients } from '@tenure/testing';

export { eventually, sleep } from '@tenure/testing';

/** Anything with on/off: a recipe, a client (eventemitter3 or Node's EventEmitter). */
export interface Emitter {
  on(event: string, fn: (...args: never[]) => void): unknown;
  off(event: string, fn: (...args: never[]) => void): unknown;
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
      emitter.off(event, listener as (...args: never[]) => void);
    };
    emitter.on(event, listener as (...args: never[]) => void);
  });
}
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
