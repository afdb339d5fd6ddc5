/**
 * The TCP transport against a scripted fake server: what a real ZooKeeper will not do on demand
 * (read-only handshakes, garbage, truncated and oversized frames, mismatched xids, arbitrary TCP
 * chunking). Every bad input must end in a typed error and a clean close, never a crash.
 */
import { afterEach, describe, expect, test } from 'vitest';
import fc from 'fast-check';
import {
  AbortError,
  ConnectionLossError,
  EventType,
  FrameLengthError,
  NotReadOnlyError,
  OpCode,
  ProtocolError,
  encodeNotificationFrame,
  encodeReplyFrame,
  type Stat,
} from '@tenure/protocol';
import { zookeeper } from '@tenure/zookeeper';
import { FakeServer, type FakePeer } from './fake-server.js';
import { NEW_SESSION, open, recorder } from './connection-harness.js';

const servers: FakeServer[] = [];
async function fake(onPeer: (peer: FakePeer) => void | Promise<void>): Promise<FakeServer> {
  const s = await FakeServer.start(onPeer);
  servers.push(s);
  return s;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const stat: Stat = {
  czxid: 1n,
  mzxid: 2n,
  ctime: 3,
  mtime: 4,
  version: 5,
  cversion: 6,
  aversion: 7,
  ephemeralOwner: 0n,
  dataLength: 1,
  numChildren: 0,
  pzxid: 8n,
};

/** A peer that accepts the handshake, then hands control to `then`. */
function accepting(then: (peer: FakePeer) => Promise<void> | void, opts?: Parameters<FakePeer['accept']>[0]) {
  return async (peer: FakePeer) => {
    await peer.connectRequest();
    peer.accept(opts);
    await then(peer);
  };
}

describe('handshake', () => {
  test('sends every ConnectRequest field and reports a read-only server', async () => {
    let seen: unknown;
    const s = await fake(async (peer) => {
      seen = await peer.connectRequest();
      peer.accept({ readOnly: true, timeOut: 5000, sessionId: 0x77n });
    });
    const passwd = Buffer.alloc(16, 3);
    const { connection } = await open(zookeeper(s.address), {
      sessionId: 0x77n,
      passwd,
      lastZxidSeen: 42n,
      timeoutMs: 9000,
      readOnly: true,
    });
    expect(seen).toEqual({ protocolVersion: 0, lastZxidSeen: 42n, timeOut: 9000, sessionId: 0x77n, passwd, readOnly: true });
    expect(connection).toMatchObject({ readOnly: true, negotiatedTimeoutMs: 5000, sessionId: 0x77n, server: s.address });
    expect(connection.passwd).toEqual(Buffer.alloc(16, 0xab));
    connection.close();
  });

  test('a 36-byte answer without the readOnly byte reads as read-write', async () => {
    const s = await fake(accepting(() => {}, { includeReadOnly: false }));
    const { connection } = await open(zookeeper(s.address));
    expect(connection.readOnly).toBe(false);
    connection.close();
  });

  test('a zero timeout answers expired, without onClose', async () => {
    const s = await fake(accepting((peer) => void peer.socket.end(), { timeOut: 0 }));
    const rec = recorder();
    const result = await zookeeper(s.address).connect(s.address, NEW_SESSION, rec.handlers);
    expect(result).toEqual({ kind: 'expired' });
    await new Promise((r) => setTimeout(r, 20));
    expect(rec.closes).toEqual([]);
  });

  test('a server that closes without answering rejects with ConnectionLossError', async () => {
    const s = await fake(async (peer) => {
      await peer.connectRequest();
      peer.socket.end();
    });
    await expect(zookeeper(s.address).connect(s.address, NEW_SESSION, recorder().handlers)).rejects.toBeInstanceOf(ConnectionLossError);
  });

  test('a bare error header instead of a ConnectResponse (3.8 read-only refusal) rejects with that KeeperError', async () => {
    const s = await fake(async (peer) => {
      await peer.connectRequest();
      const header = Buffer.alloc(20);
      header.writeInt32BE(16, 0);
      header.writeInt32BE(0, 4);
      header.writeBigInt64BE(-1n, 8);
      header.writeInt32BE(-119, 16);
      peer.socket.end(header);
    });
    const attempt = zookeeper(s.address).connect(s.address, NEW_SESSION, recorder().handlers);
    await expect(attempt).rejects.toBeInstanceOf(NotReadOnlyError);
  });

  test('garbage instead of a ConnectResponse rejects with ProtocolError', async () => {
    const s = await fake(async (peer) => {
      await peer.connectRequest();
      peer.socket.write(Buffer.from([0, 0, 0, 3, 1, 2, 3]));
    });
    await expect(zookeeper(s.address).connect(s.address, NEW_SESSION, recorder().handlers)).rejects.toBeInstanceOf(ProtocolError);
  });

  test('params.signal aborts an attempt the server never answers, and a pre-aborted one', async () => {
    let peers = 0;
    const s = await fake(() => void peers++);
    const ac = new AbortController();
    const attempt = zookeeper(s.address).connect(s.address, { ...NEW_SESSION, signal: ac.signal }, recorder().handlers);
    setTimeout(() => ac.abort(), 30);
    await expect(attempt).rejects.toBeInstanceOf(AbortError);
    await expect(
      zookeeper(s.address).connect(s.address, { ...NEW_SESSION, signal: AbortSignal.abort() }, recorder().handlers),
    ).rejects.toBeInstanceOf(AbortError);
    expect(peers).toBe(1);
  });
});

describe('requests and replies', () => {
  test('xids count up from 1; ping uses -2 and auth -4, answered out of band', async () => {
    const s = await fake(
      accepting(async (peer) => {
        const a = await peer.nextRequest();
        const b = await peer.nextRequest();
        const ping = await peer.nextRequest();
        const auth = await peer.nextRequest();
        expect([a.header.xid, b.header.xid, ping.header.xid, auth.header.xid]).toEqual([1, 2, -2, -4]);
        // Auth and ping overtake the replies to earlier requests.
        peer.socket.write(encodeReplyFrame({ xid: -4, zxid: 0n, err: 0 }, OpCode.auth));
        peer.socket.write(encodeReplyFrame({ xid: -2, zxid: 9n, err: 0 }, OpCode.ping));
        peer.socket.write(encodeReplyFrame({ xid: 1, zxid: 10n, err: 0 }, OpCode.exists, { stat }));
        peer.socket.write(encodeReplyFrame({ xid: 2, zxid: 11n, err: -101 }, OpCode.getData));
      }),
    );
    const { connection } = await open(zookeeper(s.address));
    const order: string[] = [];
    const a = connection.send({ type: OpCode.exists, path: '/a', watch: false }).then((r) => (order.push('a'), r));
    const b = connection.send({ type: OpCode.getData, path: '/b', watch: false }).then((r) => (order.push('b'), r));
    const ping = connection.send({ type: OpCode.ping }).then((r) => (order.push('ping'), r));
    const auth = connection
      .send({ type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from('u:p') })
      .then((r) => (order.push('auth'), r));
    expect(await a).toEqual({ zxid: 10n, err: 0, response: { stat } });
    expect(await b).toEqual({ zxid: 11n, err: -101, response: undefined });
    expect(await ping).toEqual({ zxid: 9n, err: 0, response: undefined });
    expect(await auth).toEqual({ zxid: 0n, err: 0, response: undefined });
    expect(order).toEqual(['auth', 'ping', 'a', 'b']);
    connection.close();
  });

  test('requests sent in one burst leave in one write', async () => {
    let chunks = 0;
    let bytes = 0;
    const N = 300;
    const s = await fake(
      accepting((peer) => {
        peer.socket.on('data', (c: Buffer) => {
          chunks++;
          bytes += c.length;
        });
      }),
    );
    const { connection } = await open(zookeeper(s.address));
    for (let i = 0; i < N; i++) connection.send({ type: OpCode.getData, path: '/some/node', watch: false }).catch(() => {});
    const frameBytes = 4 + 8 + 4 + '/some/node'.length + 1;
    await new Promise((r) => setTimeout(r, 100));
    expect(bytes).toBe(N * frameBytes);
    expect(chunks).toBeLessThanOrEqual(3);
    connection.close();
  });

  test('the chroot is applied to requests and stripped from replies and events', async () => {
    const s = await fake(
      accepting(async (peer) => {
        const create = await peer.nextRequest();
        expect(create.request).toMatchObject({ path: '/app/x' });
        peer.socket.write(encodeNotificationFrame(-1n, { type: EventType.NodeCreated, state: 3, path: '/app/x' }));
        peer.socket.write(encodeNotificationFrame(-1n, { type: EventType.NodeDataChanged, state: 3, path: '/app' }));
        peer.socket.write(encodeNotificationFrame(-1n, { type: EventType.NodeDataChanged, state: 3, path: '/zookeeper/config' }));
        peer.socket.write(encodeReplyFrame({ xid: create.header.xid, zxid: 5n, err: 0 }, OpCode.create, { path: '/app/x' }));
        const eph = await peer.nextRequest();
        expect(eph.request).toEqual({ type: OpCode.getEphemerals, prefixPath: '/app/' });
        peer.socket.write(
          encodeReplyFrame({ xid: eph.header.xid, zxid: 6n, err: 0 }, OpCode.getEphemerals, { ephemerals: ['/app/x', '/apple/y'] }),
        );
      }),
    );
    const t = zookeeper(`${s.address}/app`);
    const c = await open(t);
    const created = await c.connection.send({ type: OpCode.create, path: '/x', data: null, acl: [], flags: 0 });
    expect(created.response).toEqual({ path: '/x' });
    expect(c.events.map((e) => e.event.path)).toEqual(['/x', '/', '/zookeeper/config']);
    const eph = await c.connection.send({ type: OpCode.getEphemerals, prefixPath: '/' });
    expect(eph.response).toEqual({ ephemerals: ['/x'] });
    c.connection.close();
  });
});

describe('bad input from the server closes with a typed ProtocolError', () => {
  /** Opens a connection with one getData outstanding, lets the peer send `bytes`, and returns what happened. */
  async function afterBytes(bytes: Buffer, options?: { maxFrameBytes?: number }) {
    const s = await fake(
      accepting(async (peer) => {
        await peer.nextRequest();
        peer.socket.write(bytes);
      }),
    );
    const c = await open(zookeeper(s.address, options));
    const pending = c.connection.send({ type: OpCode.getData, path: '/x', watch: false });
    const outcome = await pending.then(
      (reply) => ({ reply }),
      (error: Error) => ({ error }),
    );
    const reason = await c.closed;
    return { outcome, reason, closes: c.closes, connection: c.connection };
  }

  const cases: [string, Buffer, { maxFrameBytes?: number }?][] = [
    ['an oversized frame length', Buffer.from([0, 0, 0x10, 0]), { maxFrameBytes: 1024 }],
    ['a negative frame length', Buffer.from([0xff, 0xff, 0xff, 0xf0])],
    ['a frame shorter than a reply header', Buffer.from([0, 0, 0, 4, 0, 0, 0, 1])],
    ['a reply whose xid matches no request', encodeReplyFrame({ xid: 77, zxid: 1n, err: 0 }, OpCode.exists, { stat })],
    [
      'a truncated getData body',
      (() => {
        const f = encodeReplyFrame({ xid: 1, zxid: 1n, err: 0 }, OpCode.getData, { data: Buffer.from('abc'), stat });
        const cut = f.subarray(0, f.length - 30);
        cut.writeInt32BE(cut.length - 4, 0);
        return cut;
      })(),
    ],
    [
      'a notification with a truncated event',
      (() => {
        const f = encodeNotificationFrame(-1n, { type: 1, state: 3, path: '/somewhere' });
        const cut = Buffer.from(f.subarray(0, f.length - 5));
        cut.writeInt32BE(cut.length - 4, 0);
        return cut;
      })(),
    ],
  ];

  test.each(cases)('%s', async (_name, bytes, options) => {
    const { outcome, reason, closes, connection } = await afterBytes(bytes, options);
    expect('error' in outcome && outcome.error).toBeInstanceOf(ConnectionLossError);
    expect(reason.kind).toBe('protocol');
    expect(reason.error).toBeInstanceOf(ProtocolError);
    expect(closes.length).toBe(1);
    expect(connection.closed).toBe(true);
  });

  test('an oversized frame is a FrameLengthError naming the limit', async () => {
    const { reason } = await afterBytes(Buffer.from([0, 0x20, 0, 0]), { maxFrameBytes: 4096 });
    expect(reason.error).toBeInstanceOf(FrameLengthError);
    expect(reason.message).toMatch(/4096/);
  });

  test('random bytes never crash the connection: it stays usable or closes with a protocol error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 200 }), async (junk) => {
        const s = await fake(
          accepting(async (peer) => {
            await peer.nextRequest();
            peer.socket.write(Buffer.from(junk));
          }),
        );
        const c = await open(zookeeper(s.address, { maxFrameBytes: 4096 }));
        const outcome = c.connection.send({ type: OpCode.getData, path: '/x', watch: false }).then(
          () => 'resolved',
          (e: Error) => (e instanceof ConnectionLossError ? 'lost' : `unexpected ${e.name}`),
        );
        await new Promise((r) => setTimeout(r, 5));
        c.connection.close();
        const result = await outcome;
        expect(['resolved', 'lost']).toContain(result);
        expect(c.closes.length).toBe(1);
        expect(['protocol', 'client']).toContain(c.closes[0]!.kind);
        if (c.closes[0]!.kind === 'protocol') expect(c.closes[0]!.error).toBeInstanceOf(ProtocolError);
        servers.pop();
        await s.close();
      }),
      { numRuns: 40 },
    );
  });
});

describe('a reply stream split at arbitrary TCP chunk boundaries', () => {
  test('decodes every reply and event, in order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 60 }), async (sizes) => {
        const N = 20;
        const s = await fake(
          accepting(async (peer) => {
            const parts: Buffer[] = [];
            for (let i = 0; i < N; i++) {
              const { header } = await peer.nextRequest();
              if (i % 3 === 0) parts.push(encodeNotificationFrame(-1n, { type: EventType.NodeDataChanged, state: 3, path: `/n${i}` }));
              if (header.xid === -2) parts.push(encodeReplyFrame({ xid: -2, zxid: 0n, err: 0 }, OpCode.ping));
              else
                parts.push(
                  encodeReplyFrame({ xid: header.xid, zxid: BigInt(i), err: 0 }, OpCode.getData, {
                    data: Buffer.from(`v${i}`.repeat(i)),
                    stat,
                  }),
                );
            }
            await peer.writeChunked(Buffer.concat(parts), sizes);
          }),
        );
        const c = await open(zookeeper(s.address));
        const replies = await Promise.all(
          Array.from({ length: N }, (_, i) =>
            i === 5 ? c.connection.send({ type: OpCode.ping }) : c.connection.send({ type: OpCode.getData, path: `/n${i}`, watch: false }),
          ),
        );
        replies.forEach((r, i) => {
          if (i === 5) expect(r).toEqual({ zxid: 0n, err: 0, response: undefined });
          else expect(r.response!.data!.toString()).toBe(`v${i}`.repeat(i));
        });
        expect(c.events.map((e) => e.event.path)).toEqual(
          Array.from({ length: N }, (_, i) => i)
            .filter((i) => i % 3 === 0)
            .map((i) => `/n${i}`),
        );
        c.connection.close();
        servers.pop();
        await s.close();
      }),
      { numRuns: 25 },
    );
  });
});
