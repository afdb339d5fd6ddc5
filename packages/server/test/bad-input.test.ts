/**
 * Bad input: unknown op codes, malformed records (the in-process form of a frame that cannot be
 * decoded), invalid paths and oversized requests each get ZooKeeper's answer or a clean close, and
 * the server keeps serving everyone else.
 */
import { afterEach, describe, expect, test } from 'vitest';
import type { Request } from '@tenure/protocol';
import { ConnectionLossError, ErrorCode, OPEN_ACL_UNSAFE, OpCode } from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { create, open } from './harness.js';

let server: EmbeddedServer;
afterEach(async () => {
  await server?.close();
});

const raw = (r: unknown) => r as Request;

async function stillServing(s: EmbeddedServer): Promise<void> {
  const other = await open(s.transport());
  expect((await other.conn.send(create(`/alive-${Math.random().toString(36).slice(2)}`))).err).toBe(0);
  other.conn.close();
}

describe('unknown and refused ops', () => {
  test('a standalone check that would fail gets its error (3.8.0); one that would pass is refused and closes (3.8.5+)', async () => {
    server = createEmbeddedServer();
    const s = await open(server.transport());
    const zxid = server.zxid;
    expect(await s.conn.send({ type: OpCode.check, path: '/', version: 7 })).toEqual({
      zxid: zxid + 1n,
      err: ErrorCode.BADVERSION,
      response: undefined,
    });
    expect((await s.conn.send({ type: OpCode.check, path: '/none', version: -1 })).err).toBe(ErrorCode.NONODE);
    expect(await s.conn.send({ type: OpCode.check, path: '/', version: -1 })).toEqual({
      zxid: -1n,
      err: ErrorCode.UNIMPLEMENTED,
      response: undefined,
    });
    await s.closed;
  });

  for (const type of [999, 0, 10, 20, -10, -1]) {
    test(`op ${type} is answered UNIMPLEMENTED, then the connection closes`, async () => {
      server = createEmbeddedServer();
      const s = await open(server.transport());
      const r = await s.conn.send(raw({ type, path: '/x' }));
      expect(r).toEqual({ zxid: -1n, err: ErrorCode.UNIMPLEMENTED, response: undefined });
      expect((await s.closed).kind).toBe('server');
      await expect(s.conn.send({ type: OpCode.ping })).rejects.toBeInstanceOf(ConnectionLossError);
      await stillServing(server);
    });
  }

  test('a request that is not a record at all is UNIMPLEMENTED and closes', async () => {
    server = createEmbeddedServer();
    for (const bad of [null, 42, 'getData', {}, { type: 'x' }]) {
      const s = await open(server.transport());
      expect((await s.conn.send(raw(bad))).err).toBe(ErrorCode.UNIMPLEMENTED);
      await s.closed;
    }
    await stillServing(server);
  });

  test('sasl is AUTHFAILED and closes', async () => {
    server = createEmbeddedServer();
    const s = await open(server.transport());
    expect((await s.conn.send({ type: OpCode.sasl, token: Buffer.alloc(4) })).err).toBe(ErrorCode.AUTHFAILED);
    await s.closed;
  });

  test('reconfig is RECONFIGDISABLED and takes a zxid, as on a server without reconfigEnabled', async () => {
    server = createEmbeddedServer();
    const s = await open(server.transport());
    const before = server.zxid;
    const r = await s.conn.send({ type: OpCode.reconfig, joiningServers: null, leavingServers: null, newMembers: null, curConfigId: -1n });
    expect(r).toEqual({ zxid: before + 1n, err: ErrorCode.RECONFIGDISABLED, response: undefined });
    expect(s.conn.closed).toBe(false);
  });
});

describe('malformed records', () => {
  const cases: Array<[string, unknown]> = [
    ['a getData without a path', { type: OpCode.getData, watch: false }],
    ['a path that is a number', { type: OpCode.exists, path: 7, watch: false }],
    ['a watch flag that is a string', { type: OpCode.getData, path: '/', watch: 'yes' }],
    ['data that is a string', { type: OpCode.create, path: '/x', data: 'text', acl: [...OPEN_ACL_UNSAFE], flags: 0 }],
    ['an ACL entry without an id', { type: OpCode.create, path: '/x', data: null, acl: [{ perms: 31 }], flags: 0 }],
    ['flags beyond int32', { type: OpCode.create, path: '/x', data: null, acl: [...OPEN_ACL_UNSAFE], flags: 2 ** 40 }],
    ['a version that is not an integer', { type: OpCode.setData, path: '/', data: null, version: 1.5 }],
    ['a TTL that is a number', { type: OpCode.createTTL, path: '/x', data: null, acl: [...OPEN_ACL_UNSAFE], flags: 5, ttl: 100 }],
    ['multi ops that are not a list', { type: OpCode.multi, ops: { 0: 1 } }],
    ['a multi op that is null', { type: OpCode.multi, ops: [null] }],
    ['a multi op with an unknown type', { type: OpCode.multi, ops: [{ type: OpCode.sync, path: '/' }] }],
    ['a multi op with a bad field', { type: OpCode.multi, ops: [{ type: OpCode.delete, path: '/x', version: 'any' }] }],
    [
      'setWatches lists holding numbers',
      { type: OpCode.setWatches, relativeZxid: 0n, dataWatches: [1], existWatches: [], childWatches: [] },
    ],
    [
      'a relativeZxid beyond int64',
      { type: OpCode.setWatches, relativeZxid: 1n << 64n, dataWatches: [], existWatches: [], childWatches: [] },
    ],
  ];
  for (const [what, req] of cases) {
    test(`${what} is MARSHALLINGERROR; the connection stays usable`, async () => {
      server = createEmbeddedServer();
      const s = await open(server.transport());
      const zxid = server.zxid;
      const r = await s.conn.send(raw(req));
      expect(r.err).toBe(ErrorCode.MARSHALLINGERROR);
      expect(r.response).toBeUndefined();
      expect(server.zxid).toBe(zxid);
      expect(server.node('/x')).toBeUndefined();
      expect((await s.conn.send({ type: OpCode.ping })).err).toBe(0);
    });
  }
});

describe('invalid paths', () => {
  test('writes answer BADARGUMENTS where ZooKeeper validates, NONODE where it looks the parent up first', async () => {
    server = createEmbeddedServer();
    const s = await open(server.transport());
    await s.conn.send(create('/p'));
    const code = async (r: Request) => (await s.conn.send(r)).err;
    expect(await code(create('p'))).toBe(ErrorCode.BADARGUMENTS);
    expect(await code(create(''))).toBe(ErrorCode.BADARGUMENTS);
    expect(await code(create('/p/'))).toBe(ErrorCode.BADARGUMENTS);
    expect(await code(create('/p/..'))).toBe(ErrorCode.BADARGUMENTS);
    expect(await code(create('/p/a\u0000'))).toBe(ErrorCode.BADARGUMENTS);
    expect(await code(create('/p/\ud800'))).toBe(ErrorCode.BADARGUMENTS);
    expect(await code(create('/p//a'))).toBe(ErrorCode.NONODE);
    expect(await code({ type: OpCode.setData, path: '/p/', data: null, version: -1 })).toBe(ErrorCode.BADARGUMENTS);
    expect(await code({ type: OpCode.setACL, path: 'p', acl: [...OPEN_ACL_UNSAFE], version: -1 })).toBe(ErrorCode.BADARGUMENTS);
    expect(await code({ type: OpCode.delete, path: 'p', version: -1 })).toBe(ErrorCode.BADARGUMENTS);
    expect(await code({ type: OpCode.delete, path: '/', version: -1 })).toBe(ErrorCode.BADARGUMENTS);
    expect(await code({ type: OpCode.exists, path: '/p\u0000', watch: false })).toBe(ErrorCode.BADARGUMENTS);
    expect(await code({ type: OpCode.getData, path: 'p', watch: true })).toBe(ErrorCode.NONODE);
    expect(server.watchCounts().get(s.conn.sessionId) ?? 0).toBe(0);
    expect(server.node('/p')!.children).toEqual([]);
  });
});

describe('oversized requests', () => {
  test('a request larger than maxBufferBytes closes its connection without an answer; others carry on', async () => {
    server = createEmbeddedServer({ maxBufferBytes: 1024 });
    const t = server.transport();
    const s = await open(t);
    expect((await s.conn.send(create('/before'))).err).toBe(0);
    const big = s.conn.send(create('/big', Buffer.alloc(1024)));
    const after = s.conn.send(create('/after'));
    await expect(big).rejects.toBeInstanceOf(ConnectionLossError);
    await expect(after).rejects.toBeInstanceOf(ConnectionLossError);
    expect((await s.closed).message).toMatch(/maxBufferBytes/);
    expect(server.node('/big')).toBeUndefined();
    expect(server.node('/after')).toBeUndefined();
    const again = await open(t, { sessionId: s.conn.sessionId, passwd: s.conn.passwd });
    expect((await again.conn.send(create('/small', Buffer.alloc(900)))).err).toBe(0);
    await stillServing(server);
  });
});

describe('misbehaving callbacks', () => {
  test('a client callback that throws does not stop the server or other connections', async () => {
    const warnings: unknown[] = [];
    server = createEmbeddedServer({ logger: { warn: (o) => warnings.push(o) } });
    const t = server.transport();
    const bad = await t.connect(
      'embedded',
      { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 10_000, readOnly: false },
      {
        onEvent() {
          throw new Error('boom');
        },
        onClose() {
          throw new Error('boom on close');
        },
      },
    );
    if (bad.kind !== 'connected') throw new Error('not connected');
    const good = await open(t);
    await good.conn.send(create('/n'));
    await bad.connection.send({ type: OpCode.getData, path: '/n', watch: true });
    await good.conn.send({ type: OpCode.getData, path: '/n', watch: true });
    await good.conn.send({ type: OpCode.setData, path: '/n', data: null, version: -1 });
    expect(await good.eventCount(1)).toHaveLength(1);
    expect((await bad.connection.send({ type: OpCode.ping })).err).toBe(0);
    bad.connection.close();
    await new Promise((r) => setTimeout(r, 10));
    expect(warnings).toHaveLength(2);
    await stillServing(server);
  });
});
