/**
 * The front door's limits, each refused as ZooKeeper refuses it: maxClientCnxns per client
 * address (the socket is closed without an answer), globalOutstandingLimit (connections stop being
 * read, nothing is queued without bound, every request is still answered in order) and
 * jute.maxbuffer (the connection closes; the session lives on).
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { OpCode, encodeConnectRequest, frame } from '@tenure/protocol';
import { zookeeper } from '@tenure/zookeeper';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { create, open, sleep, tryOpen, type RawSession } from './harness.js';

let server: EmbeddedServer | undefined;
const sessions: RawSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.conn.close();
  await server?.close();
  server = undefined;
});

async function start(options: Parameters<typeof createEmbeddedServer>[0]): Promise<string> {
  server = createEmbeddedServer({ tickMs: 200, ...options });
  return (await server.listen({ port: 0 })).connectString;
}

async function eventually(check: () => void, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (err) {
      if (Date.now() > end) throw err;
      await sleep(20);
    }
  }
}

/** A raw socket's ConnectRequest; resolves with the bytes received before the server closed it. */
function rawHandshake(connectString: string): Promise<Buffer> {
  const [host, port] = connectString.split(':');
  return new Promise((resolve, reject) => {
    const s = connect({ host, port: Number(port) });
    let got = Buffer.alloc(0);
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`the server kept the connection open; got ${got.length} bytes`));
    }, 3000);
    s.on('data', (b: Buffer) => (got = Buffer.concat([got, b])));
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
    s.write(
      frame(
        encodeConnectRequest(
          { protocolVersion: 0, lastZxidSeen: 0n, timeOut: 4000, sessionId: 0n, passwd: Buffer.alloc(16), readOnly: false },
          true,
        ),
      ),
    );
  });
}

describe('maxClientCnxns', () => {
  test('a connection over the limit from one address is closed without an answer; a freed slot is taken again', async () => {
    const warnings: string[] = [];
    server = createEmbeddedServer({ tickMs: 200, maxClientCnxns: 2, logger: { warn: (_o, msg) => warnings.push(msg ?? '') } });
    const { connectString } = await server.listen({ port: 0 });
    const transport = zookeeper(connectString);
    const a = await open(transport);
    const b = await open(transport);
    sessions.push(a, b);
    // ZooKeeper closes the socket without reading the ConnectRequest: a client sees connection loss.
    await expect(tryOpen(transport)).rejects.toMatchObject({ name: 'ConnectionLossError' });
    expect((await rawHandshake(connectString)).length).toBe(0);
    expect(server.connectionLimits.rejected).toBe(2);
    expect(warnings).toContain('Too many connections from /127.0.0.1 - max is 2');
    // The sessions already connected are untouched.
    expect((await a.conn.send(create('/x'))).err).toBe(0);
    // A connection that closes gives its slot back (once the server has seen the socket close).
    a.conn.close();
    await eventually(() => expect(server!.connectionLimits.connectionsFrom('127.0.0.1')).toBe(1));
    const c = await open(transport);
    sessions.push(c);
    expect((await c.conn.send({ type: OpCode.exists, path: '/x', watch: false })).err).toBe(0);
  });

  test('the in-process front door has the same limit; 0 (the library default) is no limit', async () => {
    server = createEmbeddedServer({ tickMs: 200, maxClientCnxns: 1 });
    sessions.push(await open(server.transport()));
    await expect(tryOpen(server.transport())).rejects.toMatchObject({
      name: 'ConnectionLossError',
      message: expect.stringMatching(/Too many connections/),
    });
    await server.close();
    server = createEmbeddedServer({ tickMs: 200 });
    for (let i = 0; i < 100; i++) sessions.push(await open(server.transport()));
    expect(server.connectionCount).toBe(100);
  });

  test("an expired session's answer and a refused handshake do not keep a slot", async () => {
    const connectString = await start({ maxClientCnxns: 1 });
    const transport = zookeeper(connectString);
    expect(await tryOpen(transport, { sessionId: 12345n })).toBe('expired');
    const s = await open(transport);
    sessions.push(s);
    expect(server!.connectionLimits.connectionsFrom('127.0.0.1')).toBe(1);
  });
});

describe('globalOutstandingLimit', () => {
  async function pipelineWhilePaused(
    limit: number,
    count: number,
  ): Promise<{ outstandingDuringPause: number; readingDuringPause: boolean; order: number[] }> {
    const connectString = await start({ globalOutstandingLimit: limit });
    const s = await open(zookeeper(connectString));
    sessions.push(s);
    for (let i = 0; i < count; i++) expect((await s.conn.send(create(`/n${i}`, Buffer.from(String(i))))).err).toBe(0);
    const paused = server!.pause(600);
    const order: number[] = [];
    const replies = Array.from({ length: count }, (_, i) =>
      s.conn.send({ type: OpCode.getData, path: `/n${i}`, watch: false }).then((r) => order.push(Number(r.response!.data!.toString()))),
    );
    await sleep(300);
    const outstandingDuringPause = server!.connectionLimits.outstanding;
    const reading = server!.introspection.connectionCount === 1 && !(await fourLetterWord(connectString, 'cons')).includes('[0](queued');
    await paused;
    await Promise.all(replies);
    return { outstandingDuringPause, readingDuringPause: reading, order };
  }

  test('over the limit a connection stops being read: the server holds limit + 1 requests, the rest wait in TCP; all are answered in order', async () => {
    const r = await pipelineWhilePaused(10, 300);
    // ZooKeeper throttles once more than the limit is outstanding: limit + 1 on one connection.
    expect(r.outstandingDuringPause).toBe(11);
    expect(r.readingDuringPause).toBe(false);
    expect(r.order).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(server!.connectionLimits.outstanding).toBe(0);
  });

  test('with no limit (0) every request is taken in at once', async () => {
    const r = await pipelineWhilePaused(0, 300);
    expect(r.outstandingDuringPause).toBe(300);
    expect(r.readingDuringPause).toBe(true);
    expect(r.order).toHaveLength(300);
  });

  test('the limit is shared by every connection; srvr and mntr report the outstanding count', async () => {
    const connectString = await start({ globalOutstandingLimit: 5 });
    const a = await open(zookeeper(connectString));
    const b = await open(zookeeper(connectString));
    sessions.push(a, b);
    const paused = server!.pause(500);
    const sent = [a, b].flatMap((s) => Array.from({ length: 50 }, () => s.conn.send({ type: OpCode.exists, path: '/', watch: false })));
    await sleep(250);
    // Each connection may add one past the limit before it stops: at most limit + connections.
    expect(server!.connectionLimits.outstanding).toBeGreaterThan(5);
    expect(server!.connectionLimits.outstanding).toBeLessThanOrEqual(7);
    expect(await fourLetterWord(connectString, 'srvr')).toMatch(new RegExp(`Outstanding: ${server!.connectionLimits.outstanding}\\n`));
    await paused;
    expect((await Promise.all(sent)).every((r) => r.err === 0)).toBe(true);
    expect(await fourLetterWord(connectString, 'mntr')).toMatch(/zk_outstanding_requests\t0\n/);
  });
});

describe('jute.maxbuffer', () => {
  test('a request larger than maxBufferBytes closes its connection unanswered; the session lives on', async () => {
    const connectString = await start({ maxBufferBytes: 1024 });
    const transport = zookeeper(connectString);
    const s = await open(transport);
    expect((await s.conn.send(create('/small', Buffer.alloc(100)))).err).toBe(0);
    await expect(s.conn.send(create('/big', Buffer.alloc(2000)))).rejects.toMatchObject({ name: 'ConnectionLossError' });
    await s.closed;
    const again = await open(transport, { sessionId: s.conn.sessionId, passwd: s.conn.passwd });
    sessions.push(again);
    expect(again.conn.sessionId).toBe(s.conn.sessionId);
    expect((await again.conn.send({ type: OpCode.exists, path: '/big', watch: false })).err).not.toBe(0);
  });
});

function fourLetterWord(connectString: string, word: string): Promise<string> {
  const [host, port] = connectString.split(':');
  return new Promise((resolve, reject) => {
    const s = connect({ host, port: Number(port) });
    let out = '';
    s.on('data', (b: Buffer) => (out += b.toString()));
    s.on('error', reject);
    s.on('close', () => resolve(out));
    s.write(word);
  });
}

describe('shutdown()', () => {
  test('stops taking connections and reading, answers every request already taken in, then closes', async () => {
    const connectString = await start({});
    const s = await open(zookeeper(connectString));
    // Requests the server has taken in but not answered yet: a pause holds them.
    const paused = server!.pause(400);
    const inFlight = Array.from({ length: 20 }, (_, i) => s.conn.send(create(`/f${i}`)));
    await sleep(100);
    expect(server!.connectionLimits.outstanding).toBe(20);
    const t0 = performance.now();
    const down = server!.shutdown({ timeoutMs: 5000 });
    await expect(tryOpen(zookeeper(connectString))).rejects.toMatchObject({ name: 'ConnectionLossError' });
    const results = await Promise.all(inFlight);
    expect(results.every((r) => r.err === 0)).toBe(true);
    await down;
    await paused;
    await s.closed;
    expect(server!.closed).toBe(true);
    // It waited for the pause to end (the answers), and no longer.
    expect(performance.now() - t0).toBeGreaterThan(200);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  test('when idle it closes at once', async () => {
    await start({});
    const t0 = performance.now();
    await server!.shutdown();
    expect(performance.now() - t0).toBeLessThan(200);
  });
});
