/**
 * Every ZooKeeper 3.6+ operation through @tenure/client against a real ZooKeeper 3.8, with a
 * chroot in the connect string (mapped by the transport) and a namespace on top (mapped by the
 * client), and nothing left on the server after close().
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateMode, WatcherType, createClient, type Client, type PersistentWatchEvent, type WatchEvent } from '@tenure/client';
import { EventLog, TestingServer, eventually, realZooKeeper } from '@tenure/testing';

const zk = realZooKeeper();

describe.skipIf(!zk.available)('client operations on ZooKeeper 3.8 through a chroot', () => {
  let server: TestingServer;
  let client: Client;
  let admin: Client;

  beforeAll(async () => {
    server = await TestingServer.start();
    admin = createClient({ connectString: server.connectString, sessionTimeoutMs: 4000 });
    await admin.start();
    await admin.create('/chroot', null);
    client = createClient({ connectString: `${server.connectString}/chroot`, sessionTimeoutMs: 4000 });
    await client.start();
  });
  afterAll(async () => {
    await client?.close();
    await admin?.close();
    await server?.close();
  });

  it('create2, createContainer, createTTL and sequential creates answer client paths', async () => {
    const p = await client.create('/p', 'v');
    expect(p.path).toBe('/p');
    expect(p.stat.version).toBe(0);
    expect((await admin.getData('/chroot/p')).data.toString()).toBe('v');
    const seq = await client.create('/p/s-', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL });
    expect(seq.path).toMatch(/^\/p\/s-\d{10}$/);
    const container = await client.create('/container', null, { mode: CreateMode.CONTAINER });
    expect(container.path).toBe('/container');
    const ttl = await client.create('/ttl', null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttlMs: 60_000 });
    expect(ttl.path).toBe('/ttl');
    const eph = await client.create('/p/e-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    expect(eph.stat.ephemeralOwner).toBe(client.sessionId);
  });

  it('multi (transaction) and multiRead, with paths inside results stripped', async () => {
    const results = await client
      .transaction()
      .create('/m', 'a')
      .create('/m/s-', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL })
      .setData('/m', 'b')
      .check('/m', 1)
      .commit();
    expect(results.map((r) => r.type)).toEqual(['create', 'create', 'setData', 'check']);
    expect((results[0] as { path: string }).path).toBe('/m');
    expect((results[1] as { path: string }).path).toMatch(/^\/m\/s-\d{10}$/);
    const read = await client.multiRead([
      { type: 'getData', path: '/m' },
      { type: 'getChildren', path: '/m' },
      { type: 'getData', path: '/missing' },
    ]);
    expect(read[0]).toMatchObject({ type: 'getData', data: Buffer.from('b') });
    expect(read[1]).toMatchObject({ type: 'getChildren' });
    expect(read[2]).toMatchObject({ type: 'error' });
  });

  it('getEphemerals, getAllChildrenNumber, whoAmI, sync, getACL/setACL', async () => {
    await client.create('/g', null);
    await client.create('/g/e', null, { mode: CreateMode.EPHEMERAL });
    expect(await client.getEphemerals('/g')).toEqual(['/g/e']);
    expect((await client.getEphemerals()).sort()).toEqual(expect.arrayContaining(['/g/e']));
    expect((await client.getEphemerals()).every((p) => !p.startsWith('/chroot'))).toBe(true);
    expect(await client.getAllChildrenNumber('/g')).toBe(1);
    expect(await client.whoAmI()).toContainEqual({ authScheme: 'ip', user: '127.0.0.1' });
    await client.sync('/g');
    const { acl, stat } = await client.getACL('/g');
    expect(acl).toEqual([{ perms: 31, id: { scheme: 'world', id: 'anyone' } }]);
    expect((await client.setACL('/g', acl, { version: stat.aversion })).aversion).toBe(1);
  });

  it('one-shot watches, addWatch (persistent, recursive) and removeWatches deliver client paths', async () => {
    await client.create('/w', 'x');
    const oneShot = new EventLog<WatchEvent>();
    await client.getData('/w', { watch: (e) => void oneShot.push(e) });
    const persistent = new EventLog<PersistentWatchEvent>();
    const recursive = new EventLog<PersistentWatchEvent>();
    const pw = await client.addWatch('/w', { listener: (e) => void persistent.push(e) });
    const rw = await client.addWatch('/', { recursive: true, listener: (e) => void recursive.push(e) });
    await admin.setData('/chroot/w', 'y');
    await admin.create('/chroot/w/c', null);
    await Promise.all([
      oneShot.atLeast(1, { timeoutMs: 5000 }),
      persistent.atLeast(2, { timeoutMs: 5000 }),
      recursive.atLeast(2, { timeoutMs: 5000 }),
    ]);
    expect(oneShot).toMatchObject([{ type: 'NodeDataChanged', path: '/w' }]);
    expect(persistent).toMatchObject([
      { type: 'NodeDataChanged', path: '/w' },
      { type: 'NodeChildrenChanged', path: '/w' },
    ]);
    expect(recursive).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'NodeDataChanged', path: '/w' }),
        expect.objectContaining({ type: 'NodeCreated', path: '/w/c' }),
      ]),
    );
    await pw.close();
    await rw.close();
    await client.getChildren('/w', { watch: () => {} });
    await client.removeWatches('/w', WatcherType.Any);
    await expect(client.removeWatches('/w', WatcherType.Any)).rejects.toMatchObject({ name: 'NoWatcherError' });
    const onServer = (await server.dump()).sessions.find((s) => s.sessionId === client.sessionId);
    expect(onServer?.watches).toBe(0);
  });

  it('close() leaves nothing behind on the server: no session, ephemerals or watches', async () => {
    const c = createClient({ connectString: `${server.connectString}/chroot`, sessionTimeoutMs: 4000 });
    await c.start();
    await c.create('/left', null, { mode: CreateMode.EPHEMERAL });
    await c.exists('/left', { watch: () => {} });
    await c.addWatch('/left', { recursive: true });
    const id = c.sessionId;
    expect((await server.dump()).sessions.find((s) => s.sessionId === id)).toMatchObject({ ephemerals: ['/chroot/left'], watches: 1 });
    await c.close();
    // ZooKeeper answers closeSession first and drops the connection's watches as the socket
    // closes a moment later, so its dump may still list the session's watch just after.
    await eventually(
      async () => (await server.dump()).sessions.find((s) => s.sessionId === id) === undefined,
      5000,
      'the closed session gone from the dump',
    );
    expect(await admin.exists('/chroot/left')).toBeNull();
  });
});
