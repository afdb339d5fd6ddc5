/** TreeCache and NodeCache on the embedded server, with persistent watches and with the one-shot fallback. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { ClosedError, ConnectionState, type Client } from '@tenure/client';
import { NodeCache, TreeCache, type CacheEvent } from '../src/index.js';
import { EventLog, ManualClock, nextEvent, settle } from '@tenure/testing';
import { connect, serverTree, serverWatches, startServer, treeDiff } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
const caches: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(caches.splice(0).map((c) => c.close()));
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function open(options: Parameters<typeof connect>[1] = {}) {
  const r = await connect(server, options);
  clients.push(r.client);
  return r;
}

function record(cache: TreeCache | NodeCache): EventLog<string> {
  const log = new EventLog<string>();
  cache.on('initialized', () => void log.push('initialized'));
  cache.on('created', (n) => void log.push(`created ${n.path} ${n.data.toString()}`));
  cache.on('changed', (n) => void log.push(`changed ${n.path} ${n.data.toString()}`));
  cache.on('deleted', (p) => void log.push(`deleted ${p.path}`));
  return log;
}

/** Takes `client` away for `ms` (longer than its session timeout: LOST), as a network partition. */
function partition(client: Client, ms: number): void {
  server.silence(client.sessionId, ms);
  server.dropConnection(client.sessionId);
}

describe.each([
  { name: 'persistent watches', persistentWatches: true },
  { name: 'one-shot watches (fallback)', persistentWatches: false },
])('TreeCache with $name', ({ persistentWatches }) => {
  it('loads an existing tree, then follows creates, changes and deletes', async () => {
    server = startServer();
    const { client } = await open();
    const { client: writer } = await open();
    await writer.create('/t', 'root');
    await writer.create('/t/a', 'A');
    await writer.create('/t/a/x', 'X');
    await writer.create('/t/b', 'B');
    const cache = new TreeCache(client, '/t', { persistentWatches });
    caches.push(cache);
    const log = record(cache);
    await cache.start({ timeoutMs: 3000 });
    expect(cache.watchMode).toBe(persistentWatches ? 'persistent' : 'one-shot');
    expect(log.at(-1)).toBe('initialized');
    expect(log.slice(0, -1).sort()).toEqual(['created /t root', 'created /t/a A', 'created /t/a/x X', 'created /t/b B']);
    expect(cache.get('/t/a/x')!.data.toString()).toBe('X');
    expect(cache.get('/t/a/x')!.stat).toEqual(server.node('/t/a/x')!.stat);
    expect(cache.children('/t')).toEqual(['a', 'b']);
    expect(cache.children('/nope')).toBeUndefined();
    log.length = 0;

    await writer.setData('/t/a', 'A2');
    await log.atLeast(1);
    await writer.create('/t/b/new', 'N');
    await log.atLeast(2);
    await writer.delete('/t/a', { deletingChildren: true });
    await log.atLeast(4);
    expect(log).toEqual(['changed /t/a A2', 'created /t/b/new N', 'deleted /t/a/x', 'deleted /t/a']);
    expect(cache.children('/t')).toEqual(['b']);
    expect(treeDiff(cache, serverTree(server, '/t'))).toEqual([]);
  });

  it('a missing root: empty and initialized; the root and its subtree appear and go', async () => {
    server = startServer();
    const { client } = await open();
    const { client: writer } = await open();
    const cache = new TreeCache(client, '/late', { persistentWatches });
    caches.push(cache);
    const log = record(cache);
    await cache.start({ timeoutMs: 3000 });
    expect(cache.size).toBe(0);
    await writer.create('/late', 'r');
    await writer.create('/late/k', 'k');
    await log.until((l) => l.includes('created /late r') && l.includes('created /late/k k'), { timeoutMs: 3000 });
    expect(cache.size).toBe(2);
    await writer.delete('/late', { deletingChildren: true });
    await log.until((l) => l.includes('deleted /late'), { timeoutMs: 3000 });
    expect(cache.size).toBe(0);
    await writer.create('/late', 'again');
    await log.until((l) => l.includes('created /late again'), { timeoutMs: 3000 });
    expect(cache.get('/late')?.data.toString()).toBe('again');
  });

  it('close removes its watches from the server; iterators end; start then close at once leaves none', async () => {
    server = startServer();
    const { client } = await open();
    const { client: writer } = await open();
    await writer.create('/c', null);
    for (let i = 0; i < 20; i++) await writer.create(`/c/n${i}`, 'v');
    const cache = new TreeCache(client, '/c', { persistentWatches });
    await cache.start({ timeoutMs: 3000 });
    expect(serverWatches(server, client)).toBeGreaterThan(0);
    const seen = new EventLog<CacheEvent>();
    const iterating = (async () => {
      for await (const e of cache) seen.push(e);
    })();
    await writer.setData('/c/n3', 'w');
    await seen.atLeast(1);
    await cache.close();
    await iterating; // ended by close
    expect(seen.map((e) => e.type)).toEqual(['changed']);
    expect(serverWatches(server, client)).toBe(0);
    expect(cache.size).toBe(0);

    for (let i = 0; i < 5; i++) {
      const quick = new TreeCache(client, '/c', { persistentWatches });
      const starting = quick.start().catch((e: unknown) => e);
      await quick.close();
      expect(await starting).toMatchObject({ name: 'ClosedError' });
    }
    await client.sync('/'); // answered after any watch request those closes sent
    expect(serverWatches(server, client)).toBe(0);
  });

  it('after LOST it re-syncs and emits only the real differences', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client } = await open({ clock });
    const { client: writer } = await open({ sessionTimeoutMs: 4000, clock });
    await writer.create('/r', null);
    for (let i = 0; i < 30; i++) await writer.create(`/r/n${i}`, `v${i}`);
    const cache = new TreeCache(client, '/r', { persistentWatches });
    caches.push(cache);
    await cache.start({ timeoutMs: 3000 });
    const log = record(cache);
    const T = client.negotiatedTimeoutMs;
    const R = Math.floor((T * 2) / 3); // the client's read timeout
    const lastAnswered = clock.now();
    await client.sync('/');
    partition(client, T + 600);
    // The drop is not heard through the silence: SUSPENDED at the read timeout, LOST at the deadline.
    await clock.advance(R);
    expect(client.state).toBe(ConnectionState.SUSPENDED);
    await writer.setData('/r/n1', 'changed');
    await writer.delete('/r/n2');
    await writer.create('/r/n99', 'new');
    await writer.delete('/r/n3');
    await writer.create('/r/n3', 'v3'); // same data, a new node: a real difference (czxid)
    await clock.advance(lastAnswered + T - 1 - clock.now());
    expect(client.state).toBe(ConnectionState.SUSPENDED);
    await clock.advance(1);
    expect(client.state).toBe(ConnectionState.LOST);
    await clock.advanceUntil(() => client.state === ConnectionState.RECONNECTED);
    await log.atLeast(4, { timeoutMs: 3000 });
    expect(treeDiff(cache, serverTree(server, '/r'))).toEqual([]);
    await clock.advance(100); // the re-sync has no end event: any fifth event would come within this

    expect(log.sort()).toEqual(['changed /r/n1 changed', 'changed /r/n3 v3', 'created /r/n99 new', 'deleted /r/n2']);
  });

  it('NodeCache follows one node through create, change, delete and session loss', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client } = await open({ clock });
    const { client: writer } = await open({ clock });
    const cache = new NodeCache(client, '/one', { persistentWatches });
    caches.push(cache);
    const log = record(cache);
    await cache.start({ timeoutMs: 3000 });
    expect(cache.current).toBeUndefined();
    await writer.create('/one', 'a');
    await log.until((l) => l.includes('created /one a'));
    expect(cache.current?.data.toString()).toBe('a');
    await writer.create('/one/child', 'ignored');
    await writer.setData('/one', 'b');
    await log.until((l) => l.includes('changed /one b'));
    expect(cache.current?.data.toString()).toBe('b');
    server.expireSession(client.sessionId);
    await clock.advanceUntil(() => client.state === ConnectionState.RECONNECTED, { stepMs: 1 });
    await writer.setData('/one', 'c');
    await log.until((l) => l.includes('changed /one c'));
    expect(cache.current?.data.toString()).toBe('c');
    await writer.delete('/one', { deletingChildren: true });
    await log.until((l) => l.includes('deleted /one'));
    expect(cache.current).toBeUndefined();
    expect(log).toEqual(['initialized', 'created /one a', 'changed /one b', 'changed /one c', 'deleted /one']);
    await cache.close();
    expect(serverWatches(server, client)).toBe(0);
  });

  it('maxDepth 1 caches the root and its children only', async () => {
    server = startServer();
    const { client } = await open();
    const { client: writer } = await open();
    await writer.create('/d', null);
    await writer.create('/d/a', 'a');
    await writer.create('/d/a/deep', 'x');
    const cache = new TreeCache(client, '/d', { persistentWatches, maxDepth: 1 });
    caches.push(cache);
    await cache.start({ timeoutMs: 3000 });
    expect([...cache.entries()].map(([p]) => p).sort()).toEqual(['/d', '/d/a']);
    const createdB = nextEvent<{ path: string }>(cache, 'created', (n) => n.path === '/d/b');
    await writer.create('/d/a/deeper', 'y');
    await writer.create('/d/b', 'b');
    await createdB;
    expect(cache.has('/d/b')).toBe(true);
    expect(cache.has('/d/a/deeper')).toBe(false);
  });
});

describe('TreeCache on a server without persistent watches (as ZooKeeper 3.5)', () => {
  it('falls back to one-shot watches by itself', async () => {
    server = startServer({ persistentWatches: false });
    const { client } = await open();
    const { client: writer } = await open();
    await writer.create('/old', 'x');
    const cache = new TreeCache(client, '/old');
    caches.push(cache);
    await cache.start({ timeoutMs: 5000 });
    expect(cache.watchMode).toBe('one-shot');
    const created = nextEvent<{ path: string }>(cache, 'created', (n) => n.path === '/old/k', { timeoutMs: 3000 });
    await writer.create('/old/k', 'k');
    await created; // seen through one-shot watches
    expect(cache.has('/old/k')).toBe(true);
    await cache.close();
    expect(serverWatches(server, client)).toBe(0);
  });
});

describe('TreeCache listeners', () => {
  it('a throwing listener is reported as an error and does not break the cache', async () => {
    server = startServer();
    const { client } = await open();
    const { client: writer } = await open();
    await writer.create('/boom', null);
    const cache = new TreeCache(client, '/boom');
    caches.push(cache);
    const errors: Error[] = [];
    cache.on('error', (e) => void errors.push(e));
    cache.on('created', (n) => {
      if (n.path === '/boom/a') throw new Error('listener bug');
    });
    await cache.start({ timeoutMs: 3000 });
    const createdB = nextEvent<{ path: string }>(cache, 'created', (n) => n.path === '/boom/b');
    await writer.create('/boom/a', 'x');
    await writer.create('/boom/b', 'y');
    await createdB;
    expect(cache.has('/boom/b')).toBe(true);
    expect(cache.get('/boom/a')?.data.toString()).toBe('x');
    expect(errors.map((e) => e.message)).toEqual(['listener bug']);
  });
});

describe('TreeCache and its client', () => {
  it('a client closed during the first load ends the wait with ClosedError', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client } = await open({ clock });
    await client.create('/cl', 'x');
    partition(client, 5000); // the load cannot finish
    const cache = new TreeCache(client, '/cl');
    caches.push(cache);
    const starting = cache.start({ timeoutMs: 60_000 });
    const outcome = expect(starting).rejects.toBeInstanceOf(ClosedError);
    await settle(); // the first reads are sent (and held by the partition)
    // close() waits at most the read timeout for closeSession's answer, which the partition holds.
    const R = Math.floor((client.negotiatedTimeoutMs * 2) / 3);
    let closed = false;
    const closing = client.close().then(() => (closed = true));
    await clock.advance(R - 1);
    expect(closed).toBe(false);
    await clock.advance(1);
    expect(closed).toBe(true);
    await closing;
    await outcome;
    await settle();
    expect(cache.initialized).toBe(false); // failed reads are no load
  });
});
