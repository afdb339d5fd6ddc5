/**
 * The WebSocket → ZooKeeper gateway: frame for frame both ways (checked byte by byte against a
 * recording TCP peer that writes frames split and joined arbitrarily), sessions carried to a
 * ZooKeeper-protocol server (the embedded server's TCP listener here; real ZooKeeper in
 * test/conformance/zookeeper-ws-gateway.zk.test.ts), host rotation and closes either way.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { OpCode, encodeRequestFrame, frame } from '@tenure/protocol';
import { createEmbeddedServer, createWebSocketGateway, type EmbeddedServer, type WebSocketGateway } from '@tenure/server';
import { freePort } from '@tenure/testing';
import { create } from './harness.js';
import { RawWsPeer } from './ws-harness.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function gateway(options: Parameters<typeof createWebSocketGateway>[0]): Promise<WebSocketGateway> {
  const g = await createWebSocketGateway(options);
  cleanups.push(() => g.close());
  return g;
}

async function embeddedTcp(): Promise<{ server: EmbeddedServer; connectString: string }> {
  const server = createEmbeddedServer();
  cleanups.push(() => server.close());
  const { connectString } = await server.listen();
  return { server, connectString };
}

/** A TCP peer that records what it receives and lets the test write raw bytes back. */
async function recordingPeer(): Promise<{ hostPort: string; received: () => Buffer; socket: () => Promise<Socket>; server: Server }> {
  const chunks: Buffer[] = [];
  let resolveSocket!: (s: Socket) => void;
  const socketP = new Promise<Socket>((r) => (resolveSocket = r));
  const server = createServer((s) => {
    s.on('data', (c) => chunks.push(c));
    resolveSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return {
    hostPort: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => Buffer.concat(chunks),
    socket: () => socketP,
    server,
  };
}

describe('frame for frame', () => {
  test('messages go to TCP byte for byte; TCP frames come back one per message however the stream splits them', async () => {
    const tcp = await recordingPeer();
    const g = await gateway({ hosts: [tcp.hostPort] });
    const peer = await RawWsPeer.open(g.url);
    cleanups.push(() => peer.close());
    const sent = [frame(Buffer.from('hello')), frame(Buffer.alloc(0)), frame(Buffer.alloc(70_000, 7))];
    for (const m of sent) peer.send(m);
    const socket = await tcp.socket();
    await expect.poll(() => tcp.received().length).toBe(Buffer.concat(sent).length);
    expect(tcp.received().equals(Buffer.concat(sent))).toBe(true);

    const frames = [
      frame(Buffer.from('a')),
      frame(Buffer.from('bb')),
      frame(Buffer.alloc(100_000, 1)),
      frame(Buffer.alloc(0)),
      frame(Buffer.from('tail')),
    ];
    const stream = Buffer.concat(frames);
    // Two frames and a bit in one write, then the rest in odd pieces, one byte of a length prefix at a time.
    const cuts = [
      frames[0]!.length + frames[1]!.length + 3,
      frames[0]!.length + frames[1]!.length + 1000,
      stream.length - 7,
      stream.length - 6,
      stream.length - 5,
    ];
    let at = 0;
    for (const cut of [...cuts, stream.length]) {
      socket.write(stream.subarray(at, cut));
      at = cut;
      await new Promise((r) => setTimeout(r, 10));
    }
    const got: Buffer[] = [];
    for (let i = 0; i < frames.length; i++) got.push(await peer.next());
    expect(got.map((b) => b.length)).toEqual(frames.map((f) => f.length));
    got.forEach((b, i) => expect(b.equals(frames[i]!)).toBe(true));
  });

  test('a message that is not exactly one frame closes the connection (1002) and its TCP connection', async () => {
    for (const bad of ['text', Buffer.from([0, 0, 0, 9, 1]), Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.from([1, 2])]) {
      const tcp = await recordingPeer();
      const g = await gateway({ hosts: [tcp.hostPort] });
      const peer = await RawWsPeer.open(g.url);
      peer.send(bad);
      expect((await peer.closed).code).toBe(1002);
      const s = await tcp.socket();
      await new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));
      expect(tcp.received().length).toBe(0);
    }
  });
});

describe('sessions through the gateway', () => {
  test('a session to a ZooKeeper-protocol server; closing the WebSocket closes its TCP connection', async () => {
    const { server, connectString } = await embeddedTcp();
    const g = await gateway({ connectString });
    const peer = await RawWsPeer.session(g.url);
    expect(peer.sessionId).not.toBe(0n);
    expect((await peer.request(create('/through', Buffer.from('g')))).err).toBe(0);
    expect(server.node('/through')?.data.toString()).toBe('g');
    expect(g.connectionCount).toBe(1);
    peer.close();
    await expect.poll(() => server.connectionCount).toBe(0);
    await expect.poll(() => g.connectionCount).toBe(0);
    // The session outlives its connection, as over TCP.
    expect(server.sessions().map((s) => s.sessionId)).toContain(peer.sessionId);
  });

  test('the server closing the connection closes the WebSocket', async () => {
    const { server, connectString } = await embeddedTcp();
    const g = await gateway({ connectString });
    const peer = await RawWsPeer.session(g.url);
    server.dropConnection(peer.sessionId);
    expect((await peer.closed).code).toBe(1000);
  });

  test('hosts are taken round-robin; an unreachable one closes its WebSocket with 1013', async () => {
    const { connectString } = await embeddedTcp();
    const dead = `127.0.0.1:${await freePort()}`;
    const g = await gateway({ hosts: [dead, connectString] });
    const first = await RawWsPeer.open(g.url);
    cleanups.push(() => first.close());
    expect((await first.closed).code).toBe(1013);
    const second = await RawWsPeer.session(g.url);
    cleanups.push(() => second.close());
    expect((await second.request({ type: OpCode.ping })).err).toBe(0);
  });

  test('auth is end to end: a digest ACL set through the gateway holds for other sessions', async () => {
    const { server, connectString } = await embeddedTcp();
    const g = await gateway({ connectString });
    const peer = await RawWsPeer.session(g.url);
    cleanups.push(() => peer.close());
    peer.send(encodeRequestFrame(-4, { type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from('bob:secret') }));
    await peer.next();
    const acl = [{ perms: 31, id: { scheme: 'auth', id: '' } }];
    expect((await peer.request({ type: OpCode.create, path: '/private', data: Buffer.from('p'), acl, flags: 0 })).err).toBe(0);
    const other = await RawWsPeer.session(g.url);
    cleanups.push(() => other.close());
    expect((await other.request({ type: OpCode.getData, path: '/private', watch: false })).err).toBe(-102); // NOAUTH
    expect(server.node('/private')?.acl[0]?.id.scheme).toBe('digest');
  });

  test('options: hosts or connectString, no chroot', async () => {
    await expect(createWebSocketGateway({})).rejects.toThrow(/hosts or connectString/);
    await expect(createWebSocketGateway({ hosts: ['a:1'], connectString: 'a:1' })).rejects.toThrow(/hosts or connectString/);
    await expect(createWebSocketGateway({ connectString: 'a:1/app' })).rejects.toThrow(/chroot/);
    await expect(createWebSocketGateway({ hosts: ['a:1/x'] })).rejects.toThrow(/bad host/);
  });
});
