/** Test harness: an embedded server with a short tick, clients closed after each test. */
import type { EmbeddedServer, EmbeddedServerOptions } from '@tenure/server';
import { startTestServer } from '@tenure/testing';
export { untilTree as whenTree } from '@tenure/testing';

export function startServer(options: EmbeddedServerOptions = {}): EmbeddedServer {
  return startTestServer({ containerCheckIntervalMs: 50, ...options });
}

/** Clients opened by a test, closed by `closeAll`. */
export { TestClients as Clients } from '@tenure/testing';

export { eventually, sleep } from '@tenure/testing';

/** Anything with on/off: a recipe, a client (eventemitter3 or Node's EventEmitter). */
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
  return anyEvent<Emitter, T>([emitter], event, predicate, options).then((hit) => hit.value);
}

/**
 * The first of `events` (a name or several) that any of `emitters` emits with a first argument
 * satisfying `predicate`: resolves with the emitter, the event and that argument, and removes
 * every listener it added. No polling; `timeoutMs` (real time) only bounds a test that would hang,
 * and `signal` gives the wait up (it rejects, with the signal's reason as the cause).
 */
export function anyEvent<E extends Emitter, T = unknown>(
  emitters: readonly E[],
  events: string | readonly string[],
  predicate: (value: T) => boolean = () => true,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<{ emitter: E; event: string; value: T }> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const names = typeof events === 'string' ? [events] : events;
  return new Promise((resolve, reject) => {
    const listeners: Array<[E, string, (...args: never[]) => void]> = [];
    const onAbort = (): void => {
      done();
      reject(new Error(`${names.join('/')}: the wait was given up`, { cause: options.signal!.reason }));
    };
    const done = (): void => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      for (const [emitter, event, fn] of listeners) emitter.off(event as never, fn as never);
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no ${names.join('/')} event within ${timeoutMs} ms`));
    }, timeoutMs);
    for (const emitter of emitters) {
      for (const event of names) {
        const fn = (value: T): void => {
          if (!predicate(value)) return;
          done();
          resolve({ emitter, event, value });
        };
        listeners.push([emitter, event, fn as (...args: never[]) => void]);
        emitter.on(event as never, fn as never);
      }
    }
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

/** Resolves when `signal` aborts (at once if it has). */
export function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}
