/**
 * Bad input on both links a wire session runs over (TCP and WebSocket), and on the WebSocket
 * gateway: fuzzed messages (random binary, text,
 * truncated frames, huge and negative length prefixes, oversized messages, garbage handshakes and
 * garbage requests inside well-formed frames) from many connections at once. The server never
 * crashes, each bad connection is answered or closed on its own, and witness sessions opened
 * beforehand keep being served throughout. Seeded, so a failure replays.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { OpCode, encodeConnectRequest, encodeRequestFrame, frame } from '@tenure/protocol';
import { createEmbeddedServer, createWebSocketGateway, type EmbeddedServer } from '@tenure/server';
import { create } from './harness.js';
import { RawWsPeer } from './ws-harness.js';
import { LINKS, session, type WirePeer } from './wire-peer.js';
import { seededRandom } from '@tenure/testing';

const MAX_BUFFER = 64 * 1024;
const OPS = Object.values(OpCode).filter((op) => op !== OpCode.closeSession);

type Kind =
  | 'random binary'
  | 'text'
  | 'truncated frame'
  | 'huge length'
  | 'negative length'
  | 'oversized'
  | 'garbage handshake'
  | 'garbage request'
  | 'empty';

function badMessage(kind: Kind, rnd: () => number): Buffer | string {
  const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(rnd() * 256)));
  const prefixed = (length: number, body: Buffer): Buffer => {
    const b = Buffer.alloc(4 + body.length);
    b.writeInt32BE(length, 0);
    body.copy(b, 4);
    return b;
  };
  switch (kind) {
    case 'random binary':
      return bytes(Math.floor(rnd() * 200));
    case 'text':
      return rnd() < 0.5 ? 'ruok' : JSON.stringify({ type: 4, path: '/' });
    case 'truncated frame': {
      const body = bytes(Math.floor(rnd() * 60));
      return prefixed(body.length + 1 + Math.floor(rnd() * 100), body);
    }
    case 'huge length':
      return prefixed(rnd() < 0.5 ? 0x7fffffff : MAX_BUFFER + 1 + Math.floor(rnd() * 1e6), bytes(Math.floor(rnd() * 16)));
    case 'negative length':
      return prefixed(-1 - Math.floor(rnd() * 1e6), bytes(Math.floor(rnd() * 16)));
    case 'oversized':
      return Buffer.alloc(MAX_BUFFER + 5 + Math.floor(rnd() * MAX_BUFFER), 0x61);
    case 'garbage handshake':
      return frame(bytes(Math.floor(rnd() * 60)));
    case 'garbage request': {
      // A well-formed frame: a plausible header (xid, op code) and a random body.
      const head = Buffer.alloc(8);
      head.writeInt32BE(Math.floor(rnd() * 1000) + 1, 0);
      head.writeInt32BE(rnd() < 0.8 ? OPS[Math.floor(rnd() * OPS.length)]! : Math.floor(rnd() * 400) - 200, 4);
      return frame(Buffer.concat([head, bytes(Math.floor(rnd() * 80))]));
    }
    case 'empty':
      return Buffer.alloc(0);
  }
}

const KINDS: Kind[] = [
  'random binary',
  'text',
  'truncated frame',
  'huge length',
  'negative length',
  'oversized',
  'garbage handshake',
  'garbage request',
  'empty',
];

interface Tally {
  connections: number;
  messages: Record<string, number>;
  /** How each fuzz connection ended: close code, or 'open' when it was still open after the wait. */
  endings: Record<string, number>;
  repliesToGarbage: number;
  witnessRequests: number;
}

/** Witnesses: sessions that keep making requests while the fuzzing runs; all must succeed. */
async function witnesses(open: () => Promise<WirePeer>, n: number): Promise<{ stop(): Promise<number> }> {
  const peers = await Promise.all(Array.from({ length: n }, () => session(open)));
  let stopped = false;
  let done = 0;
  const loops = peers.map(async (p, i) => {
    for (let k = 0; !stopped; k++) {
      const path = `/w${i}-${k}`;
      expect((await p.request(create(path, Buffer.from('x')))).err).toBe(0);
      expect((await p.request({ type: OpCode.getData, path, watch: false })).err).toBe(0);
      expect((await p.request({ type: OpCode.delete, path, version: -1 })).err).toBe(0);
      done += 3;
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
      for (const p of peers) {
        expect(p.isOpen).toBe(true);
        p.close();
      }
      return done;
    },
  };
}

async function fuzz(open: () => Promise<WirePeer>, seed: number, connections: number, tally: Tally): Promise<void> {
  const rnd = seededRandom(seed);
  const one = async (): Promise<void> => {
    const peer = await open();
    tally.connections++;
    if (rnd() < 0.5) {
      // Half of them get a session first, so the garbage meets the request pipeline.
      peer.send(
        frame(
          encodeConnectRequest({
            protocolVersion: 0,
            lastZxidSeen: 0n,
            timeOut: 4000,
            sessionId: 0n,
            passwd: Buffer.alloc(16),
            readOnly: false,
          }),
        ),
      );
      await peer.next().catch(() => undefined);
    }
    const before = peer.messages.length;
    const count = 1 + Math.floor(rnd() * 4);
    for (let i = 0; i < count && peer.isOpen; i++) {
      const kind = KINDS[Math.floor(rnd() * KINDS.length)]!;
      tally.messages[kind] = (tally.messages[kind] ?? 0) + 1;
      peer.send(badMessage(kind, rnd));
    }
    const ended = await Promise.race([
      peer.closed.then((c) => String(c.code)),
      new Promise<string>((r) => setTimeout(() => r('open'), 400)),
    ]);
    tally.endings[ended] = (tally.endings[ended] ?? 0) + 1;
    tally.repliesToGarbage += peer.messages.length - before;
    peer.close();
  };
  const lanes = 16;
  let left = connections;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (left-- > 0) await one();
    }),
  );
}

let server: EmbeddedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.each(LINKS)('fuzzed input on $name', (link) => {
  test('the listener: bad connections close on their own, witnesses are served throughout', async () => {
    server = createEmbeddedServer({ maxBufferBytes: MAX_BUFFER, tickMs: 1000 });
    const open = await link.listen(server);
    const tally: Tally = { connections: 0, messages: {}, endings: {}, repliesToGarbage: 0, witnessRequests: 0 };
    const w = await witnesses(open, 3);
    await fuzz(open, 0x7e5e, 400, tally);
    tally.witnessRequests = await w.stop();
    console.info(`${link.name} listener fuzz: ${JSON.stringify(tally)}`);
    expect(tally.connections).toBe(400);
    expect(tally.witnessRequests).toBeGreaterThan(30);
    // Every fuzz connection is gone from the server.
    await expect.poll(() => server!.connectionCount, { timeout: 5000 }).toBe(0);
    const after = await session(open);
    expect((await after.request({ type: OpCode.exists, path: '/', watch: false })).err).toBe(0);
    after.close();
  });

  test("a garbage request inside a good frame gets ZooKeeper's answer (UNIMPLEMENTED or MARSHALLINGERROR) then a close", async () => {
    server = createEmbeddedServer();
    const open = await link.listen(server);
    const peer = await session(open);
    const unknown = Buffer.alloc(8);
    unknown.writeInt32BE(5, 0);
    unknown.writeInt32BE(999, 4);
    peer.send(frame(unknown));
    const reply = await peer.next();
    expect(reply.readInt32BE(4)).toBe(5); // xid
    expect(reply.readInt32BE(16)).toBe(-6); // UNIMPLEMENTED
    await peer.closed;
    const short = await session(open);
    // A whole frame whose request header is cut short: the link goes.
    short.send(frame(encodeRequestFrame(1, { type: OpCode.getData, path: '/', watch: false }).subarray(4, 10)));
    expect((await short.closed).code).toBe(link.badInputEnding);
  });
});

test('the gateway: bad messages close their own connection only', async () => {
  server = createEmbeddedServer({ maxBufferBytes: MAX_BUFFER, tickMs: 1000 });
  const { connectString } = await server.listen();
  await using gateway = await createWebSocketGateway({ connectString, maxFrameBytes: MAX_BUFFER });
  const open = () => RawWsPeer.open(gateway.url);
  const tally: Tally = { connections: 0, messages: {}, endings: {}, repliesToGarbage: 0, witnessRequests: 0 };
  const w = await witnesses(open, 3);
  await fuzz(open, 0xbad, 200, tally);
  tally.witnessRequests = await w.stop();
  console.info(`gateway fuzz: ${JSON.stringify(tally)}`);
  expect(tally.witnessRequests).toBeGreaterThan(15);
  await expect.poll(() => gateway.connectionCount, { timeout: 5000 }).toBe(0);
  await expect.poll(() => server!.connectionCount, { timeout: 5000 }).toBe(0);
});
