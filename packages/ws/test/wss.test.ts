/**
 * wss://: the same TLS options as the ZooKeeper transport (Node's tls.ConnectionOptions, passed to
 * `ws`), here against the gateway serving HTTPS in front of the embedded server's TCP listener.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConnectionLossError, OpCode, type ConnectParams } from '@tenure/protocol';
import { createEmbeddedServer, createWebSocketGateway, type EmbeddedServer, type WebSocketGateway } from '@tenure/server';
import { createClient } from '@tenure/client';
import { webSocket, type WebSocketTransportOptions } from '@tenure/ws';
import { makeCerts, opensslAvailable, type TestCerts } from './certs.js';
// Not exported: `server.listen({ tls, webSocket })` will construct it so once the listener takes `tls`.
import { WebSocketListener } from '../../server/src/front-doors/ws-listener.js';

const params: ConnectParams = { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 10_000, readOnly: false };
const handlers = { onEvent: () => undefined, onClose: () => undefined };

const withOpenssl = opensslAvailable();
if (!withOpenssl) console.warn('wss:// tests skipped: no openssl command (Debian package openssl)');

let certs: TestCerts;
let server: EmbeddedServer;
let gateway: WebSocketGateway;
let mutual: WebSocketGateway;

beforeAll(async () => {
  if (!withOpenssl) return;
  certs = makeCerts();
  server = createEmbeddedServer();
  const { connectString } = await server.listen();
  gateway = await createWebSocketGateway({ connectString, tls: { key: certs.serverKey, cert: certs.serverCert } });
  mutual = await createWebSocketGateway({
    connectString,
    tls: { key: certs.serverKey, cert: certs.serverCert, ca: certs.ca, requestCert: true, rejectUnauthorized: true },
  });
});
afterAll(async () => {
  await gateway?.close();
  await mutual?.close();
  await server?.close();
});

const localhost = (g: WebSocketGateway): string => `wss://localhost:${g.address.port}/zookeeper`;

async function attempt(url: string, options: WebSocketTransportOptions): Promise<unknown> {
  const r = await webSocket(url, options).connect(url, params, handlers);
  if (r.kind === 'connected') r.connection.close();
  return r.kind;
}

describe.skipIf(!withOpenssl)('wss://', () => {
  test('the gateway serves wss:// when given tls', () => {
    expect(gateway.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/zookeeper$/);
  });

  test('a trusted CA: a client connects and works', async () => {
    await using client = createClient({ transport: webSocket(localhost(gateway), { tls: { ca: certs.ca } }), sessionTimeoutMs: 10_000 });
    await client.start();
    await client.create('/over-wss', Buffer.from('s'));
    expect(server.node('/over-wss')?.data.toString()).toBe('s');
  });

  test('an unknown CA is refused, with the TLS reason', async () => {
    const err = await attempt(localhost(gateway), {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect(String((err as Error).message)).toMatch(/localhost.*(self-signed|unable to verify|self signed)/i);
  });

  test('the host name is verified: a certificate for localhost does not do for 127.0.0.1', async () => {
    const err = await attempt(gateway.url, { tls: { ca: certs.ca } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect(String((err as Error).message)).toMatch(/altnames|does not match|IP: 127\.0\.0\.1/i);
    // servername names the host to verify, as for the ZooKeeper transport.
    expect(await attempt(gateway.url, { tls: { ca: certs.ca, servername: 'localhost' } })).toBe('connected');
  });

  test('client certificates: required by the gateway, given in tls', async () => {
    expect(await attempt(localhost(mutual), { tls: { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey } })).toBe('connected');
    await expect(attempt(localhost(mutual), { tls: { ca: certs.ca } })).rejects.toBeInstanceOf(ConnectionLossError);
  });

  test('a raw request over wss:// is answered', async () => {
    const url = localhost(gateway);
    const r = await webSocket(url, { tls: { ca: certs.ca } }).connect(url, params, handlers);
    if (r.kind !== 'connected') throw new Error('expired');
    expect((await r.connection.send({ type: OpCode.exists, path: '/', watch: false })).err).toBe(0);
    r.connection.close();
  });
});

describe.skipIf(!withOpenssl)("the embedded server's WebSocket listener over TLS", () => {
  test('serves wss:// on the same front door', async () => {
    const listener = new WebSocketListener(server, {}, { key: certs.serverKey, cert: certs.serverCert });
    try {
      const { url, port } = await listener.listen({});
      expect(url).toBe(`wss://127.0.0.1:${port}/zookeeper`);
      expect(await attempt(`wss://localhost:${port}/zookeeper`, { tls: { ca: certs.ca } })).toBe('connected');
    } finally {
      await listener.close();
    }
  });
});

describe.skipIf(!withOpenssl)('reloadable TLS options', () => {
  test('a function is asked for the options of every new connection', async () => {
    let calls = 0;
    let options: WebSocketTransportOptions['tls'] = {};
    const url = localhost(gateway);
    const t = webSocket(url, { tls: () => (calls++, options as object) });
    await expect(t.connect(url, params, handlers)).rejects.toBeInstanceOf(ConnectionLossError); // no CA yet
    options = { ca: certs.ca }; // renewed trust, no new transport
    const r = await t.connect(url, params, handlers);
    expect(r.kind).toBe('connected');
    if (r.kind === 'connected') r.connection.close();
    expect(calls).toBe(2);
  });
});
