/**
 * The WebSocket transport against the embedded server's WebSocket listener: handshakes, requests,
 * notifications, re-attach, close reasons, and what the client sees of it (`createClient`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { WebSocketServer } from 'ws';
import {
  AbortError,
  ConnectionLossError,
  OPEN_ACL_UNSAFE,
  OpCode,
  ProtocolError,
  type CloseReason,
  type ConnectParams,
  type Connection,
  type WatcherEvent,
  InvalidArgumentError,
} from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { createClient } from '@tenure/client';
import { createWebSocketTransport, openerFor, parseWebSocketUrls, webSocket } from '@tenure/ws';

const params = (p: Partial<ConnectParams> = {}): ConnectParams => ({
  sessionId: 0n,
  passwd: Buffer.alloc(16),
  lastZxidSeen: 0n,
  timeoutMs: 10_000,
  readOnly: false,
  ...p,
});

function recorder(): {
  events: WatcherEvent[];
  closes: CloseReason[];
  closed: Promise<CloseReason>;
  handlers: { onEvent(e: WatcherEvent): void; onClose(r: CloseReason): void };
} {
  const events: WatcherEvent[] = [];
  const closes: CloseReason[] = [];
  let resolve!: (r: CloseReason) => void;
  const closed = new Promise<CloseReason>((r) => (resolve = r));
  return { events, closes, closed, handlers: { onEvent: (e) => events.push(e), onClose: (r) => (closes.push(r), resolve(r)) } };
}

async function connected(url: string, p?: Partial<ConnectParams>, handlers = recorder().handlers): Promise<Connection> {
  const r = await webSocket(url).connect(url, params(p), handlers);
  if (r.kind !== 'connected') throw new Error('expired');
  return r.connection;
}

describe('URLs', () => {
  test("one URL or a list; normalised; the list is the transport's hosts", () => {
    expect(webSocket('ws://127.0.0.1:9/zookeeper').hosts).toEqual(['ws://127.0.0.1:9/zookeeper']);
    const t = webSocket(['ws://A:1/zk', 'wss://b:2/zk', 'ws://a:1/zk']);
    expect(t.hosts).toEqual(['ws://a:1/zk', 'wss://b:2/zk']);
    expect(t.urls).toBe(t.hosts);
  });

  test('anything but ws:// and wss:// is refused with an InvalidArgumentError naming it', () => {
    expect(() => parseWebSocketUrls('http://a/zk')).toThrow(/http:\/\/a\/zk.*ws:\/\/ or wss:\/\//);
    expect(() => parseWebSocketUrls('not a url')).toThrow(InvalidArgumentError);
    expect(() => parseWebSocketUrls([])).toThrow(/no WebSocket URLs/);
    expect(() => webSocket('ws://a/zk#x')).toThrow(/fragment/);
  });
});

describe('against the embedded server', () => {
  let server: EmbeddedServer;
  let url: string;

  beforeEach(async () => {
    server = createEmbeddedServer({ tickMs: 200 });
    ({ url } = await server.listen({ port: 0, webSocket: { path: '/zookeeper' } }));
  });
  afterEach(async () => {
    await server.close();
  });

  test('handshake, requests in order, a notification, and close', async () => {
    const rec = recorder();
    const conn = await connected(url, {}, rec.handlers);
    expect(conn.sessionId).not.toBe(0n);
    expect(conn.negotiatedTimeoutMs).toBe(4000); // clamped to 20 ticks
    expect(conn.server).toBe(url);
    const created = await conn.send({ type: OpCode.create, path: '/n', data: Buffer.from('v1'), acl: [...OPEN_ACL_UNSAFE], flags: 0 });
    expect(created.err).toBe(0);
    // Pipelined: each reply matches its request.
    const replies = await Promise.all([
      conn.send({ type: OpCode.getData, path: '/n', watch: true }),
      conn.send({ type: OpCode.exists, path: '/missing', watch: false }),
      conn.send({ type: OpCode.ping }),
      conn.send({ type: OpCode.setData, path: '/n', data: Buffer.from('v2'), version: -1 }),
    ]);
    expect(replies.map((r) => r.err)).toEqual([0, -101, 0, 0]);
    expect((replies[0]!.response as { data: Buffer }).data.toString()).toBe('v1');
    await expect.poll(() => rec.events).toEqual([{ type: 3, state: 3, path: '/n' }]);
    conn.close();
    expect(conn.closed).toBe(true);
    await expect(conn.send({ type: OpCode.ping })).rejects.toBeInstanceOf(ConnectionLossError);
    expect(rec.closes).toEqual([{ kind: 'client', message: 'closed by the client' }]);
  });

  test('messages of every length encoding (7-bit, 16-bit, 64-bit) both ways, batched in one burst', async () => {
    // One burst: the client's batch and the server's flush each carry messages of all three sizes.
    const conn = await connected(url);
    const sizes = [0, 1, 125 - 40, 200, 65_535 - 60, 70_000, 300_000];
    const bodies = sizes.map((n, i) => Buffer.alloc(n, i + 1));
    const created = await Promise.all(
      bodies.map((data, i) => conn.send({ type: OpCode.create, path: `/len${i}`, data, acl: [...OPEN_ACL_UNSAFE], flags: 0 })),
    );
    expect(created.map((r) => r.err)).toEqual(sizes.map(() => 0));
    const read = await Promise.all(sizes.map((_, i) => conn.send({ type: OpCode.getData, path: `/len${i}`, watch: false })));
    expect(read.map((r) => (r.response as { data: Buffer }).data.equals(bodies[read.indexOf(r)]!))).toEqual(sizes.map(() => true));
    conn.close();
  });

  test('re-attach with the id and password; a wrong password is the zero-timeout answer', async () => {
    const first = await connected(url);
    const { sessionId, passwd } = first;
    first.close();
    const again = await connected(url, { sessionId, passwd });
    expect(again.sessionId).toBe(sessionId);
    const wrong = await webSocket(url).connect(url, params({ sessionId, passwd: Buffer.alloc(16, 7) }), recorder().handlers);
    expect(wrong).toEqual({ kind: 'expired' });
    again.close();
  });

  test('the server closing the session is reported once, pending requests reject', async () => {
    const rec = recorder();
    const conn = await connected(url, {}, rec.handlers);
    const pending = conn.send({ type: OpCode.sync, path: '/' });
    server.dropConnection(conn.sessionId);
    await expect(pending).rejects.toBeInstanceOf(ConnectionLossError);
    const reason = await rec.closed;
    expect(reason.kind).toMatch(/server|network/);
    expect(rec.closes).toHaveLength(1);
  });

  test('an aborted connect rejects with AbortError', async () => {
    const ac = new AbortController();
    server.pause(2000).catch(() => undefined);
    const attempt = webSocket(url).connect(url, params({ signal: ac.signal }), recorder().handlers);
    setTimeout(() => ac.abort(), 50);
    await expect(attempt).rejects.toBeInstanceOf(AbortError);
    await expect(webSocket(url).connect(url, params({ signal: AbortSignal.abort() }), recorder().handlers)).rejects.toBeInstanceOf(
      AbortError,
    );
  });

  test('a client over WebSocket: createClient({ transport: webSocket(url) })', async () => {
    await using client = createClient({ transport: webSocket([url]), sessionTimeoutMs: 4000 });
    await client.start();
    await client.create('/c', Buffer.from('x'));
    expect((await client.getData('/c')).data.toString()).toBe('x');
    // The client reconnects over WebSocket after the server drops the connection.
    const id = client.sessionId;
    server.dropConnection(id);
    await expect.poll(async () => (await client.getData('/c')).data.toString(), { timeout: 10_000 }).toBe('x');
    expect(client.sessionId).toBe(id);
  });
});

describe('connection failures', () => {
  test('nothing listening: ConnectionLossError naming the URL', async () => {
    const { freePort } = await import('@tenure/testing');
    const url = `ws://127.0.0.1:${await freePort()}/zookeeper`;
    await expect(webSocket(url).connect(url, params(), recorder().handlers)).rejects.toThrow(
      expect.objectContaining({ name: 'ConnectionLossError', message: expect.stringContaining(url) }),
    );
  });

  describe('a peer that is not a ZooKeeper server', () => {
    let wss: WebSocketServer;
    let url: string;
    let answer: (send: (data: Buffer | string) => void) => void;
    beforeEach(async () => {
      const http = createServer();
      wss = new WebSocketServer({ server: http });
      wss.on('connection', (ws) => ws.once('message', () => answer((d) => ws.send(d))));
      await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
      url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/`;
      wss.on('close', () => http.close());
    });
    afterEach(() => {
      for (const c of wss.clients) c.terminate();
      wss.close();
    });

    test.each([
      ['a text message', 'hello'],
      ['a message shorter than a length', Buffer.from([0, 0])],
      ['a message whose length does not match', Buffer.from([0, 0, 0, 9, 1, 2])],
      ['a negative length', Buffer.from([0xff, 0xff, 0xff, 0xff])],
    ])('%s as the handshake answer: ProtocolError', async (_name, bytes) => {
      answer = (send) => send(bytes);
      await expect(webSocket(url).connect(url, params(), recorder().handlers)).rejects.toBeInstanceOf(ProtocolError);
    });
  });
});

describe('the core takes any WebSocket constructor', () => {
  test('openerFor(ws) works as the global WebSocket would', async () => {
    const { default: WS } = await import('ws');
    await using server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const t = createWebSocketTransport(url, openerFor(WS as never));
    const r = await t.connect(url, params(), recorder().handlers);
    expect(r.kind).toBe('connected');
    if (r.kind === 'connected') {
      expect((await r.connection.send({ type: OpCode.exists, path: '/', watch: false })).err).toBe(0);
      r.connection.close();
    }
  });
});

describe('beside a TCP listener', () => {
  test('a client over TCP and one over WebSocket share a server: a watch set over WebSocket fires on a TCP write', async () => {
    await using server = createEmbeddedServer({ tickMs: 200 });
    const tcp = await server.listen();
    const { url } = await server.listen({ webSocket: {} });
    await using overTcp = createClient({ connectString: tcp.connectString, sessionTimeoutMs: 4000 });
    await using overWs = createClient({ transport: webSocket(url), sessionTimeoutMs: 4000 });
    await Promise.all([overTcp.start(), overWs.start()]);
    await overTcp.create('/shared', Buffer.from('1'));
    let fire!: (e: unknown) => void;
    const fired = new Promise<unknown>((resolve) => (fire = resolve));
    await overWs.getData('/shared', { watch: (e: unknown) => fire(e) });
    await overTcp.setData('/shared', Buffer.from('2'));
    expect(await fired).toMatchObject({ path: '/shared' });
    expect((await overWs.getData('/shared')).data.toString()).toBe('2');
  });
});
