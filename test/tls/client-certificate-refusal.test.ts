/**
 * Client certificates that the embedded TLS listener cannot verify (unknown CA, expired). Node's
 * TLS server cannot refuse those with an alert (tls-listener.ts), so the listener refuses them in
 * band and the transport turns that into a TlsError, as an alert from ZooKeeper would be: start()
 * rejects at once naming the host, a running client paces its refused reconnects, and Java's
 * client and a missing certificate still get the real TLS behaviour, and sessions resume.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { ConnectionState, createClient, TlsError, type Client, type TlsOptions } from '@tenure/client';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { EventLog, makeTlsCertificates, type TlsCertificates } from '@tenure/testing';
import { recordingLogger } from './error-log.js';

let dir: string;
let certs: TlsCertificates;
let server: EmbeddedServer | undefined;
const clients: Client[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tenure-tls-refusal-'));
  certs = await makeTlsCertificates(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
  server = undefined;
});

function client(connectString: string, tls: TlsOptions, extra: Record<string, unknown> = {}): Client {
  const c = createClient({ connectString, tls, sessionTimeoutMs: 20_000, connectionTimeoutMs: 5000, ...extra });
  clients.push(c);
  return c;
}

describe('a client certificate the embedded TLS listener does not verify', () => {
  test.each(['other-client', 'expired-client'] as const)(
    '%s: start() rejects with TlsError (certificate-refused) naming the host, at once, logged',
    async (name) => {
      server = createEmbeddedServer({ tickMs: 2000 });
      const { connectString } = await server.listen({ port: 0, tls: certs.serverOptions() });
      const { logger, errors } = recordingLogger();
      const c = client(connectString, certs.clientOptions(name), { logger });
      const t0 = performance.now();
      const err = (await c.start().catch((e: unknown) => e)) as TlsError;
      expect(err).toBeInstanceOf(TlsError);
      expect(err).toMatchObject({ reason: 'certificate-refused', host: connectString });
      expect(err.message).toContain(connectString);
      expect(performance.now() - t0).toBeLessThan(5000);
      expect(errors.filter((m) => m.includes('TLS handshake refused') && m.includes('certificate-refused'))).toHaveLength(1);
      expect(server.connectionCount).toBe(0);
    },
  );

  test('the refusal is sent before the close, and the listener closes the socket itself', async () => {
    server = createEmbeddedServer({ tickMs: 2000 });
    const secure = await server.listen({ port: 0, tls: certs.serverOptions() });
    const received = await new Promise<{ bytes: Buffer; error?: string }>((resolve) => {
      const t = tlsConnect({ host: secure.address, port: secure.port, ...certs.clientOptions('other-client') });
      const chunks: Buffer[] = [];
      let error: string | undefined;
      t.on('data', (b: Buffer) => chunks.push(b));
      t.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
      t.on('close', () => resolve({ bytes: Buffer.concat(chunks), ...(error === undefined ? {} : { error }) }));
    });
    // length 16, xid 0, zxid 0, err AUTHFAILED (-115); no ConnectRequest was even sent.
    expect(received.bytes.toString('hex')).toBe('00000010' + '00000000' + '0000000000000000' + 'ffffff8d');
    expect(received.error).toBeUndefined();
  });

  test('want mode (rejectUnauthorized: false) still serves it, without an identity', async () => {
    server = createEmbeddedServer({ tickMs: 2000 });
    const { connectString } = await server.listen({ port: 0, tls: { ...certs.serverOptions(), rejectUnauthorized: false } });
    const c = client(connectString, certs.clientOptions('expired-client'));
    await c.start();
    expect(await c.whoAmI()).toEqual([{ authScheme: 'ip', user: '127.0.0.1' }]);
  });

  test('a running client whose certificate turns unverifiable: a tlsError event, the refusal pace, then back with updateTls', async () => {
    server = createEmbeddedServer({ tickMs: 2000 });
    const { connectString } = await server.listen({ port: 0, tls: certs.serverOptions() });
    const { logger, errors } = recordingLogger();
    const c = client(connectString, certs.clientOptions(), { logger });
    await c.start();
    const session = c.sessionId;
    const events = new EventLog<TlsError>();
    c.on('tlsError', (e) => events.push(e));
    c.updateTls(certs.clientOptions('other-client'));
    server.dropConnection(session);
    await events.atLeast(1, { timeoutMs: 5000 }); // a tlsError event
    expect(events[0]).toMatchObject({ name: 'TlsError', reason: 'certificate-refused', host: connectString });
    // 3 s later: at most a second round (after the 2 s pause), where the reconnect pace would have made ~10.
    await new Promise((r) => setTimeout(r, 3000));
    const refused = errors.filter((m) => m.includes('TLS handshake refused')).length;
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(refused).toBeLessThanOrEqual(2);
    expect(c.state).toBe(ConnectionState.SUSPENDED);
    const back = c.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    c.updateTls(certs.clientOptions());
    await back;
    expect(c.sessionId).toBe(session);
  });

  test('a TLS session with a client certificate can be resumed (the listener sets a session id context, as tls.Server does)', async () => {
    server = createEmbeddedServer({ tickMs: 2000 });
    const secure = await server.listen({ port: 0, tls: certs.serverOptions() });
    let session: Buffer | undefined;
    const ruok = (): Promise<{ reused: boolean; answer: string }> =>
      new Promise((resolve, reject) => {
        let reused = false;
        const t = tlsConnect(
          { host: secure.address, port: secure.port, ...certs.clientOptions(), ...(session === undefined ? {} : { session }) },
          () => {
            reused = t.isSessionReused();
            t.write('ruok');
          },
        );
        t.on('session', (s: Buffer) => (session = s));
        let answer = '';
        t.on('data', (b: Buffer) => (answer += b.toString()));
        t.on('error', reject);
        t.on('close', () => resolve({ reused, answer }));
      });
    expect(await ruok()).toEqual({ reused: false, answer: 'imok' });
    expect(session).toBeDefined();
    expect(await ruok()).toEqual({ reused: true, answer: 'imok' });
  });
});
