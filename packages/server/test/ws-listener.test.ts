/**
 * The WebSocket listener: one path, browser origins, message size (maxBuffer), ping/pong for dead
 * peers, the handshake timeout, and faults and limits as on TCP (it stands on the front door).
 */
import { afterEach, describe, expect, test } from 'vitest';
import { OpCode, encodeRequestFrame } from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { create, open } from './harness.js';
import { RawWsPeer } from './ws-harness.js';

let server: EmbeddedServer;
const peers: RawWsPeer[] = [];
afterEach(async () => {
  for (const p of peers.splice(0)) p.close();
  await server?.close();
});

async function session(url: string, options?: Parameters<typeof RawWsPeer.session>[1]) {
  const p = await RawWsPeer.session(url, options);
  peers.push(p);
  return p;
}

describe('the upgrade', () => {
  test('only the configured path is upgraded; plain HTTP gets 426', async () => {
    server = createEmbeddedServer();
    const { url, port } = await server.listen({ webSocket: { path: '/zk' } });
    expect(url).toBe(`ws://127.0.0.1:${port}/zk`);
    await expect(RawWsPeer.open(`ws://127.0.0.1:${port}/zookeeper`)).rejects.toThrow(/404/);
    await expect(RawWsPeer.open(`ws://127.0.0.1:${port}/zk?x=1`)).resolves.toBeInstanceOf(RawWsPeer);
    const res = await fetch(`http://127.0.0.1:${port}/zk`);
    expect(res.status).toBe(426);
  });

  test('origins: a listed origin and no Origin at all are accepted, others get 403', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: { origins: ['https://app.example.com', 'http://localhost:5173'] } });
    expect((await session(url, { origin: 'https://app.example.com' })).sessionId).not.toBe(0n);
    expect((await session(url, { origin: 'https://APP.example.com:443' })).sessionId).not.toBe(0n); // as browsers normalise it
    expect((await session(url, { origin: 'http://localhost:5173' })).sessionId).not.toBe(0n);
    expect((await session(url)).sessionId).not.toBe(0n); // a non-browser client
    await expect(RawWsPeer.open(url, { origin: 'https://evil.example.com' })).rejects.toThrow(/403/);
    await expect(RawWsPeer.open(url, { origin: 'http://app.example.com' })).rejects.toThrow(/403/);
    await expect(RawWsPeer.open(url, { origin: 'null' })).rejects.toThrow(/403/);
  });

  test('without origins every origin is accepted', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    expect((await session(url, { origin: 'https://anything.example' })).sessionId).not.toBe(0n);
  });

  test('a TCP and a WebSocket listener side by side serve the same tree and sessions', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const tcp = await server.listen();
    expect(tcp.port).not.toBe(new URL(url).port);
    const peer = await session(url);
    expect((await peer.request(create('/from-ws', Buffer.from('w')))).err).toBe(0);
    const local = await open(server.transport());
    expect((await local.conn.send({ type: OpCode.exists, path: '/from-ws', watch: false })).err).toBe(0);
    expect(server.sessions().map((s) => s.sessionId)).toContain(peer.sessionId);
    local.conn.close();
  });
});

describe('limits', () => {
  test('a message over maxBuffer + 4 closes its connection (1009); others carry on', async () => {
    server = createEmbeddedServer({ maxBufferBytes: 4096 });
    const { url } = await server.listen({ webSocket: {} });
    const other = await session(url);
    const big = await session(url);
    // Exactly maxBuffer of frame is a request like any other.
    const exact = create('/exact', Buffer.alloc(4096 - 64));
    const bytes = encodeRequestFrame(1, exact);
    const padded = Buffer.concat([bytes, Buffer.alloc(4096 + 4 - bytes.length)]);
    padded.writeInt32BE(4096, 0);
    big.send(padded);
    expect((await big.next()).readInt32BE(16)).toBe(0); // err 0: trailing bytes of a create are ignored
    big.send(Buffer.alloc(4096 + 5));
    expect((await big.closed).code).toBe(1009);
    expect((await other.request({ type: OpCode.exists, path: '/exact', watch: false })).err).toBe(0);
  });

  test('a frame announcing more than maxBuffer closes the connection through the request pipeline', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const peer = await session(url);
    expect((await peer.request({ type: OpCode.exists, path: '/', watch: false })).err).toBe(0);
    const huge = Buffer.alloc(8);
    huge.writeInt32BE(0x7fffffff, 0);
    // Held by a pause like any request (fault gate), then refused.
    const paused = server.pause(200);
    peer.send(huge);
    const t0 = performance.now();
    const closed = await peer.closed;
    expect(performance.now() - t0).toBeGreaterThanOrEqual(150);
    expect(closed).toMatchObject({ code: 1000, reason: expect.stringMatching(/maxBufferBytes/) });
    await paused;
    // The session lives on: it can be re-attached.
    expect(server.sessions().map((s) => s.sessionId)).toContain(peer.sessionId);
  });

  test('a peer that stops answering pings is closed; one that answers stays', async () => {
    // Generous for a loaded machine: the live peer has a whole interval to answer each ping.
    const interval = 400;
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: { pingIntervalMs: interval } });
    const dead = await session(url, { autoPong: false });
    const alive = await session(url);
    const t0 = performance.now();
    const closed = await dead.closed;
    expect(closed.code).toBe(1006); // terminated, no close frame
    // Closed at the second ping after the unanswered one: about two intervals.
    expect(performance.now() - t0).toBeLessThan(10 * interval);
    await new Promise((r) => setTimeout(r, 3 * interval));
    expect(alive.isOpen).toBe(true);
    expect((await alive.request({ type: OpCode.ping })).err).toBe(0);
  });

  test('a connection that never sends a handshake is closed after handshakeTimeoutMs', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {}, handshakeTimeoutMs: 200 });
    const peer = await RawWsPeer.open(url);
    peers.push(peer);
    await peer.closed;
  });
});

describe('faults act on WebSocket connections as on TCP', () => {
  test('pause holds requests; they are served when it ends', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const peer = await session(url);
    const paused = server.pause(300);
    const t0 = performance.now();
    const reply = await peer.request(create('/held'));
    expect(reply.err).toBe(0);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
    await paused;
  });

  test('dropConnection, restart and close close the WebSocket; restart refuses for a while', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const a = await session(url);
    expect(server.dropConnection(a.sessionId)).toBe(true);
    await a.closed;
    const b = await session(url);
    const restarted = server.restart(300);
    await b.closed;
    // A handshake while refusing is closed unanswered.
    const c = await RawWsPeer.open(url);
    peers.push(c);
    await expect(c.handshake()).rejects.toThrow(/closed/);
    await restarted;
    const d = await session(url);
    const closing = server.close();
    await d.closed;
    await closing;
  });

  test('loseNextReply: the request is applied, the connection drops before its reply', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const peer = await session(url);
    server.loseNextReply(peer.sessionId);
    await expect(peer.request(create('/lost'))).rejects.toThrow(/closed/);
    expect(server.node('/lost')).toBeDefined();
  });
});

describe('connection limits act on WebSocket connections as on TCP', () => {
  test('globalOutstandingLimit: over the limit the socket stops being read; every request is answered, in order', async () => {
    server = createEmbeddedServer({ globalOutstandingLimit: 10 });
    const { url } = await server.listen({ webSocket: {} });
    const peer = await session(url);
    const paused = server.pause(500);
    for (let i = 1; i <= 300; i++) peer.send(encodeRequestFrame(i, { type: OpCode.exists, path: '/', watch: false }));
    await new Promise((r) => setTimeout(r, 250));
    // As on TCP: the server holds limit + 1, the rest wait unread (here: in `ws` and the kernel).
    expect(server.connectionLimits.outstanding).toBe(11);
    await paused;
    const xids: number[] = [];
    for (let i = 0; i < 300; i++) xids.push((await peer.next()).readInt32BE(4));
    expect(xids).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(server.connectionLimits.outstanding).toBe(0);
  });

  test('maxClientCnxns: a handshake over the limit from one address is closed unanswered', async () => {
    server = createEmbeddedServer({ maxClientCnxns: 2 });
    const { url } = await server.listen({ webSocket: {} });
    await session(url);
    await session(url);
    const third = await RawWsPeer.open(url);
    peers.push(third);
    await expect(third.handshake()).rejects.toThrow(/closed/);
  });

  test('shutdown: no new connections, requests taken in are answered, then the WebSockets close', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const peer = await session(url);
    const paused = server.pause(300);
    for (let i = 1; i <= 20; i++) peer.send(encodeRequestFrame(i, create(`/s${i}`)));
    await expect.poll(() => server.connectionLimits.outstanding).toBe(20);
    const down = server.shutdown({ timeoutMs: 5000 });
    await expect(RawWsPeer.open(url)).rejects.toThrow();
    for (let i = 0; i < 20; i++) expect((await peer.next()).readInt32BE(16)).toBe(0); // err 0 each
    await down;
    await paused;
    await peer.closed;
    expect(server.closed).toBe(true);
  });
});
