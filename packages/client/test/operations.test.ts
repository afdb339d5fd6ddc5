/** The operation API on the embedded server: results, typed errors, namespaces, transactions, auth. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import {
  BadArgumentsError,
  BadVersionError,
  ClosedError,
  CreateMode,
  DataTooLargeError,
  InvalidPathError,
  NoAuthError,
  NoNodeError,
  NodeExistsError,
  NotEmptyError,
  NotStartedError,
  Perms,
  TransactionError,
  createClient,
  digestId,
  type Client,
  InvalidArgumentError,
} from '../src/index.js';
import { connect, startServer } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function open(opts: Parameters<typeof connect>[1] = {}): Promise<Client> {
  server ??= startServer();
  const { client } = await connect(server, opts);
  clients.push(client);
  return client;
}

describe('operations', () => {
  it('create (create2), getData, setData with versions, exists, getChildren, delete', async () => {
    server = startServer();
    const c = await open();
    const created = await c.create('/app', Buffer.from('v0'));
    expect(created.path).toBe('/app');
    expect(created.stat.version).toBe(0);
    expect(created.stat.czxid).toBeGreaterThan(0n);
    const stat = await c.setData('/app', 'v1', { version: 0 });
    expect(stat.version).toBe(1);
    await expect(c.setData('/app', 'v2', { version: 0 })).rejects.toBeInstanceOf(BadVersionError);
    expect((await c.getData('/app')).data.toString()).toBe('v1');
    await c.create('/app/a');
    await c.create('/app/b', new Uint8Array([1, 2]));
    const kids = await c.getChildren('/app');
    expect(kids.children.sort()).toEqual(['a', 'b']);
    expect(kids.stat.numChildren).toBe(2);
    expect((await c.getData('/app/b')).data).toEqual(Buffer.from([1, 2]));
    expect((await c.getData('/app/a')).data.length).toBe(0);
    await expect(c.create('/app')).rejects.toBeInstanceOf(NodeExistsError);
    await expect(c.delete('/app')).rejects.toBeInstanceOf(NotEmptyError);
    await expect(c.delete('/app/a', { version: 5 })).rejects.toBeInstanceOf(BadVersionError);
    await c.delete('/app/a', { version: 0 });
    expect(await c.exists('/app/a')).toBeNull();
    await expect(c.getData('/nope')).rejects.toBeInstanceOf(NoNodeError);
    await expect(c.getData('/nope')).rejects.toMatchObject({ path: '/nope', keeperCode: -101 });
  });

  it('sequential, ephemeral, container and TTL modes', async () => {
    server = startServer();
    const c = await open();
    await c.create('/q');
    const s1 = await c.create('/q/item-', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL });
    const s2 = await c.create('/q/item-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    expect(s1.path).toBe('/q/item-0000000000');
    expect(s2.path).toBe('/q/item-0000000001');
    expect(s2.stat.ephemeralOwner).toBe(c.sessionId);
    const bare = await c.create('/q/', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL });
    expect(bare.path).toBe('/q/0000000002');
    const box = await c.create('/box', null, { mode: CreateMode.CONTAINER });
    expect(box.path).toBe('/box');
    const ttl = await c.create('/ttl', 'x', { mode: CreateMode.PERSISTENT_WITH_TTL, ttlMs: 60_000 });
    expect(ttl.stat.version).toBe(0);
    await expect(c.create('/ttl2', 'x', { mode: CreateMode.PERSISTENT_WITH_TTL })).rejects.toBeInstanceOf(BadArgumentsError);
    await expect(c.create('/ttl3', 'x', { ttlMs: 5 })).rejects.toBeInstanceOf(BadArgumentsError);
  });

  it('createParents and createParentContainers', async () => {
    server = startServer({ containerCheckIntervalMs: 50 });
    const c = await open();
    await expect(c.create('/a/b/c', 'x')).rejects.toBeInstanceOf(NoNodeError);
    await c.create('/a/b/c', 'x', { createParents: true });
    await c.create('/k/l/m', null, { createParentContainers: true, mode: CreateMode.EPHEMERAL });
    expect((await c.exists('/k/l/m'))!.ephemeralOwner).toBe(c.sessionId);
    await c.delete('/a/b/c');
    await c.delete('/k/l/m');
    // Container parents are reaped once empty; persistent parents stay.
    let reaped!: (type: string) => void;
    const gone = new Promise<string>((resolve) => (reaped = resolve));
    if ((await c.exists('/k', { watch: (e) => reaped(e.type) })) !== null) expect(await gone).toBe('NodeDeleted');
    expect(await c.exists('/k')).toBeNull(); // containers reaped
    expect(await c.exists('/a/b')).not.toBeNull();
  });

  it('delete with deletingChildren removes the subtree', async () => {
    server = startServer();
    const c = await open();
    await c.create('/t/x/y/z', null, { createParents: true });
    await c.create('/t/x/w');
    await c.create('/t/v');
    await c.delete('/t', { deletingChildren: true });
    expect(await c.exists('/t')).toBeNull();
    await expect(c.delete('/t', { deletingChildren: true })).rejects.toBeInstanceOf(NoNodeError);
  });

  it('getACL, setACL, digest auth from authInfo and addAuth, whoAmI', async () => {
    server = startServer();
    const alice = await open({ authInfo: [{ scheme: 'digest', auth: 'alice:secret' }] });
    const acl = [{ perms: Perms.ALL, id: digestId('alice', 'secret') }];
    await alice.create('/private', 'mine', { acl });
    const got = await alice.getACL('/private');
    expect(got.acl).toEqual(acl);
    expect((await alice.getData('/private')).data.toString()).toBe('mine');
    expect(await alice.whoAmI()).toContainEqual({ authScheme: 'digest', user: 'alice' });
    const bob = await open();
    await expect(bob.getData('/private')).rejects.toBeInstanceOf(NoAuthError);
    await bob.addAuth('digest', 'alice:secret');
    expect((await bob.getData('/private')).data.toString()).toBe('mine');
    const stat = await alice.setACL('/private', [{ perms: Perms.READ, id: { scheme: 'world', id: 'anyone' } }], { version: 0 });
    expect(stat.aversion).toBe(1);
    // Auth is re-sent on reconnect.
    server.dropConnection(alice.sessionId);
    await alice.waitForState('RECONNECTED');
    expect(await alice.whoAmI()).toContainEqual({ authScheme: 'digest', user: 'alice' });
  });

  it('sync, getEphemerals, getAllChildrenNumber, multiRead', async () => {
    server = startServer();
    const c = await open();
    await c.sync('/');
    await c.create('/m/a/b', 'bb', { createParents: true });
    await c.create('/m/e1', null, { mode: CreateMode.EPHEMERAL });
    await c.create('/m/e2', null, { mode: CreateMode.EPHEMERAL });
    expect((await c.getEphemerals('/m')).sort()).toEqual(['/m/e1', '/m/e2']);
    expect((await c.getEphemerals()).length).toBe(2);
    expect(await c.getAllChildrenNumber('/m')).toBe(4);
    const res = await c.multiRead([
      { type: 'getData', path: '/m/a/b' },
      { type: 'getChildren', path: '/m/a' },
      { type: 'getData', path: '/m/zz' },
    ]);
    expect(res[0]).toMatchObject({ type: 'getData', path: '/m/a/b' });
    expect((res[0] as { data: Buffer }).data.toString()).toBe('bb');
    expect(res[1]).toEqual({ type: 'getChildren', path: '/m/a', children: ['b'] });
    expect(res[2]!.type).toBe('error');
    expect((res[2] as { error: Error }).error).toBeInstanceOf(NoNodeError);
  });

  it('transactions: results per op, and a typed error naming the failing op', async () => {
    server = startServer();
    const c = await open();
    await c.create('/tx');
    const results = await c
      .transaction()
      .create('/tx/a', 'a')
      .create('/tx/s-', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL })
      .setData('/tx', 'root', { version: 0 })
      .check('/tx/a', 0)
      .delete('/tx/a')
      .commit();
    expect(results.map((r) => r.type)).toEqual(['create', 'create', 'setData', 'check', 'delete']);
    expect(results[1]).toMatchObject({ type: 'create', path: '/tx/s-0000000001' });
    expect((results[2] as { stat: { version: number } }).stat.version).toBe(1);
    const failing = c.transaction().create('/tx/b').setData('/tx', 'x', { version: 0 }).create('/tx/c');
    const err = await failing.commit().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransactionError);
    const te = err as TransactionError;
    expect(te.opIndex).toBe(1);
    expect(te.opType).toBe('setData');
    expect(te.keeperCode).toBe(-103);
    expect(te.path).toBe('/tx');
    expect(te.cause).toBeInstanceOf(BadVersionError);
    expect(te.results.map((r) => r.code)).toEqual([0, -103, -2]);
    expect(te.message).toContain('setData');
    expect(await c.exists('/tx/b')).toBeNull();
    expect(await c.transaction().commit()).toEqual([]);
  });

  it('a namespace prefixes paths and strips them from results and events; usingNamespace shares the session', async () => {
    server = startServer();
    const root = await open();
    const app = root.usingNamespace('app');
    expect(app.namespace).toBe('app');
    expect(app.sessionId).toBe(root.sessionId);
    // The namespace node is created on demand (as a container, as Curator does).
    const r = await app.create('/x', 'in app');
    expect(r.path).toBe('/x');
    expect((await root.getData('/app/x')).data.toString()).toBe('in app');
    const seq = await app.create('/s-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    expect(seq.path).toMatch(/^\/s-\d{10}$/);
    expect((await app.getChildren('/')).children.sort()).toEqual(['s-0000000001', 'x'].sort());
    expect(await app.getEphemerals()).toEqual([seq.path]);
    const events: string[] = [];
    await app.getData('/x', { watch: (e) => events.push(`${e.type} ${e.path}`) });
    await root.setData('/app/x', 'changed');
    await new Promise((res) => setTimeout(res, 20));
    expect(events).toEqual(['NodeDataChanged /x']);
    const tx = await app.transaction().create('/y').commit();
    expect(tx[0]).toMatchObject({ path: '/y' });
    const ns2 = createClient({ transport: server.transport(), namespace: '/deep/er' });
    clients.push(ns2);
    await ns2.start();
    await ns2.create('/z', null, { createParents: true });
    expect(await root.exists('/deep/er/z')).not.toBeNull();
    await app.close(); // a view does not close the session
    expect(root.closed).toBe(false);
  });

  it('invalid paths, oversized data and calls after close give typed errors', async () => {
    server = startServer();
    const c = await open();
    for (const bad of ['', 'a', '/a/', '/a//b', '/a/./b', '/a/../b', '/a\u0000b', '/\ud800']) {
      await expect(c.getData(bad)).rejects.toBeInstanceOf(InvalidPathError);
      await expect(c.create(bad)).rejects.toBeInstanceOf(InvalidPathError);
    }
    expect(() => c.transaction().create('bad')).toThrow(InvalidPathError);
    const big = Buffer.alloc(1024 * 1024 + 1);
    await expect(c.create('/big', big)).rejects.toBeInstanceOf(DataTooLargeError);
    await c.create('/big');
    await expect(c.setData('/big', big)).rejects.toBeInstanceOf(DataTooLargeError);
    await expect(
      c.transaction().create('/b1', big.subarray(0, 600_000)).create('/b2', big.subarray(0, 600_000)).commit(),
    ).rejects.toBeInstanceOf(DataTooLargeError);
    // The connection survived: the oversized requests never left the client.
    expect(c.state).toBe('CONNECTED');
    const fits = Buffer.alloc(1024 * 1000);
    await c.setData('/big', fits);
    expect((await c.getData('/big')).data.length).toBe(fits.length);
    await c.close();
    await expect(c.getData('/big')).rejects.toBeInstanceOf(ClosedError);
    await expect(c.create('/x')).rejects.toBeInstanceOf(ClosedError);
    await expect(c.start()).rejects.toBeInstanceOf(ClosedError);
    await expect(c.transaction().create('/x').commit()).rejects.toBeInstanceOf(ClosedError);
    await expect(c.addWatch('/')).rejects.toBeInstanceOf(ClosedError);
    await expect(c.waitForState('LOST')).rejects.toBeInstanceOf(ClosedError);
    const unstarted = createClient({ transport: server.transport() });
    await expect(unstarted.getData('/')).rejects.toBeInstanceOf(NotStartedError);
    await unstarted.close();
  });

  it('an aborted signal rejects with AbortError', async () => {
    server = startServer();
    const c = await open();
    const ac = new AbortController();
    ac.abort();
    await expect(c.getData('/', { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
    void server.pause(300);
    const ac2 = new AbortController();
    const p = c.getData('/', { signal: ac2.signal });
    setTimeout(() => ac2.abort(), 50);
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('createClient validates its options; connectString selects the ZooKeeper transport', () => {
    expect(() => createClient({} as never)).toThrow(InvalidArgumentError);
    expect(() => createClient({ transport: startServer().transport(), sessionTimeoutMs: -1 })).toThrow(InvalidArgumentError);
    const zk = createClient({ connectString: '127.0.0.1:1/chroot' });
    expect(zk.state).toBeNull();
    server = startServer();
  });
});
