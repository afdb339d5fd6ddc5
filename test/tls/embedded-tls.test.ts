/**
 * The embedded server's TLS listener with Tenure's TLS transport: client certificates as `x509`
 * identities and ACLs, a plaintext and a TLS listener side by side, the refusals our own server
 * can produce (expired and wrong-host server certificates, no client certificate), reloading
 * certificates with updateTls, and how a running client paces refused handshakes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import {
  AuthFailedError,
  ConnectionState,
  createClient,
  NoAuthError,
  Perms,
  TlsError,
  type Client,
  type TlsOptions,
  IllegalStateError,
} from '@tenure/client';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { CLIENT_X509_ID, EventLog, makeTlsCertificates, type TlsCertificates } from '@tenure/testing';
import { recordingLogger } from './error-log.js';
import { webSocket } from '@tenure/ws';

let dir: string;
let certs: TlsCertificates;
let server: EmbeddedServer;
const clients: Client[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tenure-tls-'));
  certs = await makeTlsCertificates(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

function client(connectString: string, tls: TlsOptions | (() => TlsOptions) | undefined, extra: Record<string, unknown> = {}): Client {
  const c = createClient({
    connectString,
    ...(tls === undefined ? {} : { tls }),
    sessionTimeoutMs: 20_000,
    connectionTimeoutMs: 5000,
    ...extra,
  });
  clients.push(c);
  return c;
}

describe('x509 identities on the embedded TLS listener', () => {
  test('a verified client certificate is x509:<RFC 2253 subject>; x509 ACLs are enforced; plaintext and TLS side by side', async () => {
    server = createEmbeddedServer({ tickMs: 2000 });
    const secure = await server.listen({ port: 0, tls: certs.serverOptions() });
    const plain = await server.listen({ port: 0 });
    const c = client(secure.connectString, certs.clientOptions());
    await c.start();
    expect(await c.whoAmI()).toEqual([
      { authScheme: 'x509', user: CLIENT_X509_ID },
      { authScheme: 'ip', user: '127.0.0.1' },
    ]);
    await c.create('/x509', 'mine', { acl: [{ perms: Perms.ALL, id: { scheme: 'x509', id: CLIENT_X509_ID } }] });
    // The `auth` scheme expands to the certificate's identity, as on ZooKeeper.
    await c.create('/auth', 'mine too', { acl: [{ perms: Perms.ALL, id: { scheme: 'auth', id: '' } }] });
    expect((await c.getACL('/auth')).acl).toEqual([{ perms: Perms.ALL, id: { scheme: 'x509', id: CLIENT_X509_ID } }]);
    expect((await c.getData('/x509')).data.toString()).toBe('mine');
    // An x509 auth packet is accepted where a certificate was verified.
    await c.addAuth('x509', '');

    const p = client(plain.connectString, undefined);
    await p.start();
    expect(await p.whoAmI()).toEqual([{ authScheme: 'ip', user: '127.0.0.1' }]);
    await expect(p.getData('/x509')).rejects.toBeInstanceOf(NoAuthError);
    await expect(p.setData('/auth', 'x')).rejects.toBeInstanceOf(NoAuthError);
    // Without a certificate, claiming x509 fails (and ZooKeeper then closes the connection).
    await expect(p.addAuth('x509', '')).rejects.toBeInstanceOf(AuthFailedError);
    // One tree behind both listeners.
    expect((await p.getChildren('/')).children.sort()).toEqual(['auth', 'x509', 'zookeeper']);
    // Four-letter words work over TLS too (the same connection handler).
    const word = await new Promise<string>((resolve, reject) => {
      const t = tlsConnect({ host: secure.address, port: secure.port, ...certs.clientOptions() }, () => t.write('ruok'));
      let text = '';
      t.on('data', (b: Buffer) => (text += b.toString()));
      t.on('error', reject);
      t.on('close', () => resolve(text));
    });
    expect(word).toBe('imok');
  });

  test('listen({ webSocket, tls }) serves wss:// beside the TLS listener, on the same tree', async () => {
    server = createEmbeddedServer({ tickMs: 2000 });
    const secure = await server.listen({ port: 0, tls: certs.serverOptions() });
    const wss = await server.listen({ port: 0, webSocket: {}, tls: { key: certs.pem.server.key, cert: certs.pem.server.cert } });
    expect(wss.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/zookeeper$/);
    const a = client(secure.connectString, certs.clientOptions());
    await a.start();
    await a.create('/both', 'tls');
    const b = createClient({ transport: webSocket(wss.url, { tls: { ca: certs.pem.ca.cert } }), sessionTimeoutMs: 20_000 });
    clients.push(b);
    await b.start();
    expect((await b.getData('/both')).data.toString()).toBe('tls');
  });

  test('a certificate the listener does not verify (want mode, unknown CA) gives no identity', async () => {
    server = createEmbeddedServer({ tickMs: 2000 });
    const secure = await server.listen({ port: 0, tls: { ...certs.serverOptions(), rejectUnauthorized: false } });
    const c = client(secure.connectString, certs.clientOptions('other-client'));
    await c.start();
    expect(await c.whoAmI()).toEqual([{ authScheme: 'ip', user: '127.0.0.1' }]);
  });
});

describe('refused handshakes with the embedded server', () => {
  const cases: [string, TlsError['reason'], 'server' | 'expired-server' | 'wrong-host-server', () => TlsOptions][] = [
    ['an expired server certificate', 'expired', 'expired-server', () => certs.clientOptions()],
    ['a server certificate for another host', 'hostname-mismatch', 'wrong-host-server', () => certs.clientOptions()],
    ['no client certificate (TLS 1.3 certificate_required)', 'no-client-certificate', 'server', () => certs.clientOptions(null)],
    [
      'a server certificate from an unknown CA',
      'untrusted-certificate',
      'server',
      () => ({ ...certs.clientOptions(), ca: certs.pem['other-ca'].cert }),
    ],
  ];
  test.each(cases)('%s: start() rejects with TlsError (%s) at once, logged once', async (_name, reason, serverCert, tls) => {
    server = createEmbeddedServer({ tickMs: 2000 });
    const { connectString } = await server.listen({ port: 0, tls: certs.serverOptions(serverCert) });
    const { logger, errors } = recordingLogger();
    const c = client(connectString, tls(), { logger });
    const t0 = performance.now();
    const err = (await c.start().catch((e: unknown) => e)) as TlsError;
    expect(err).toBeInstanceOf(TlsError);
    expect(err).toMatchObject({ reason, host: connectString });
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(errors.filter((m) => m.includes('TLS handshake refused') && m.includes(reason))).toHaveLength(1);
    expect(server.connectionCount).toBe(0);
  });

  test('several hosts: one refusing is skipped; start() rejects only once every host has refused', async () => {
    server = createEmbeddedServer({ tickMs: 2000 });
    const bad = await server.listen({ port: 0, tls: certs.serverOptions('wrong-host-server') });
    const good = await server.listen({ port: 0, tls: certs.serverOptions() });
    const worse = await server.listen({ port: 0, tls: certs.serverOptions('expired-server') });
    for (let i = 0; i < 3; i++) {
      // Hosts are tried in a shuffled order: whichever comes first, the good one connects.
      const c = client(`${bad.connectString},${good.connectString}`, certs.clientOptions());
      await c.start();
      expect(c.connectedServer).toBe(good.connectString);
    }
    const { logger, errors } = recordingLogger();
    const c = client(`${bad.connectString},${worse.connectString}`, certs.clientOptions(), { logger });
    const err = (await c.start().catch((e: unknown) => e)) as TlsError;
    expect(err).toBeInstanceOf(TlsError);
    const refused = errors.filter((m) => m.includes('TLS handshake refused'));
    expect(refused).toHaveLength(2);
    expect(refused.some((m) => m.includes('hostname-mismatch') && m.includes(bad.connectString))).toBe(true);
    expect(refused.some((m) => m.includes('expired') && m.includes(worse.connectString))).toBe(true);
  });

  test('a refused start() can be retried after updateTls', async () => {
    server = createEmbeddedServer({ tickMs: 2000 });
    const { connectString } = await server.listen({ port: 0, tls: certs.serverOptions() });
    const c = client(connectString, certs.clientOptions(null));
    await expect(c.start()).rejects.toMatchObject({ name: 'TlsError', reason: 'no-client-certificate' });
    c.updateTls(certs.clientOptions());
    await c.start();
    expect((await c.whoAmI())[0]).toEqual({ authScheme: 'x509', user: CLIENT_X509_ID });
  });

  test('updateTls on a client without tls is an IllegalStateError', () => {
    const c = client('127.0.0.1:1', undefined);
    expect(() => c.updateTls({})).toThrow(IllegalStateError);
  });
});

describe('a running client', () => {
  test('new certificates reach new connections without a restart (a function returning options)', async () => {
    server = createEmbeddedServer({ tickMs: 2000 });
    // ssl.clientAuth=want: the first connection has no certificate, the second has one.
    const { connectString } = await server.listen({ port: 0, tls: { ...certs.serverOptions(), rejectUnauthorized: false } });
    let current: TlsOptions = certs.clientOptions(null);
    let calls = 0;
    const c = client(connectString, () => {
      calls++;
      return current;
    });
    await c.start();
    expect(await c.whoAmI()).toEqual([{ authScheme: 'ip', user: '127.0.0.1' }]);
    current = certs.clientOptions();
    const session = c.sessionId;
    const reconnected = c.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 10_000 });
    server.dropConnection(session);
    await reconnected;
    expect(c.sessionId).toBe(session);
    expect(calls).toBe(2);
    expect(await c.whoAmI()).toEqual([
      { authScheme: 'x509', user: CLIENT_X509_ID },
      { authScheme: 'ip', user: '127.0.0.1' },
    ]);
  });

  test('refused reconnects: a tlsError event, a slow pace instead of a retry loop, and updateTls reconnects at once', async () => {
    server = createEmbeddedServer({ tickMs: 2000 });
    const { connectString } = await server.listen({ port: 0, tls: certs.serverOptions() });
    const { logger, errors } = recordingLogger();
    const c = client(connectString, certs.clientOptions(), { logger });
    await c.start();
    const session = c.sessionId;
    const events = new EventLog<TlsError>();
    c.on('tlsError', (e) => events.push(e));
    // The certificate is "rotated" to one the server refuses, then the connection drops.
    c.updateTls(certs.clientOptions(null));
    server.dropConnection(session);
    await events.atLeast(1, { timeoutMs: 5000 }); // a tlsError event
    expect(events[0]).toMatchObject({ name: 'TlsError', reason: 'no-client-certificate', host: connectString });
    // 3 s later: at most a second round (after the 2 s pause), where the reconnect pace would have made ~10.
    await new Promise((r) => setTimeout(r, 3000));
    const refused = errors.filter((m) => m.includes('TLS handshake refused')).length;
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(refused).toBeLessThanOrEqual(2);
    expect(c.state).toBe(ConnectionState.SUSPENDED);
    // New certificate: the pause ends and the same session comes back.
    const t0 = performance.now();
    const back = c.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    c.updateTls(certs.clientOptions());
    await back;
    expect(performance.now() - t0).toBeLessThan(1500);
    expect(c.sessionId).toBe(session);
  });
});
