import { afterEach, describe, expect, test } from 'vitest';
import { ConnectionLossError, ErrorCode, EventType, OpCode } from '@tenure/protocol';
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
});
