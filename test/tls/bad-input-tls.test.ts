/**
 * TLS garbage at the embedded server's TLS listener: random bytes, plaintext ZooKeeper clients,
 * four-letter words in clear, half a ClientHello that then stalls, TLS sessions that never send a
 * ConnectRequest, and TLS sessions sending broken frames. None of it crashes the server or
 * disturbs a session doing its work on the same listener meanwhile.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as netConnect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createClient, type Client } from '@tenure/client';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { makeTlsCertificates, type TlsCertificates } from '@tenure/testing';

let dir: string;
let certs: TlsCertificates;
let server: EmbeddedServer;
let host: string;
let port: number;
const warnings: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tenure-tls-bad-'));
  certs = await makeTlsCertificates(dir);
  server = createEmbeddedServer({
    tickMs: 2000,
    logger: { warn: (o, m) => warnings.push(`${m} ${String((o as { err?: unknown })?.err)}`) },
  });
  const a = await server.listen({ port: 0, tls: certs.serverOptions(), handshakeTimeoutMs: 500 });
  host = a.address;
  port = a.port;
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves once the server has closed `socket` (or after `ms`, with false). */
function closedByServer(socket: Socket, ms = 5000): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, ms);
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
    socket.resume();
  });
}

function raw(bytes?: Buffer): Socket {
  const s = netConnect({ host, port });
  if (bytes) s.write(bytes);
  return s;
}

/** A real ClientHello, as Node's TLS client writes it. */
async function clientHello(): Promise<Buffer> {
  const sink = createServer();
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const got = new Promise<Buffer>((resolve) => sink.once('connection', (s) => s.once('data', (b: Buffer) => (resolve(b), s.destroy()))));
  const t = tlsConnect({ host: '127.0.0.1', port: (sink.address() as AddressInfo).port, rejectUnauthorized: false });
  t.on('error', () => {});
  const hello = await got;
  t.destroy();
  sink.close();
  return hello;
}

test('garbage, plaintext clients, half handshakes and broken frames never crash the server or disturb a live session', async () => {
  // A session doing real work on the same listener throughout.
  const worker: Client = createClient({ connectString: `${host}:${port}`, tls: certs.clientOptions(), sessionTimeoutMs: 20_000 });
  await worker.start();
  const session = worker.sessionId;
  await worker.create('/counter', '0');
  let stop = false;
  let ops = 0;
  const working = (async () => {
    while (!stop) {
      const { data } = await worker.getData('/counter');
      await worker.setData('/counter', String(Number(data.toString()) + 1));
      ops++;
    }
  })();

  const hello = await clientHello();
  const counts = { randomBytes: 0, plaintextZooKeeper: 0, plaintextWord: 0, halfHello: 0, silentTls: 0, brokenFrames: 0 };
  const closes: Promise<boolean>[] = [];

  // 1. Random bytes, from 1 byte to 64 KiB.
  for (const n of [1, 3, 5, 16, 100, 517, 4096, 65536]) {
    for (let i = 0; i < 5; i++) {
      closes.push(closedByServer(raw(randomBytes(n))));
      counts.randomBytes++;
    }
  }
  // A ClientHello-looking record header followed by junk.
  for (let i = 0; i < 10; i++) {
    closes.push(closedByServer(raw(Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]), randomBytes(512)]))));
    counts.randomBytes++;
  }
  // 2. A plaintext ZooKeeper client (Tenure without tls) and a plaintext ConnectRequest and 4lw.
  const plain = createClient({ connectString: `${host}:${port}`, sessionTimeoutMs: 4000, connectionTimeoutMs: 1500 });
  await expect(plain.start()).rejects.toThrow();
  await plain.close();
  counts.plaintextZooKeeper++;
  const connectRequest = Buffer.from(
    '0000002c000000000000000000000000000027100000000000000000000000100000000000000000000000000000000000',
    'hex',
  );
  for (let i = 0; i < 5; i++) {
    closes.push(closedByServer(raw(connectRequest)));
    counts.plaintextZooKeeper++;
    closes.push(closedByServer(raw(Buffer.from('ruok'))));
    counts.plaintextWord++;
  }
  // 3. Half a ClientHello, then silence: cut off after the handshake timeout (500 ms here).
  for (const cut of [1, 5, 9, Math.floor(hello.length / 2), hello.length - 1]) {
    closes.push(closedByServer(raw(hello.subarray(0, cut))));
    counts.halfHello++;
  }
  // 4. A complete TLS handshake and then no ConnectRequest: closed after handshakeTimeoutMs.
  for (let i = 0; i < 3; i++) {
    const t = tlsConnect({ host, port, ...certs.clientOptions() });
    closes.push(closedByServer(t));
    counts.silentTls++;
  }
  // 5. TLS, then broken frames: a negative length, an oversized length, a truncated ConnectRequest.
  for (const bytes of [
    Buffer.from('ffffffff', 'hex'),
    Buffer.from('7fffffff00', 'hex'),
    Buffer.from('0000000500000000', 'hex'),
    randomBytes(2048),
  ]) {
    const t = tlsConnect({ host, port, ...certs.clientOptions() }, () => t.end(bytes));
    closes.push(closedByServer(t));
    counts.brokenFrames++;
  }

  const closed = await Promise.all(closes);
  // The server closed every one of them itself, half handshakes and silent sessions included.
  expect(closed.filter((c) => !c)).toEqual([]);
  stop = true;
  await working;
  expect(worker.sessionId).toBe(session); // never reconnected
  expect(worker.state).toBe('CONNECTED');
  expect((await worker.getData('/counter')).data.toString()).toBe(String(ops));
  expect(server.connectionCount).toBe(1);
  expect(warnings).toEqual([]);
  console.log(`TLS bad input: ${JSON.stringify(counts)}; the live session did ${ops} read-modify-writes meanwhile`);
  await worker.close();
});
