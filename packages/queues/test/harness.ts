/** Test harness: an embedded server, clients closed after each test, and a transport that counts requests. */
import { EventEmitter } from 'node:events';
import { NoNodeError, type Client, type Transport } from '@tenure/client';
import type { Request } from '@tenure/protocol';
import type { EmbeddedServer } from '@tenure/server';
import { nextEvent, tapTransport } from '@tenure/testing';
export { roundTrip } from '@tenure/testing';

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
  /** 'reply' (request) once the server answered it: await the exchange behind a check with nextEvent. */
  replies: EventEmitter<{ reply: [Request] }>;
  byType: Map<number, number>;
  childNamesRead: number;
  total(): number;
  reset(): void;
}

/** Wraps a transport to count every request sent on its connections (counting, not mocking: requests still go to the server). */
export function countingTransport(inner: Transport): Transport & { counts: RequestCounts } {
  const counts: RequestCounts = {
    replies: new EventEmitter(),
    byType: new Map(),
    childNamesRead: 0,
    total: () => [...counts.byType.values()].reduce((a, b) => a + b, 0),
    reset: () => {
      counts.byType.clear();
      counts.childNamesRead = 0;
    },
  };
  const transport = tapTransport(inner, {
    request: (request) => counts.byType.set(request.type, (counts.byType.get(request.type) ?? 0) + 1),
    reply: (request, reply) => {
      const children = (reply.response as { children?: string[] } | undefined)?.children;
      if (children) counts.childNamesRead += children.length;
      counts.replies.emit('reply', request);
    },
  });
  return Object.assign(transport, { counts });
}

/** What a consumer took, in order; `until(n)` resolves when the n-th is in (the consumer's call is the event). */
export class Taken<T> {
  readonly items: T[] = [];
  private readonly took = new EventEmitter<{ took: [] }>();

  push(item: T): void {
    this.items.push(item);
    this.took.emit('took');
  }

  get length(): number {
    return this.items.length;
  }

  until(n: number, timeoutMs = 5000): Promise<void> {
    if (this.items.length >= n) return Promise.resolve();
    return nextEvent(this.took, 'took', () => this.items.length >= n, { timeoutMs });
  }
}

/** Resolves when the node at `path` is gone, seen through a getData watch of `client` (none is left when it is gone already). */
export async function gone(client: Client, path: string): Promise<void> {
  let deleted!: () => void;
  const event = new Promise<void>((resolve) => (deleted = resolve));
  try {
    await client.getData(path, { watch: (ev) => ev.type === 'NodeDeleted' && deleted() });
  } catch (err) {
    if (err instanceof NoNodeError) return;
    throw err;
  }
  await event;
}

/**
 * Resolves once `done()` holds, checked now and again at every change under `path` that a
 * persistent recursive watch of `observer` reports (closed after): for conditions on the server's
 * nodes that no recipe event announces.
 */
export async function untilChangedUnder(observer: Client, path: string, done: () => boolean, timeoutMs = 5000): Promise<void> {
  const watch = await observer.addWatch(path, { recursive: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void watch.close();
  }, timeoutMs);
  try {
    if (done()) return;
    for await (const _event of watch) if (done()) return;
    throw new Error(timedOut ? `timed out after ${timeoutMs} ms waiting for a change under ${path}` : `the watch on ${path} ended`);
  } finally {
    clearTimeout(timer);
    await watch.close();
  }
}
