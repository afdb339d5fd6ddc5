/**
 * The WebSocket listener's direct receive path (receiveBinaryMessagesDirectly): binary messages
 * read in place past `ws`' Receiver, which still gets control frames, fragments and anything it
 * must refuse. Raw masked frames are written to the socket under a `ws` client, cut at arbitrary
 * points, so messages span chunks and chunks hold many messages.
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { OpCode, decodeReply, encodeRequestFrame } from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { create } from './harness.js';
import { RawWsPeer } from './ws-harness.js';

let server: EmbeddedServer;
const peers: RawWsPeer[] = [];
afterEach(async () => {
  for (const p of peers.splice(0)) p.close();
  await server?.close();
});

async function session(url: string): Promise<RawWsPeer> {
  const p = await RawWsPeer.session(url);
  peers.push(p);
  return p;
}

/** A client's frame as RFC 6455 §5.2 spells it: FIN + `opcode`, masked with a fresh key unless `unmasked`. */
function clientFrame(opcode: number, payload: Buffer, { fin = true, unmasked = false } = {}): Buffer {
  const n = payload.length;
  const len =
    n < 126 ? Buffer.from([n]) : n < 65536 ? Buffer.from([126, n >> 8, n & 0xff]) : Buffer.concat([Buffer.from([127, 0, 0, 0, 0]), u32(n)]);
  if (!unmasked) len[0]! |= 0x80;
  const key = unmasked ? Buffer.alloc(0) : randomBytes(4);
  const body = Buffer.from(payload);
  if (!unmasked) for (let i = 0; i < n; i++) body[i]! ^= key[i & 3]!;
  return Buffer.concat([Buffer.from([(fin ? 0x80 : 0) | opcode]), len, key, body]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

const rawSocket = (p: RawWsPeer): Socket => (p.ws as unknown as { _socket: Socket })._socket;

/** Writes `bytes` in pieces of 1 to 97 bytes, yielding between them so that they arrive as many reads. */
async function writeInPieces(socket: Socket, bytes: Buffer): Promise<void> {
  for (let at = 0, k = 0; at < bytes.length; k++) {
    const n = 1 + ((k * 37) % 97);
    socket.write(bytes.subarray(at, at + n));
    at += n;
    if (k % 8 === 0) await new Promise((r) => setImmediate(r));
  }
}

describe('binary messages past ws’ Receiver', () => {
  test('a burst of requests cut at every kind of boundary is answered in order; a ping among them is answered', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const peer = await session(url);
    expect((await peer.request(create('/d', Buffer.alloc(300, 7)))).err).toBe(0);
    const pong = new Promise<Buffer>((resolve) => peer.ws.once('pong', resolve));
    const parts: Buffer[] = [];
    for (let xid = 100; xid < 400; xid++) {
      parts.push(clientFrame(2, encodeRequestFrame(xid, { type: OpCode.getData, path: '/d', watch: false })));
      if (xid === 250) parts.push(clientFrame(9, Buffer.from('are you there')));
    }
    await writeInPieces(rawSocket(peer), Buffer.concat(parts));
    for (let xid = 100; xid < 400; xid++) {
      const { header, response } = decodeReply((await peer.next()).subarray(4), OpCode.getData);
      expect(header).toMatchObject({ xid, err: 0 });
      expect(response).toMatchObject({ data: Buffer.alloc(300, 7) });
    }
    expect((await pong).toString()).toBe('are you there');
  });

  test('a message over 64 KiB arriving in many reads is served whole', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const peer = await session(url);
    const data = randomBytes(100_000);
    await writeInPieces(rawSocket(peer), clientFrame(2, encodeRequestFrame(1, create('/big', data))));
    expect(decodeReply((await peer.next()).subarray(4), OpCode.create).header.err).toBe(0);
    expect((await peer.request({ type: OpCode.getData, path: '/big', watch: false })).response).toMatchObject({ data });
  });

  test('a fragmented message goes to ws, which reassembles it; the connection carries on', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const peer = await session(url);
    const f = encodeRequestFrame(7, create('/frag', Buffer.from('x')));
    rawSocket(peer).write(Buffer.concat([clientFrame(2, f.subarray(0, 5), { fin: false }), clientFrame(0, f.subarray(5))]));
    expect(decodeReply((await peer.next()).subarray(4), OpCode.create).header).toMatchObject({ xid: 7, err: 0 });
    expect((await peer.request({ type: OpCode.exists, path: '/frag', watch: false })).err).toBe(0);
  });

  test('ws still refuses what it must: an unmasked frame (1002), a text message (1002)', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const unmasked = await session(url);
    rawSocket(unmasked).write(clientFrame(2, encodeRequestFrame(1, { type: OpCode.ping }), { unmasked: true }));
    expect((await unmasked.closed).code).toBe(1002);
    const text = await session(url);
    rawSocket(text).write(clientFrame(1, Buffer.from('hello')));
    expect((await text.closed).code).toBe(1002);
  });

  test('a close frame ends the connection cleanly; frames after it are not served', async () => {
    server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const peer = await session(url);
    const close = Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('bye')]);
    rawSocket(peer).write(Buffer.concat([clientFrame(8, close), clientFrame(2, encodeRequestFrame(1, create('/after')))]));
    expect((await peer.closed).code).toBe(1000);
    const other = await session(url);
    expect((await other.request({ type: OpCode.exists, path: '/after', watch: false })).err).not.toBe(0);
  });
});
