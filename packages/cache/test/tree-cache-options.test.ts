/**
 * TreeCache's options beyond the mirror: `cacheData: false` (Stats only), a selector (which paths
 * are descended into, which children cached, whose data kept; nothing is watched below a path it
 * refuses), and `decompressed` for nodes written compressed (TreeCache and NodeCache), with a
 * node that does not decompress reported as a typed error while the rest of the tree loads.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { DecompressionError, gzip, type Client } from '@tenure/client';
import { EventLog } from '@tenure/testing';
import { NodeCache, TreeCache, type TreeCacheSelector } from '../src/index.js';
import { connect, serverTree, startServer } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
const caches: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(caches.splice(0).map((c) => c.close()));
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function open(options: Parameters<typeof connect>[1] = {}): Promise<Client> {
  const r = await connect(server, options);
  clients.push(r.client);
  return r.client;
}

function record(cache: TreeCache | NodeCache): EventLog<string> {
  const log = new EventLog<string>();
  cache.on('initialized', () => void log.push('initialized'));
  cache.on('created', (n) => void log.push(`created ${n.path} ${n.data.toString()}`));
  cache.on('changed', (n) => void log.push(`changed ${n.path} ${n.data.toString()}`));
  cache.on('deleted', (p) => void log.push(`deleted ${p.path}`));
  cache.on('error', (e) => void log.push(`error ${(e as { code?: string }).code} ${(e as { path?: string }).path}`));
  return log;
}

/** Every path the server watches for `client`'s session, data (and exists) and child watches. */
function watched(client: Client): { data: string[]; child: string[] } {
  const w = server.watchesOf(client.sessionId);
  return { data: [...w.data].sort(), child: [...w.child].sort() };
}

async function writeTree(writer: Client, nodes: Record<string, string>): Promise<void> {
  for (const [path, data] of Object.entries(nodes)) await writer.create(path, data);
}

const TREE = {
  '/s': 'root',
  '/s/keep': 'K',
  '/s/keep/a': 'A',
  '/s/keep/b': 'B',
  '/s/skip': 'S',
  '/s/skip/x': 'X',
  '/s/leaf': 'L',
  '/s/leaf/deep': 'D',
};
/** Descend everywhere but /s/leaf; cache nothing under /s/skip; keep no data of /s/keep/b. */
const selector: TreeCacheSelector = {
  traverseChildren: (p) => p !== '/s/leaf',
  acceptChild: (p) => !p.startsWith('/s/skip'),
  keepData: (p) => p !== '/s/keep/b',
};

describe.each([true, false])('TreeCache cacheData: false (persistentWatches %s)', (persistentWatches) => {
  it('keeps every Stat and no data; changes are still events', async () => {
    server = startServer();
    const writer = await open();
    await writeTree(writer, { '/d': 'root', '/d/a': 'A'.repeat(1000), '/d/a/x': 'X' });
    const cache = new TreeCache(await open(), '/d', { cacheData: false, persistentWatches });
    caches.push(cache);
    const log = record(cache);
    await cache.start({ timeoutMs: 3000 });
    expect([...cache.entries()].map(([p]) => p).sort()).toEqual(['/d', '/d/a', '/d/a/x']);
    for (const [path, node] of cache.entries()) {
      expect(node.data.length).toBe(0);
      expect(node.stat).toEqual(server.node(path)!.stat);
    }
    await writer.setData('/d/a', 'changed');
    await log.until((l) => l.includes('changed /d/a '));
    expect(cache.get('/d/a')!.stat.version).toBe(1);
  });
});

describe('TreeCache selector', () => {
  it('one-shot watches by default: refused paths are neither cached nor watched; kept data as selected', async () => {
    server = startServer();
    const writer = await open();
    await writeTree(writer, TREE);
    const client = await open();
    const cache = new TreeCache(client, '/s', { selector });
    caches.push(cache);
    const log = record(cache);
    await cache.start({ timeoutMs: 3000 });
    expect(cache.watchMode).toBe('one-shot');
    expect([...cache.entries()].map(([p]) => p).sort()).toEqual(['/s', '/s/keep', '/s/keep/a', '/s/keep/b', '/s/leaf']);
    expect(cache.get('/s/keep/a')!.data.toString()).toBe('A');
    expect(cache.get('/s/keep/b')!.data.length).toBe(0);
    expect(cache.get('/s/keep/b')!.stat).toEqual(server.node('/s/keep/b')!.stat);
    expect(cache.children('/s/leaf')).toEqual([]);
    const expected = { data: ['/s', '/s/keep', '/s/keep/a', '/s/keep/b', '/s/leaf'], child: ['/s', '/s/keep', '/s/keep/a', '/s/keep/b'] };
    expect(watched(client)).toEqual(expected);

    // Changes below refused paths reach nobody; one in the selected part does.
    await writer.create('/s/skip/y', 'Y');
    await writer.setData('/s/skip', 'S2');
    await writer.create('/s/leaf/deep2', 'D2');
    await writer.setData('/s/leaf/deep', 'D3');
    await writer.create('/s/keep/c', 'C');
    await log.until((l) => l.includes('created /s/keep/c C'));
    await client.sync('/');
    expect(log.filter((e) => e.includes('skip') || e.includes('deep'))).toEqual([]);
    expect(watched(client)).toEqual({ data: [...expected.data, '/s/keep/c'].sort(), child: [...expected.child, '/s/keep/c'].sort() });
    await writer.setData('/s/leaf', 'L2');
    await log.until((l) => l.includes('changed /s/leaf L2'));
  });

  it('with persistentWatches: true, one recursive watch; events under refused paths are dropped', async () => {
    server = startServer();
    const writer = await open();
    await writeTree(writer, TREE);
    const cache = new TreeCache(await open(), '/s', { selector, persistentWatches: true });
    caches.push(cache);
    const log = record(cache);
    await cache.start({ timeoutMs: 3000 });
    expect(cache.watchMode).toBe('persistent');
    expect([...cache.entries()].map(([p]) => p).sort()).toEqual(['/s', '/s/keep', '/s/keep/a', '/s/keep/b', '/s/leaf']);
    await writer.create('/s/skip/y', 'Y');
    await writer.create('/s/leaf/deep2', 'D2');
    await writer.create('/s/keep/c', 'C');
    await log.until((l) => l.includes('created /s/keep/c C'));
    expect(log.filter((e) => e.includes('skip') || e.includes('deep'))).toEqual([]);
    expect(cache.has('/s/skip/y') || cache.has('/s/leaf/deep2')).toBe(false);
  });

  it('a selector that refuses the root’s children caches the root alone', async () => {
    server = startServer();
    const writer = await open();
    await writeTree(writer, TREE);
    const client = await open();
    const cache = new TreeCache(client, '/s', { selector: { traverseChildren: () => false } });
    caches.push(cache);
    await cache.start({ timeoutMs: 3000 });
    expect([...cache.entries()].map(([p]) => p)).toEqual(['/s']);
    expect(watched(client)).toEqual({ data: ['/s'], child: [] });
  });
});

describe('decompressed', () => {
  it('TreeCache reads compressed nodes as their data; one that does not decompress is a typed error and the rest loads', async () => {
    server = startServer();
    const writer = await open();
    await writer.create('/z', null);
    await writer.create('/z/a', 'alpha', { compressed: true });
    await writer.create('/z/b', 'not compressed');
    await writer.create('/z/a/x', 'x-ray', { compressed: true });
    const cache = new TreeCache(await open(), '/z', { decompressed: true });
    caches.push(cache);
    const log = record(cache);
    const errors: unknown[] = [];
    cache.on('error', (e) => void errors.push(e));
    await cache.start({ timeoutMs: 3000 });
    expect(cache.get('/z/a')!.data.toString()).toBe('alpha');
    expect(cache.get('/z/a/x')!.data.toString()).toBe('x-ray');
    expect(cache.get('/z')!.data.length).toBe(0); // no data: nothing to decompress
    expect(cache.has('/z/b')).toBe(false);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(DecompressionError);
    expect(errors[0]).toMatchObject({ code: 'BAD_COMPRESSED_DATA', path: '/z/b' });
    // Once the node holds compressed data it is read again (its watch was set) and cached.
    await writer.setData('/z/b', 'beta', { compressed: true });
    await log.until((l) => l.includes('created /z/b beta'));
    await writer.setData('/z/a', 'alpha 2', { compressed: true });
    await log.until((l) => l.includes('changed /z/a alpha 2'));
    expect(serverTree(server, '/z').get('/z/a')!.data).not.toBe('alpha 2'); // the server holds gzip
  });

  it('NodeCache decompressed; and a client with compression byDefault decompresses in caches unless decompressed: false', async () => {
    server = startServer();
    const writer = await open();
    await writer.create('/n', 'one', { compressed: true });
    const node = new NodeCache(await open(), '/n', { decompressed: true });
    caches.push(node);
    await node.start({ timeoutMs: 3000 });
    expect(node.current!.data.toString()).toBe('one');

    const byDefault = await open({ compression: { provider: gzip(), byDefault: true } });
    const cache = new TreeCache(byDefault, '/n');
    const raw = new TreeCache(byDefault, '/n', { decompressed: false });
    caches.push(cache, raw);
    await Promise.all([cache.start({ timeoutMs: 3000 }), raw.start({ timeoutMs: 3000 })]);
    expect(cache.get('/n')!.data.toString()).toBe('one');
    expect(raw.get('/n')!.data[0]).toBe(0x1f);
  });
});

describe('CachedTree: the selector decides scope with no I/O', () => {
  it('inScope asks traverseChildren of every ancestor and acceptChild of every node on the way; maxDepth still bounds it', async () => {
    const { CachedTree } = await import('../src/cached-tree.js');
    const asked: string[] = [];
    const tree = new CachedTree('/r', 2, {
      selector: {
        traverseChildren: (p) => (asked.push(`t ${p}`), p !== '/r/no-kids'),
        acceptChild: (p) => (asked.push(`a ${p}`), !p.endsWith('/refused')),
      },
      cacheData: false,
    });
    expect(tree.inScope('/r/a/b')).toBe(true);
    expect(asked).toEqual(['t /r', 'a /r/a', 't /r/a', 'a /r/a/b']);
    expect(tree.inScope('/r')).toBe(true);
    expect(tree.inScope('/r/a/b/c')).toBe(false); // below maxDepth
    expect(tree.inScope('/r/refused/x')).toBe(false);
    expect(tree.inScope('/r/no-kids')).toBe(true);
    expect(tree.inScope('/r/no-kids/x')).toBe(false);
    expect(tree.inScope('/other')).toBe(false);
    expect(tree.holdsChildrenOf('/r/no-kids')).toBe(false);
    expect(tree.holdsChildrenOf('/r/a/b')).toBe(false); // at maxDepth
    expect(tree.keepsData('/r/a')).toBe(false);
  });
});
