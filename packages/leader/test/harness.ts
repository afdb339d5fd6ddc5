/** Test harness: an embedded server with a short tick, clients closed after each test, polling. */
import type { Client } from '@tenure/client';
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

/** Resolves when `signal` aborts (at once if it has). */
export function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
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
