/**
 * The TCP transport against a real Apache ZooKeeper 3.8 (TestingServer): handshake, every op
 * family, chroot mapping in both directions, expiry answers, close semantics and pipelining.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  AddWatchMode,
  ConnectionLossError,
  CreateMode,
  EventType,
  OPEN_ACL_UNSAFE,
  OpCode,
  WatcherType,
  type ACL,
  type Connection,
} from '@tenure/protocol';
import { TestingServer, freePort, realZooKeeper } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { open, recorder, NEW_SESSION } from './connection-harness.js';

const zk = realZooKeeper();
const acl = OPEN_ACL_UNSAFE as ACL[];
const data = (s: string) => Buffer.from(s);

describe.skipIf(!zk.available)('zookeeper transport against ZooKeeper 3.8', () => {
  let server: TestingServer;
  const opened: Connection[] = [];
  const track = <T extends { connection: Connection }>(c: T): T => {
    opened.push(c.connection);
    return c;
  };

  beforeAll(async () => {
    // Long-lived connections here send no pings: allow sessions to outlive a slow test.
    server = await TestingServer.start({ maxSessionTimeout: 60_000 });
  });
  afterAll(async () => {
    for (const c of opened) c.close();
    await server?.close();
  });

  describe('handshake', () => {
    test('a new session gets an id, a 16-byte password and the negotiated timeout', async () => {
      const t = zookeeper(server.connectString);
      expect(t.hosts).toEqual([server.connectString]);
      const { connection } = track(await open(t, { timeoutMs: 3000 }));
      expect(connection.sessionId).not.toBe(0n);
      expect(connection.passwd.length).toBe(16);
      expect(connection.negotiatedTimeoutMs).toBe(3000);
      expect(connection.readOnly).toBe(false);
      expect(connection.server).toBe(server.connectString);
      expect(connection.closed).toBe(false);
    });

    test('the timeout is clamped into [minSessionTimeout, maxSessionTimeout]', async () => {
      const t = zookeeper(server.connectString);
      const low = track(await open(t, { timeoutMs: 10 }));
      const high = track(await open(t, { timeoutMs: 100_000 }));
      expect(low.connection.negotiatedTimeoutMs).toBe(400);
      expect(high.connection.negotiatedTimeoutMs).toBe(60_000);
    });

    test('re-attaching keeps the session; the server closes the older connection on that server', async () => {
      const t = zookeeper(server.connectString);
      const first = track(await open(t));
      const second = track(await open(t, { sessionId: first.connection.sessionId, passwd: first.connection.passwd }));
      expect(second.connection.sessionId).toBe(first.connection.sessionId);
      expect(second.connection.passwd.equals(first.connection.passwd)).toBe(true);
      const reason = await first.closed;
      expect(reason.kind).toBe('server');
      expect(first.connection.closed).toBe(true);
      expect(second.connection.closed).toBe(false);
    });

    test('a wrong password, an unknown id and a closed session answer expired', async () => {
      const t = zookeeper(server.connectString);
      const live = track(await open(t));
      const wrong = Buffer.alloc(16, 7);
      const r1 = await t.connect(t.hosts[0]!, { ...NEW_SESSION, sessionId: live.connection.sessionId, passwd: wrong }, recorder().handlers);
      expect(r1.kind).toBe('expired');
      const r2 = await t.connect(t.hosts[0]!, { ...NEW_SESSION, sessionId: 0x7ffffffffffn, passwd: wrong }, recorder().handlers);
      expect(r2.kind).toBe('expired');

      const doomed = await open(t);
      const { sessionId, passwd } = doomed.connection;
      const reply = await doomed.connection.send({ type: OpCode.closeSession });
      expect(reply.err).toBe(0);
      expect((await doomed.closed).kind).toBe('server');
      const r3 = await t.connect(t.hosts[0]!, { ...NEW_SESSION, sessionId, passwd }, recorder().handlers);
      expect(r3.kind).toBe('expired');
    });

    test('an unreachable server rejects with ConnectionLossError', async () => {
      const addr = `127.0.0.1:${await freePort()}`;
      await expect(zookeeper(addr).connect(addr, NEW_SESSION, recorder().handlers)).rejects.toBeInstanceOf(ConnectionLossError);
    });
  });

  describe('operations', () => {
    let c: Connection;
    beforeAll(async () => {
      c = track(await open(zookeeper(server.connectString), { timeoutMs: 60_000 })).connection;
    });

    test('create, getData, setData, exists, getChildren2, delete', async () => {
      const created = await c.send({ type: OpCode.create, path: '/ops', data: data('v0'), acl, flags: CreateMode.PERSISTENT });
      expect(created).toMatchObject({ err: 0, response: { path: '/ops' } });
      expect(created.zxid).toBeGreaterThan(0n);
      const got = await c.send({ type: OpCode.getData, path: '/ops', watch: false });
      expect(got.response!.data!.toString()).toBe('v0');
      expect(got.response!.stat.version).toBe(0);
      const set = await c.send({ type: OpCode.setData, path: '/ops', data: data('v1'), version: 0 });
      expect(set.response!.stat.version).toBe(1);
      const bad = await c.send({ type: OpCode.setData, path: '/ops', data: data('v2'), version: 0 });
      expect(bad).toEqual({ zxid: expect.any(BigInt), err: -103, response: undefined });
      const ex = await c.send({ type: OpCode.exists, path: '/ops', watch: false });
      expect(ex.response!.stat.dataLength).toBe(2);
      await c.send({ type: OpCode.create, path: '/ops/a', data: null, acl, flags: CreateMode.PERSISTENT });
      const kids = await c.send({ type: OpCode.getChildren2, path: '/ops', watch: false });
      expect(kids.response!.children).toEqual(['a']);
      expect(kids.response!.stat.numChildren).toBe(1);
      const nullData = await c.send({ type: OpCode.getData, path: '/ops/a', watch: false });
      expect(nullData.response!.data).toBeNull();
      expect((await c.send({ type: OpCode.delete, path: '/ops', version: -1 })).err).toBe(-111);
      expect((await c.send({ type: OpCode.delete, path: '/ops/a', version: -1 })).err).toBe(0);
      expect((await c.send({ type: OpCode.delete, path: '/ops', version: -1 })).err).toBe(0);
      expect((await c.send({ type: OpCode.getData, path: '/ops', watch: false })).err).toBe(-101);
    });

    test('create2, createContainer and createTTL answer a path and a Stat', async () => {
      const c2 = await c.send({ type: OpCode.create2, path: '/seq-', data: null, acl, flags: CreateMode.PERSISTENT_SEQUENTIAL });
      expect(c2.response!.path).toMatch(/^\/seq-\d{10}$/);
      expect(c2.response!.stat.czxid).toBe(c2.zxid);
      const cc = await c.send({ type: OpCode.createContainer, path: '/container', data: null, acl, flags: CreateMode.CONTAINER });
      expect(cc.response!.path).toBe('/container');
      // Servers hide the container/TTL marker: clients see ephemeralOwner 0 (DataNode.getClientEphemeralOwner).
      expect(cc.response!.stat.ephemeralOwner).toBe(0n);
      const ttl = await c.send({
        type: OpCode.createTTL,
        path: '/ttl',
        data: null,
        acl,
        flags: CreateMode.PERSISTENT_WITH_TTL,
        ttl: 60_000n,
      });
      expect(ttl.err).toBe(0);
      expect(ttl.response!.path).toBe('/ttl');
      for (const p of [c2.response!.path, '/container', '/ttl']) await c.send({ type: OpCode.delete, path: p, version: -1 });
    });

    test('multi succeeds atomically and fails with per-op errors; multiRead mixes results', async () => {
      const ok = await c.send({
        type: OpCode.multi,
        ops: [
          { type: OpCode.create, path: '/m', data: data('x'), acl, flags: 0 },
          { type: OpCode.create2, path: '/m/c', data: null, acl, flags: 0 },
          { type: OpCode.setData, path: '/m', data: data('y'), version: 0 },
          { type: OpCode.check, path: '/m', version: 1 },
        ],
      });
      expect(ok.err).toBe(0);
      // ZooKeeper 3.8 answers a create2 sub-op with a plain create result (path, no Stat).
      expect(ok.response!.results.map((r) => r.type)).toEqual([1, 1, 5, 13]);
      const failed = await c.send({
        type: OpCode.multi,
        ops: [
          { type: OpCode.check, path: '/m', version: 1 },
          { type: OpCode.delete, path: '/m', version: 7 },
          { type: OpCode.create, path: '/m2', data: null, acl, flags: 0 },
        ],
      });
      expect(failed.err).toBe(0);
      expect(failed.response!.results).toEqual([
        { type: -1, err: 0 },
        { type: -1, err: -103 },
        { type: -1, err: -2 },
      ]);
      const read = await c.send({
        type: OpCode.multiRead,
        ops: [
          { type: OpCode.getData, path: '/m', watch: false },
          { type: OpCode.getChildren, path: '/nope', watch: false },
        ],
      });
      expect(read.response!.results[0]).toMatchObject({ type: 4, data: data('y') });
      expect(read.response!.results[1]).toEqual({ type: -1, err: -101 });
      const empty = await c.send({ type: OpCode.multi, ops: [] });
      expect(empty).toMatchObject({ err: 0, response: { results: [] } });
      await c.send({
        type: OpCode.multi,
        ops: [
          { type: OpCode.delete, path: '/m/c', version: -1 },
          { type: OpCode.delete, path: '/m', version: -1 },
        ],
      });
    });

    test('getEphemerals, getAllChildrenNumber, whoAmI, sync, getACL/setACL', async () => {
      await c.send({ type: OpCode.create, path: '/g', data: null, acl, flags: 0 });
      await c.send({ type: OpCode.create, path: '/g/e1', data: null, acl, flags: CreateMode.EPHEMERAL });
      await c.send({ type: OpCode.create, path: '/g/e2', data: null, acl, flags: CreateMode.EPHEMERAL });
      const eph = await c.send({ type: OpCode.getEphemerals, prefixPath: '/g' });
      expect([...eph.response!.ephemerals].sort()).toEqual(['/g/e1', '/g/e2']);
      const n = await c.send({ type: OpCode.getAllChildrenNumber, path: '/g' });
      expect(n.response!.totalNumber).toBe(2);
      const who = await c.send({ type: OpCode.whoAmI });
      expect(who.response!.clientInfo).toContainEqual({ authScheme: 'ip', user: '127.0.0.1' });
      const sync = await c.send({ type: OpCode.sync, path: '/g' });
      expect(sync.response!.path).toBe('/g');
      const got = await c.send({ type: OpCode.getACL, path: '/g' });
      expect(got.response!.acl).toEqual(acl);
      const set = await c.send({
        type: OpCode.setACL,
        path: '/g',
        acl: [{ perms: 31, id: { scheme: 'world', id: 'anyone' } }],
        version: 0,
      });
      expect(set.response!.stat.aversion).toBe(1);
    });

    test('auth and ping are answered out of band; a digest identity shows in whoAmI', async () => {
      const ping = await c.send({ type: OpCode.ping });
      expect(ping.err).toBe(0);
      expect(ping.response).toBeUndefined();
      const auth = await c.send({ type: OpCode.auth, authType: 0, scheme: 'digest', auth: data('bob:secret') });
      expect(auth).toEqual({ zxid: 0n, err: 0, response: undefined });
      const who = await c.send({ type: OpCode.whoAmI });
      expect(who.response!.clientInfo).toContainEqual({ authScheme: 'digest', user: 'bob' });
    });

    test('one-shot and persistent watches deliver events; removeWatches and checkWatches', async () => {
      const t = zookeeper(server.connectString);
      const w = track(await open(t));
      await c.send({ type: OpCode.create, path: '/w', data: null, acl, flags: 0 });
      await w.connection.send({ type: OpCode.getData, path: '/w', watch: true });
      await w.connection.send({ type: OpCode.exists, path: '/w/new', watch: true });
      const added = await w.connection.send({ type: OpCode.addWatch, path: '/w', mode: AddWatchMode.PERSISTENT_RECURSIVE });
      expect(added.response).toEqual({ err: 0 });
      expect((await w.connection.send({ type: OpCode.checkWatches, path: '/w', watcherType: WatcherType.Data })).err).toBe(0);
      await c.send({ type: OpCode.setData, path: '/w', data: data('1'), version: -1 });
      await c.send({ type: OpCode.create, path: '/w/new', data: null, acl, flags: 0 });
      // One event per connection and change, whichever watches (data, exist, recursive) it satisfies.
      const events = await w.waitEvents(2);
      expect(events).toContainEqual({ type: EventType.NodeDataChanged, state: 3, path: '/w' });
      expect(events).toContainEqual({ type: EventType.NodeCreated, state: 3, path: '/w/new' });
      expect(w.events.every((e) => e.zxid === -1n)).toBe(true);
      const removed = await w.connection.send({ type: OpCode.removeWatches, path: '/w', watcherType: WatcherType.Any });
      expect(removed.err).toBe(0);
      expect((await w.connection.send({ type: OpCode.removeWatches, path: '/w', watcherType: WatcherType.Any })).err).toBe(-121);
    });

    test('setWatches re-registers on a new connection and answers in order', async () => {
      const t = zookeeper(server.connectString);
      await c.send({ type: OpCode.create, path: '/sw', data: data('a'), acl, flags: 0 });
      const before = await c.send({ type: OpCode.getData, path: '/sw', watch: false });
      const w = track(await open(t));
      const sw = await w.connection.send({
        type: OpCode.setWatches,
        relativeZxid: before.zxid,
        dataWatches: ['/sw'],
        existWatches: ['/sw-missing'],
        childWatches: [],
      });
      expect(sw.err).toBe(0);
      const after = await w.connection.send({ type: OpCode.exists, path: '/sw', watch: false });
      expect(after.err).toBe(0);
      await c.send({ type: OpCode.setData, path: '/sw', data: data('b'), version: -1 });
      expect(await w.waitEvents(1)).toEqual([{ type: EventType.NodeDataChanged, state: 3, path: '/sw' }]);
    });

    test('checkWatches without a watch answers NOWATCHER; close() reports a client close', async () => {
      const x = await open(zookeeper(server.connectString));
      const pending = x.connection.send({ type: OpCode.checkWatches, path: '/nope', watcherType: WatcherType.Data });
      expect((await pending).err).toBe(-121);
      x.connection.close();
      expect((await x.closed).kind).toBe('client');
    });
  });

  describe('chroot', () => {
    test('paths are prefixed going out and stripped coming back, in every reply and event', async () => {
      const root = track(await open(zookeeper(server.connectString), { timeoutMs: 60_000 })).connection;
      await root.send({ type: OpCode.create, path: '/app', data: null, acl, flags: 0 });
      const t = zookeeper(`${server.connectString}/app`);
      expect(t.hosts).toEqual([server.connectString]);
      const app = track(await open(t, { timeoutMs: 60_000 }));
      const c = app.connection;

      const created = await c.send({ type: OpCode.create, path: '/x', data: data('1'), acl, flags: 0 });
      expect(created.response!.path).toBe('/x');
      expect((await root.send({ type: OpCode.exists, path: '/app/x', watch: false })).err).toBe(0);
      const c2 = await c.send({ type: OpCode.create2, path: '/x/s-', data: null, acl, flags: CreateMode.PERSISTENT_SEQUENTIAL });
      expect(c2.response!.path).toMatch(/^\/x\/s-\d{10}$/);
      const cont = await c.send({ type: OpCode.createContainer, path: '/cont', data: null, acl, flags: CreateMode.CONTAINER });
      expect(cont.response!.path).toBe('/cont');
      const ttl = await c.send({
        type: OpCode.createTTL,
        path: '/ttl',
        data: null,
        acl,
        flags: CreateMode.PERSISTENT_WITH_TTL,
        ttl: 60_000n,
      });
      expect(ttl.response!.path).toBe('/ttl');

      const multi = await c.send({
        type: OpCode.multi,
        ops: [
          { type: OpCode.create, path: '/m1', data: null, acl, flags: 0 },
          { type: OpCode.create2, path: '/m2', data: null, acl, flags: 0 },
          { type: OpCode.createTTL, path: '/m3', data: null, acl, flags: CreateMode.PERSISTENT_WITH_TTL, ttl: 60_000n },
          { type: OpCode.check, path: '/m1', version: 0 },
        ],
      });
      expect(multi.response!.results).toMatchObject([
        { type: 1, path: '/m1' },
        { type: 1, path: '/m2' },
        { type: 15, path: '/m3' },
        { type: 13 },
      ]);
      const read = await c.send({ type: OpCode.multiRead, ops: [{ type: OpCode.getChildren, path: '/', watch: false }] });
      expect((read.response!.results[0] as { children: string[] }).children.sort()).toEqual(['cont', 'm1', 'm2', 'm3', 'ttl', 'x']);

      // A sibling outside the chroot with a common prefix must not leak into getEphemerals.
      await root.send({ type: OpCode.create, path: '/apple', data: null, acl, flags: CreateMode.EPHEMERAL });
      await c.send({ type: OpCode.create, path: '/x/e', data: null, acl, flags: CreateMode.EPHEMERAL });
      await c.send({ type: OpCode.create, path: '/e2', data: null, acl, flags: CreateMode.EPHEMERAL });
      const eph = await c.send({ type: OpCode.getEphemerals, prefixPath: '/' });
      expect([...eph.response!.ephemerals].sort()).toEqual(['/e2', '/x/e']);
      const ephX = await c.send({ type: OpCode.getEphemerals, prefixPath: '/x' });
      expect(ephX.response!.ephemerals).toEqual(['/x/e']);
      expect((await c.send({ type: OpCode.sync, path: '/x' })).response!.path).toBe('/x');
      expect((await c.send({ type: OpCode.getAllChildrenNumber, path: '/' })).response!.totalNumber).toBe(9);

      // Events: one-shot, persistent recursive, and a root ('/' = the chroot itself) child watch.
      await c.send({ type: OpCode.getData, path: '/x', watch: true });
      await c.send({ type: OpCode.getChildren, path: '/', watch: true });
      await c.send({ type: OpCode.addWatch, path: '/x', mode: AddWatchMode.PERSISTENT_RECURSIVE });
      await root.send({ type: OpCode.setData, path: '/app/x', data: data('2'), version: -1 });
      await root.send({ type: OpCode.create, path: '/app/new', data: null, acl, flags: 0 });
      await root.send({ type: OpCode.delete, path: '/app/x/e', version: -1 });
      const events = await app.waitEvents(3);
      expect(events).toEqual(
        expect.arrayContaining([
          { type: EventType.NodeDataChanged, state: 3, path: '/x' },
          { type: EventType.NodeChildrenChanged, state: 3, path: '/' },
          { type: EventType.NodeDeleted, state: 3, path: '/x/e' },
        ]),
      );
      expect(events.every((e) => !e.path.startsWith('/app'))).toBe(true);

      // SetWatches lists are chrooted too: a new connection re-registers '/x' and sees its change.
      const before = await c.send({ type: OpCode.exists, path: '/x', watch: false });
      const again = track(await open(t, { sessionId: 0n }));
      await again.connection.send({
        type: OpCode.setWatches2,
        relativeZxid: before.zxid,
        dataWatches: ['/x'],
        existWatches: [],
        childWatches: [],
        persistentWatches: ['/'],
        persistentRecursiveWatches: [],
      });
      await root.send({ type: OpCode.setData, path: '/app/x', data: data('3'), version: -1 });
      await root.send({ type: OpCode.setData, path: '/app', data: data('r'), version: -1 });
      expect(await again.waitEvents(2)).toEqual(
        expect.arrayContaining([
          { type: EventType.NodeDataChanged, state: 3, path: '/x' },
          { type: EventType.NodeDataChanged, state: 3, path: '/' },
        ]),
      );
      // removeWatches / exists / delete with a chroot address the chrooted node.
      expect((await again.connection.send({ type: OpCode.removeWatches, path: '/', watcherType: WatcherType.Any })).err).toBe(0);
      await root.send({ type: OpCode.delete, path: '/apple', version: -1 });
    });

    test('an invalid chroot is refused when the transport is made', () => {
      expect(() => zookeeper('127.0.0.1:2181/a//b')).toThrow(/chroot/);
      expect(() => zookeeper('127.0.0.1:2181/a/')).toThrow(/chroot/);
    });
  });

  describe('close and pipelining', () => {
    test('close() rejects pending requests with ConnectionLossError, then reports onClose once', async () => {
      const x = await open(zookeeper(server.connectString));
      const pending = Array.from({ length: 50 }, () => x.connection.send({ type: OpCode.exists, path: '/', watch: false }));
      const settled = Promise.allSettled(pending);
      x.connection.close();
      x.connection.close();
      const results = await settled;
      expect(results.every((r) => r.status === 'rejected' && r.reason instanceof ConnectionLossError)).toBe(true);
      expect(x.closes).toEqual([{ kind: 'client', message: 'closed by the client' }]);
      await expect(x.connection.send({ type: OpCode.ping })).rejects.toBeInstanceOf(ConnectionLossError);
    });

    test('a stopped server closes the connection; a restarted one re-attaches the same session', async () => {
      const s = await TestingServer.start();
      try {
        const t = zookeeper(s.connectString);
        const x = await open(t, { timeoutMs: 4000 });
        await x.connection.send({ type: OpCode.create, path: '/eph', data: null, acl, flags: CreateMode.EPHEMERAL });
        await s.stop();
        const reason = await x.closed;
        expect(['server', 'network']).toContain(reason.kind);
        expect(x.closes.length).toBe(1);
        await s.restart();
        const y = await open(t, { sessionId: x.connection.sessionId, passwd: x.connection.passwd, timeoutMs: 4000 });
        expect(y.connection.sessionId).toBe(x.connection.sessionId);
        expect((await y.connection.send({ type: OpCode.exists, path: '/eph', watch: false })).response!.stat.ephemeralOwner).toBe(
          x.connection.sessionId,
        );
        y.connection.close();
      } finally {
        await s.close();
      }
    });

    test('thousands of pipelined requests resolve in order with the right bodies', async () => {
      const x = track(await open(zookeeper(server.connectString)));
      const c = x.connection;
      await c.send({ type: OpCode.create, path: '/pipe', data: null, acl, flags: 0 });
      const N = 200;
      const requests = Number(process.env.TENURE_SOAK_REQUESTS ?? 5000);
      await Promise.all(
        Array.from({ length: N }, (_, i) => c.send({ type: OpCode.create, path: `/pipe/n${i}`, data: data(String(i)), acl, flags: 0 })),
      );
      const replies = await Promise.all(
        Array.from({ length: requests }, (_, i) => c.send({ type: OpCode.getData, path: `/pipe/n${i % N}`, watch: false })),
      );
      replies.forEach((r, i) => expect(r.response!.data!.toString()).toBe(String(i % N)));
      const zxids = replies.map((r) => r.zxid);
      expect(zxids.every((z, i) => i === 0 || z >= zxids[i - 1]!)).toBe(true);
    });
  });
});
