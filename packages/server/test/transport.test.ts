import { afterEach, describe, expect, test } from 'vitest';
import {
  AbortError,
  InvalidArgumentError,
  AddWatchMode,
  ConnectionLossError,
  CreateMode,
  ErrorCode,
  EventType,
  OPEN_ACL_UNSAFE,
  OpCode,
  digestId,
} from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { create, open, tryOpen } from './harness.js';

let server: EmbeddedServer;
afterEach(async () => {
  await server?.close();
});

describe('in-process transport', () => {
  test('a new session gets a random id, a 16-byte password and a clamped timeout', async () => {
    server = createEmbeddedServer({ tickMs: 100 });
    const t = server.transport();
    expect(t.hosts).toEqual(['embedded']);
    const a = await open(t, { timeoutMs: 1 });
    const b = await open(t, { timeoutMs: 1_000_000 });
    expect(a.conn.sessionId).not.toBe(0n);
    expect(a.conn.sessionId).not.toBe(b.conn.sessionId);
    expect(a.conn.passwd.length).toBe(16);
    expect(a.conn.negotiatedTimeoutMs).toBe(200);
    expect(b.conn.negotiatedTimeoutMs).toBe(2000);
    expect(a.conn.server).toBe('embedded');
    expect(a.conn.readOnly).toBe(false);
  });

  test('an unknown host is unreachable', async () => {
    server = createEmbeddedServer({ name: 'zk-a' });
    await expect(tryOpen(server.transport(), {}, 'zk-b')).rejects.toBeInstanceOf(ConnectionLossError);
  });

  test('create, getData, exists, getChildren, ping and closeSession', async () => {
    server = createEmbeddedServer();
    const s = await open(server.transport());
    const c = await s.conn.send(create('/a', Buffer.from('x')));
    expect(c).toMatchObject({ err: 0, response: { path: '/a' } });
    const d = await s.conn.send({ type: OpCode.getData, path: '/a', watch: true });
    expect(d.response?.data).toEqual(Buffer.from('x'));
    expect(d.zxid).toBe(c.zxid);
    const e = await s.conn.send({ type: OpCode.exists, path: '/nope', watch: false });
    expect(e.err).toBe(ErrorCode.NONODE);
    const ch = await s.conn.send({ type: OpCode.getChildren, path: '/', watch: false });
    expect(ch.response?.children.sort()).toEqual(['a', 'zookeeper']);
    const p = await s.conn.send({ type: OpCode.ping });
    expect(p).toEqual({ zxid: server.zxid, err: 0, response: undefined });
    await s.conn.send({ type: OpCode.setData, path: '/a', data: null, version: -1 });
    expect(s.events).toEqual([{ type: EventType.NodeDataChanged, state: 3, path: '/a' }]);
    const close = await s.conn.send({ type: OpCode.closeSession });
    expect(close.err).toBe(0);
    expect((await s.closed).kind).toBe('server');
    expect(server.sessions()).toEqual([]);
  });

  test('replies resolve in send order', async () => {
    server = createEmbeddedServer();
    const s = await open(server.transport());
    const order: number[] = [];
    const sends = [];
    for (let i = 0; i < 20; i++) {
      sends.push(s.conn.send(i % 2 ? { type: OpCode.ping } : create(`/n${i}`)).then(() => order.push(i)));
    }
    await Promise.all(sends);
    expect(order).toEqual([...Array(20).keys()]);
  });

  test('client close rejects pending requests with ConnectionLossError and reports once', async () => {
    server = createEmbeddedServer();
    const s = await open(server.transport());
    const pending = s.conn.send(create('/x'));
    s.conn.close();
    await expect(pending).rejects.toBeInstanceOf(ConnectionLossError);
    expect((await s.closed).kind).toBe('client');
    expect(s.closes).toHaveLength(1);
    await expect(s.conn.send({ type: OpCode.ping })).rejects.toBeInstanceOf(ConnectionLossError);
    // the session lives on
    expect(server.sessions()).toHaveLength(1);
  });

  test('re-attaching closes the previous connection of the session; a wrong password does not', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const a = await open(t);
    const wrong = Buffer.from(a.conn.passwd);
    wrong[15] = wrong[15]! ^ 1;
    expect(await tryOpen(t, { sessionId: a.conn.sessionId, passwd: wrong })).toBe('expired');
    expect(a.conn.closed).toBe(false);
    const b = await open(t, { sessionId: a.conn.sessionId, passwd: a.conn.passwd, timeoutMs: 6000 });
    expect((await a.closed).message).toBe('session re-attached on another connection');
    expect(b.conn.sessionId).toBe(a.conn.sessionId);
    expect(b.conn.negotiatedTimeoutMs).toBe(6000);
    expect(server.sessions()[0]!.timeoutMs).toBe(6000);
    expect(server.connectionCount).toBe(1);
  });

  test('a client ahead of the server, or an aborted signal, is refused', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    await expect(tryOpen(t, { lastZxidSeen: server.zxid + 1n })).rejects.toBeInstanceOf(ConnectionLossError);
    const ac = new AbortController();
    ac.abort();
    await expect(tryOpen(t, { signal: ac.signal })).rejects.toBeInstanceOf(AbortError);
    expect(server.sessions()).toEqual([]);
  });

  test("neither side can change the other's buffers", async () => {
    server = createEmbeddedServer();
    const s = await open(server.transport());
    const data = Buffer.from('original');
    await s.conn.send(create('/b', data));
    data.fill(0);
    const r = await s.conn.send({ type: OpCode.getData, path: '/b', watch: false });
    r.response!.data!.fill(0x7a);
    expect(server.node('/b')!.data).toEqual(Buffer.from('original'));
    const acl = await s.conn.send({ type: OpCode.getACL, path: '/b' });
    acl.response!.acl[0]!.id.id = 'someone';
    expect(server.node('/b')!.acl).toEqual([...OPEN_ACL_UNSAFE]);
  });

  test('a notification carries the zxid of the change that fired it', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const zxids: bigint[] = [];
    const w = await t.connect(
      'embedded',
      { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 10_000, readOnly: false },
      { onEvent: (_e, zxid) => zxids.push(zxid), onClose: () => undefined },
    );
    if (w.kind !== 'connected') throw new Error('expired');
    const s = await open(t);
    await s.conn.send(create('/n'));
    await w.connection.send({ type: OpCode.getData, path: '/n', watch: true });
    const set = await s.conn.send({ type: OpCode.setData, path: '/n', data: null, version: -1 });
    await w.connection.send({ type: OpCode.ping });
    expect(zxids).toEqual([set.zxid]);
    w.connection.close();
  });

  test('persistentWatches: false answers addWatch and setWatches2 as ZooKeeper 3.5 does', async () => {
    server = createEmbeddedServer({ persistentWatches: false });
    const t = server.transport();
    const a = await open(t);
    expect((await a.conn.send({ type: OpCode.addWatch, path: '/', mode: AddWatchMode.PERSISTENT })).err).toBe(ErrorCode.UNIMPLEMENTED);
    await a.closed;
    const b = await open(t);
    const w2 = { relativeZxid: 0n, dataWatches: [], existWatches: [], childWatches: [] };
    expect((await b.conn.send({ type: OpCode.setWatches, ...w2 })).err).toBe(0);
    expect((await b.conn.send({ type: OpCode.setWatches2, ...w2, persistentWatches: ['/'], persistentRecursiveWatches: [] })).err).toBe(
      ErrorCode.UNIMPLEMENTED,
    );
    await b.closed;
  });

  test('ttlEnabled: false answers TTL creates UNIMPLEMENTED and keeps the connection', async () => {
    server = createEmbeddedServer({ ttlEnabled: false });
    const s = await open(server.transport());
    const r = await s.conn.send({ type: OpCode.createTTL, path: '/t', data: null, acl: [...OPEN_ACL_UNSAFE], flags: 5, ttl: 1000n });
    expect(r.err).toBe(ErrorCode.UNIMPLEMENTED);
    expect((await s.conn.send(create('/plain'))).err).toBe(0);
  });

  test('superDigest grants the super identity, which passes every ACL', async () => {
    server = createEmbeddedServer({ superDigest: digestId('super', 'admin').id });
    const t = server.transport();
    const owner = await open(t);
    await owner.conn.send({ type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from('bob:pw') });
    await owner.conn.send({ ...create('/locked'), acl: [{ perms: 31, id: digestId('bob', 'pw') }] });
    const root = await open(t);
    expect((await root.conn.send({ type: OpCode.getData, path: '/locked', watch: false })).err).toBe(ErrorCode.NOAUTH);
    await root.conn.send({ type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from('super:admin') });
    expect((await root.conn.send({ type: OpCode.getData, path: '/locked', watch: false })).err).toBe(0);
  });

  test('introspection: sessions with their ephemerals and watches, nodes, the zxid, a dump', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const s = await open(t);
    await s.conn.send(create('/d', Buffer.from('x')));
    await s.conn.send(create('/d/e', null, CreateMode.EPHEMERAL));
    await s.conn.send({ type: OpCode.getData, path: '/d', watch: true });
    await s.conn.send({ type: OpCode.getChildren, path: '/d', watch: true });
    await s.conn.send({ type: OpCode.addWatch, path: '/p', mode: AddWatchMode.PERSISTENT });
    const [info] = server.sessions();
    expect(info).toMatchObject({ sessionId: s.conn.sessionId, timeoutMs: 10_000, connected: true, ephemerals: ['/d/e'], watches: 4 });
    expect(server.watchCounts()).toEqual(new Map([[s.conn.sessionId, 4]]));
    expect(server.watchesOf(s.conn.sessionId)).toEqual({ data: ['/d', '/p'], child: ['/d', '/p'] });
    expect(server.node('/d')).toMatchObject({ path: '/d', data: Buffer.from('x'), children: ['e'], stat: { numChildren: 1 } });
    expect(server.node('/nope')).toBeUndefined();
    expect(server.dump()).toContain('/d/e');
    s.conn.close();
    await s.closed;
    expect(server.sessions()[0]).toMatchObject({ connected: false, watches: 0 });
    expect(server.watchCounts().size).toBe(0);
  });

  test('options are checked', () => {
    expect(() => createEmbeddedServer({ tickMs: 0 })).toThrow(InvalidArgumentError);
    expect(() => createEmbeddedServer({ minSessionTimeoutMs: 5000, maxSessionTimeoutMs: 1000 })).toThrow(InvalidArgumentError);
  });
});
