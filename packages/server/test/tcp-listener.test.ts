/**
 * The TCP listener: ZooKeeper's handshake answers, four-letter words, bad input closing only the
 * connection that sent it, write coalescing, and close. Raw sockets speak bytes where the exact
 * wire matters; the @tenure/zookeeper transport does the rest.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { connect, type Socket } from 'node:net';
import {
  ErrorCode,
  EventType,
  OPEN_ACL_UNSAFE,
  OpCode,
  decodeConnectResponse,
  decodeReplyHeader,
  decodeResponse,
  encodeConnectRequest,
  encodeRequestFrame,
  frame,
} from '@tenure/protocol';
import { zookeeper } from '@tenure/zookeeper';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { create, open, tryOpen } from './harness.js';

let server: EmbeddedServer;
let port: number;
let connectString: string;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
});

async function start(options: Parameters<typeof createEmbeddedServer>[0] = {}): Promise<void> {
  server = createEmbeddedServer({ tickMs: 200, ...options });
  const a = await server.listen({ port: 0 });
  port = a.port;
  connectString = a.connectString;
}

/** A raw socket that records what it receives and when it closes. */
class Raw {
  readonly socket: Socket;
  private buf = Buffer.alloc(0);
  chunks = 0;
  readonly closed: Promise<void>;
  private wake: (() => void) | undefined;

  constructor() {
    this.socket = connect({ port, host: '127.0.0.1', noDelay: true });
    sockets.push(this.socket);
    this.socket.on('data', (c: Buffer) => {
      this.chunks++;
      this.buf = Buffer.concat([this.buf, c]);
      this.wake?.();
    });
    this.socket.on('error', () => {});
    this.closed = new Promise((r) => this.socket.once('close', () => r()));
    void this.closed.then(() => this.wake?.());
  }

  write(b: Buffer | string): void {
    this.socket.write(b);
  }

  get isClosed(): boolean {
    return this.socket.destroyed;
  }

  /** Everything received until the server closes. */
  async all(timeoutMs = 3000): Promise<Buffer> {
    await within(this.closed, timeoutMs, 'close');
    return this.buf;
  }

  /** The next frame's payload. */
  async frame(timeoutMs = 3000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.buf.length >= 4) {
        const n = this.buf.readInt32BE(0);
        if (this.buf.length >= 4 + n) {
          const f = this.buf.subarray(4, 4 + n);
          this.buf = this.buf.subarray(4 + n);
          return f;
        }
      }
      if (this.isClosed) throw new Error('closed before a whole frame arrived');
      if (Date.now() > deadline) throw new Error('no frame in time');
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 50);
      });
    }
  }

  /** Sends a ConnectRequest and reads the answer. */
  async handshake(fields: Partial<Parameters<typeof encodeConnectRequest>[0]> = {}, withReadOnly = true): Promise<Buffer> {
    this.write(
      frame(
        encodeConnectRequest(
          { protocolVersion: 0, lastZxidSeen: 0n, timeOut: 4000, sessionId: 0n, passwd: Buffer.alloc(16), readOnly: false, ...fields },
          withReadOnly,
        ),
      ),
    );
    return this.frame();
  }
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms))]);
}

function fourLetterWord(word: string | Buffer, pieces = 1): Promise<string> {
  const r = new Raw();
  const b = Buffer.from(word);
  if (pieces === 1) r.write(b);
  else for (let i = 0; i < b.length; i++) setTimeout(() => r.write(b.subarray(i, i + 1)), 10 * i);
  return r.all().then((x) => x.toString('utf8'));
}

describe('TCP listener', () => {
  test('listen(port 0) binds a free port and answers ZooKeeper clients; close() stops it', async () => {
    await start();
    expect(port).toBeGreaterThan(0);
    expect(connectString).toBe(`127.0.0.1:${port}`);
    const s = await open(zookeeper(connectString));
    expect((await s.conn.send(create('/a', Buffer.from('x')))).err).toBe(0);
    const d = await s.conn.send({ type: OpCode.getData, path: '/a', watch: false });
    expect(d.response?.data).toEqual(Buffer.from('x'));
    expect(s.conn.server).toBe(connectString);
    await server.close();
    const reason = await within(s.closed, 2000, 'close');
    expect(reason.kind).not.toBe('client');
    await expect(tryOpen(zookeeper(connectString))).rejects.toMatchObject({ name: 'ConnectionLossError' });
  });

  test('an IPv6 listener gets a bracketed connect string', async (t) => {
    server = createEmbeddedServer({ tickMs: 200 });
    const a = await server.listen({ port: 0, host: '::1' }).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'EADDRNOTAVAIL' || e.code === 'EAFNOSUPPORT') return undefined;
      throw e;
    });
    if (a === undefined) return t.skip('no IPv6 loopback here');
    expect(a).toMatchObject({ family: 'IPv6', address: '::1', connectString: `[::1]:${a.port}` });
    const s = await open(zookeeper(a.connectString));
    expect((await s.conn.send({ type: OpCode.exists, path: '/', watch: false })).err).toBe(0);
  });

  test('listen() on a port in use rejects; the server keeps serving', async () => {
    await start();
    await expect(server.listen({ port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(await fourLetterWord('ruok')).toBe('imok');
  });

  test('two listeners on one server share its tree and sessions', async () => {
    await start();
    const second = await server.listen({ port: 0 });
    const a = await open(zookeeper(connectString));
    const b = await open(zookeeper(second.connectString));
    await a.conn.send(create('/shared', Buffer.from('1')));
    expect((await b.conn.send({ type: OpCode.exists, path: '/shared', watch: false })).err).toBe(0);
    // The session moves to the other listener with its id and password.
    const again = await open(zookeeper(second.connectString), { sessionId: a.conn.sessionId, passwd: a.conn.passwd });
    expect(again.conn.sessionId).toBe(a.conn.sessionId);
    await within(a.closed, 2000, 'the old connection to close');
  });

  test('a watch fires over TCP as a notification frame', async () => {
    await start();
    const s = await open(zookeeper(connectString));
    const other = await open(zookeeper(connectString));
    await s.conn.send(create('/w', null));
    await s.conn.send({ type: OpCode.getData, path: '/w', watch: true });
    await other.conn.send({ type: OpCode.setData, path: '/w', data: Buffer.from('y'), version: -1 });
    expect(await s.eventCount(1)).toEqual([{ type: EventType.NodeDataChanged, state: 3, path: '/w' }]);
  });

  describe('handshake', () => {
    test('a new session: 37-byte answer with the negotiated timeout, or 36 bytes when the request had no readOnly byte', async () => {
      await start();
      const withByte = decodeConnectResponse(await new Raw().handshake({ timeOut: 100_000 }));
      expect(withByte.timeOut).toBe(4000); // clamped to 20 ticks
      expect(withByte.sessionId).not.toBe(0n);
      expect(withByte.passwd.length).toBe(16);
      expect((await new Raw().handshake({}, true)).length).toBe(37);
      expect((await new Raw().handshake({}, false)).length).toBe(36);
    });

    test('an unknown session or a wrong password: a zero-timeout answer, then the server closes', async () => {
      await start();
      const live = decodeConnectResponse(await new Raw().handshake());
      for (const [fields, withByte] of [
        [{ sessionId: 12345n, passwd: Buffer.alloc(16, 1) }, true],
        [{ sessionId: live.sessionId, passwd: Buffer.alloc(16, 7) }, true],
        [{ sessionId: live.sessionId, passwd: Buffer.alloc(16, 7) }, false],
      ] as const) {
        const r = new Raw();
        const answer = await r.handshake(fields, withByte);
        expect(answer.length).toBe(withByte ? 37 : 36);
        expect(decodeConnectResponse(answer)).toMatchObject({ protocolVersion: 0, timeOut: 0, sessionId: 0n, passwd: Buffer.alloc(16) });
        await within(r.closed, 3000, 'close');
      }
      // The live session is untouched by the failed attempts.
      expect(server.sessions().map((s) => s.sessionId)).toContain(live.sessionId);
    });

    test('a closed session is expired for a re-attach', async () => {
      await start();
      const s = await open(zookeeper(connectString));
      const id = s.conn.sessionId;
      const passwd = s.conn.passwd;
      await s.conn.send({ type: OpCode.closeSession });
      await within(s.closed, 2000, 'close');
      expect(await tryOpen(zookeeper(connectString), { sessionId: id, passwd })).toBe('expired');
    });

    test('a client that has seen a newer zxid is closed without an answer', async () => {
      await start();
      const r = new Raw();
      r.write(
        frame(
          encodeConnectRequest({
            protocolVersion: 0,
            lastZxidSeen: 1000n,
            timeOut: 4000,
            sessionId: 0n,
            passwd: Buffer.alloc(16),
            readOnly: false,
          }),
        ),
      );
      expect((await r.all()).length).toBe(0);
    });

    test('requests sent right behind the ConnectRequest are served after it, in order', async () => {
      await start();
      const r = new Raw();
      r.write(
        Buffer.concat([
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
          encodeRequestFrame(1, create('/early', null)),
          encodeRequestFrame(2, { type: OpCode.exists, path: '/early', watch: false }),
        ]),
      );
      expect(decodeConnectResponse(await r.frame()).timeOut).toBe(4000);
      expect(decodeReplyHeader(await r.frame())).toMatchObject({ xid: 1, err: 0 });
      expect(decodeReplyHeader(await r.frame())).toMatchObject({ xid: 2, err: 0 });
    });

    test('a frame split into single bytes is read whole', async () => {
      await start();
      const r = new Raw();
      const hello = frame(
        encodeConnectRequest({
          protocolVersion: 0,
          lastZxidSeen: 0n,
          timeOut: 4000,
          sessionId: 0n,
          passwd: Buffer.alloc(16),
          readOnly: false,
        }),
      );
      const bytes = Buffer.concat([hello, encodeRequestFrame(1, { type: OpCode.exists, path: '/', watch: false })]);
      for (let i = 0; i < bytes.length; i++) {
        r.write(bytes.subarray(i, i + 1));
        await new Promise((res) => setImmediate(res));
      }
      await r.frame();
      expect(decodeReplyHeader(await r.frame())).toMatchObject({ xid: 1, err: 0 });
    });
  });

  describe('bad input closes only its own connection', () => {
    async function healthy(): Promise<() => Promise<void>> {
      const s = await open(zookeeper(connectString));
      await s.conn.send(create('/ok', Buffer.from('fine')));
      return async () => {
        expect(s.conn.closed).toBe(false);
        const d = await s.conn.send({ type: OpCode.getData, path: '/ok', watch: false });
        expect(d.response?.data?.toString()).toBe('fine');
      };
    }

    test('garbage instead of a handshake', async () => {
      await start();
      const check = await healthy();
      const r = new Raw();
      r.write(Buffer.from([0, 0, 0, 5, 1, 2, 3, 4, 5])); // a 5-byte "ConnectRequest"
      expect((await r.all()).length).toBe(0);
      const r2 = new Raw();
      r2.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
      expect((await r2.all()).length).toBe(0);
      await check();
    });

    test('a negative or oversized frame length, before and after the handshake', async () => {
      await start({ maxBufferBytes: 1000 });
      const check = await healthy();
      for (const length of [-5, 1001, 0x7fffffff]) {
        const before = new Raw();
        const b = Buffer.alloc(4);
        b.writeInt32BE(length);
        before.write(b);
        await before.all();
        const after = new Raw();
        await after.handshake();
        after.write(b);
        const rest = await after.all();
        expect(rest.length).toBe(0); // closed unanswered, as ZooKeeper does
      }
      await check();
    });

    test('a request larger than maxBufferBytes closes the connection; the session re-attaches', async () => {
      await start({ maxBufferBytes: 1000 });
      const check = await healthy();
      const s = await open(zookeeper(connectString));
      await expect(s.conn.send(create('/big', Buffer.alloc(2000)))).rejects.toMatchObject({ name: 'ConnectionLossError' });
      expect(server.node('/big')).toBeUndefined();
      const again = await open(zookeeper(connectString), { sessionId: s.conn.sessionId, passwd: s.conn.passwd });
      expect(again.conn.sessionId).toBe(s.conn.sessionId);
      await check();
    });

    test('an unknown op: UNIMPLEMENTED with its xid and zxid -1, after the replies before it, then a close', async () => {
      await start();
      const check = await healthy();
      const r = new Raw();
      await r.handshake();
      const unknown = Buffer.alloc(12);
      unknown.writeInt32BE(8, 0);
      unknown.writeInt32BE(7, 4);
      unknown.writeInt32BE(999, 8);
      r.write(Buffer.concat([encodeRequestFrame(6, { type: OpCode.exists, path: '/', watch: false }), unknown]));
      expect(decodeReplyHeader(await r.frame())).toMatchObject({ xid: 6, err: 0 });
      expect(decodeReplyHeader(await r.frame())).toEqual({ xid: 7, zxid: -1n, err: ErrorCode.UNIMPLEMENTED });
      await r.all();
      await check();
    });

    test('a known op with an unreadable body is answered MARSHALLINGERROR and the connection carries on', async () => {
      await start();
      const r = new Raw();
      await r.handshake();
      // getData whose path length runs past the frame.
      const bad = Buffer.alloc(4 + 8 + 4 + 2);
      bad.writeInt32BE(bad.length - 4, 0);
      bad.writeInt32BE(3, 4);
      bad.writeInt32BE(OpCode.getData, 8);
      bad.writeInt32BE(50, 12);
      r.write(Buffer.concat([bad, encodeRequestFrame(4, { type: OpCode.exists, path: '/', watch: false })]));
      expect(decodeReplyHeader(await r.frame())).toMatchObject({ xid: 3, err: ErrorCode.MARSHALLINGERROR });
      expect(decodeReplyHeader(await r.frame())).toMatchObject({ xid: 4, err: 0 });
      expect(r.isClosed).toBe(false);
    });

    test('a connection that does not complete a handshake in time is closed; a live session is not', async () => {
      server = createEmbeddedServer({ tickMs: 200 });
      ({ port, connectString } = await server.listen({ port: 0, handshakeTimeoutMs: 300 }));
      const silent = new Raw();
      const partial = new Raw();
      partial.write(Buffer.from([0, 0]));
      const live = new Raw();
      await live.handshake();
      const t0 = Date.now();
      await Promise.all([silent.all(), partial.all()]);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(200);
      await new Promise((res) => setTimeout(res, 200));
      expect(live.isClosed).toBe(false);
    });

    test('a frame shorter than a request header closes the connection', async () => {
      await start();
      const check = await healthy();
      const r = new Raw();
      await r.handshake();
      r.write(Buffer.from([0, 0, 0, 3, 1, 2, 3]));
      expect((await r.all()).length).toBe(0);
      await check();
    });

    test('random bytes on many connections never take the server down', async () => {
      await start({ maxBufferBytes: 4096 });
      const check = await healthy();
      let seed = 42;
      const rand = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
      const conns: Raw[] = [];
      for (let i = 0; i < 40; i++) {
        const r = new Raw();
        conns.push(r);
        if (i % 2 === 1) await r.handshake();
        const junk = Buffer.alloc(1 + Math.floor(rand() * 300));
        for (let j = 0; j < junk.length; j++) junk[j] = Math.floor(rand() * 256);
        // Small lengths, so that some junk parses as frames with a header.
        if (junk.length >= 4) junk.writeInt32BE(Math.floor(rand() * junk.length), 0);
        r.write(junk);
      }
      await new Promise((res) => setTimeout(res, 300));
      for (const r of conns) r.socket.destroy();
      await check();
      expect(await fourLetterWord('ruok')).toBe('imok');
    });
  });

  test('the replies of one turn leave in one write', async () => {
    await start();
    const r = new Raw();
    await r.handshake();
    const n = 200;
    const burst = Buffer.concat(
      Array.from({ length: n }, (_, i) => encodeRequestFrame(i + 1, { type: OpCode.exists, path: '/', watch: false })),
    );
    const before = r.chunks;
    r.write(burst);
    for (let i = 1; i <= n; i++) {
      const f = await r.frame();
      expect(decodeReplyHeader(f).xid).toBe(i);
      expect(decodeResponse(f, OpCode.exists)).toMatchObject({ stat: expect.any(Object) });
    }
    // One burst in, a handful of chunks out (TCP may split a write, but never per reply).
    expect(r.chunks - before).toBeLessThan(20);
  });

  test('closeSession: the reply, then the server closes the socket; the ephemerals are gone', async () => {
    await start();
    const s = await open(zookeeper(connectString));
    await s.conn.send({ type: OpCode.create, path: '/e', data: null, acl: [...OPEN_ACL_UNSAFE], flags: 1 });
    expect((await s.conn.send({ type: OpCode.closeSession })).err).toBe(0);
    const reason = await within(s.closed, 2000, 'close');
    expect(reason.kind).toBe('server');
    expect(server.node('/e')).toBeUndefined();
  });

  test('faults act on TCP connections too: dropConnection and expireSession close the socket', async () => {
    await start();
    const s = await open(zookeeper(connectString));
    expect(server.dropConnection(s.conn.sessionId)).toBe(true);
    await within(s.closed, 2000, 'close');
    const again = await open(zookeeper(connectString), { sessionId: s.conn.sessionId, passwd: s.conn.passwd });
    expect(server.expireSession(again.conn.sessionId)).toBe(true);
    await within(again.closed, 2000, 'close');
    expect(await tryOpen(zookeeper(connectString), { sessionId: s.conn.sessionId, passwd: s.conn.passwd })).toBe('expired');
  });

  test('a client going away leaves its session to expire', async () => {
    await start();
    const r = new Raw();
    const { sessionId } = decodeConnectResponse(await r.handshake({ timeOut: 400 }));
    r.socket.destroy();
    await new Promise((res) => setTimeout(res, 100));
    expect(server.sessions().find((s) => s.sessionId === sessionId)?.connected).toBe(false);
    await new Promise((res) => setTimeout(res, 900));
    expect(server.sessions().find((s) => s.sessionId === sessionId)).toBeUndefined();
  });
});

describe('four-letter words', () => {
  test('ruok, isro, and a word split across packets', async () => {
    await start();
    expect(await fourLetterWord('ruok')).toBe('imok');
    expect(await fourLetterWord('isro')).toBe('rw');
    expect(await fourLetterWord('ruok', 4)).toBe('imok');
  });

  test('srvr and stat in ZooKeeper 3.8 format', async () => {
    await start();
    const s = await open(zookeeper(connectString));
    await s.conn.send(create('/n', null));
    const srvr = await fourLetterWord('srvr');
    expect(srvr).toMatch(/^Zookeeper version: 3\.8\.0-tenure/);
    expect(srvr).toMatch(/\nLatency min\/avg\/max: \d+\/[\d.]+\/\d+\n/);
    expect(srvr).toMatch(/\nMode: standalone\n/);
    expect(srvr).toContain(`\nZxid: 0x${server.zxid.toString(16)}\n`);
    expect(srvr).toContain(`\nNode count: 5\n`); // /, /zookeeper, /zookeeper/quota, /zookeeper/config, /n
    expect(srvr).toMatch(/\nReceived: \d+\nSent: \d+\nConnections: 2\n/);
    const stat = await fourLetterWord('stat');
    expect(stat).toMatch(
      /\nClients:\n \/127\.0\.0\.1:\d+\[1\]\(queued=0,recved=2,sent=2\)\n \/127\.0\.0\.1:\d+\[\d\]\(queued=0,recved=1,sent=0\)\n\n/,
    );
  });

  test('cons shows the session, last op and zxid of each connection', async () => {
    await start();
    const s = await open(zookeeper(connectString));
    await s.conn.send({ type: OpCode.getData, path: '/zookeeper', watch: false });
    const cons = await fourLetterWord('cons');
    const id = `0x${BigInt.asUintN(64, s.conn.sessionId).toString(16)}`;
    expect(cons).toMatch(
      new RegExp(`^ /127\\.0\\.0\\.1:\\d+\\[1\\]\\(queued=0,recved=2,sent=2,sid=${id},lop=GETD,est=\\d+,to=4000,lcxid=0x1,`, 'm'),
    );
    expect(cons.endsWith(')\n\n')).toBe(true);
  });

  test('mntr, dump, wchc, wchs, wchp, conf', async () => {
    await start();
    const s = await open(zookeeper(connectString));
    await s.conn.send(create('/d', null));
    await s.conn.send({ type: OpCode.create, path: '/d/e', data: null, acl: [...OPEN_ACL_UNSAFE], flags: 1 });
    await s.conn.send({ type: OpCode.getData, path: '/d', watch: true });
    const id = `0x${BigInt.asUintN(64, s.conn.sessionId).toString(16)}`;
    const mntr = Object.fromEntries(
      (await fourLetterWord('mntr'))
        .trim()
        .split('\n')
        .map((l) => l.split('\t')),
    );
    expect(mntr).toMatchObject({
      zk_server_state: 'standalone',
      zk_znode_count: '6',
      zk_ephemerals_count: '1',
      zk_watch_count: '1',
      zk_global_sessions: '1',
    });
    const dump = await fourLetterWord('dump');
    expect(dump).toMatch(
      new RegExp(
        `^SessionTracker dump:\\nSession Sets \\(1\\)/\\(1\\):\\n1 expire at .+:\\n\\t${id}\\nephemeral nodes dump:\\nSessions with Ephemerals \\(1\\):\\n${id}:\\n\\t/d/e\\n`,
      ),
    );
    expect(await fourLetterWord('wchc')).toBe(`${id}\n\t/d\n\n`);
    expect(await fourLetterWord('wchp')).toBe(`/d\n\t${id}\n\n`);
    expect(await fourLetterWord('wchs')).toBe('1 connections watching 1 paths\nTotal watches:1\n');
    expect(await fourLetterWord('conf')).toContain(`clientPort=${port}\ntickTime=200\n`);
  });

  test("a known word it does not serve gets ZooKeeper's whitelist answer; an unknown word is a frame length", async () => {
    await start();
    expect(await fourLetterWord('gtmk')).toBe('gtmk is not executed because it is not in the whitelist.\n');
    expect(await fourLetterWord('abcd')).toBe(''); // 0x61626364 bytes announced: over the limit, closed
  });
});
