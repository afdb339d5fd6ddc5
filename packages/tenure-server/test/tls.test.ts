/**
 * tenure-server's secureClientPort from a ZooKeeper TLS config, spawned as a process: a Tenure TLS
 * client with a client certificate is x509:<subject> and x509 ACLs hold; the plaintext port serves
 * the same tree beside it; clientAuth=need refuses a client without a certificate (TlsError),
 * clientAuth=want lets it in without an x509 identity; a PKCS12 key store; wss:// with
 * webSocketSecure, where a verified client certificate is x509 too.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { Perms, TlsError, createClient, type Client } from '@tenure/client';
import { CLIENT_X509_ID, STORE_PASSWORD, TenureServerProcess, makeTlsCertificates, type TlsCertificates } from '@tenure/testing';
import { webSocket } from '@tenure/ws';

let dir: string;
let certs: TlsCertificates;
let keyStore: string;
let trustStore: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tenure-server-tls-'));
  certs = await makeTlsCertificates(join(dir, 'certs'));
  keyStore = join(dir, 'server.pem');
  writeFileSync(keyStore, certs.pem.server.key + certs.pem.server.cert + certs.pem.ca.cert);
  trustStore = join(dir, 'ca.pem');
  writeFileSync(trustStore, certs.pem.ca.cert);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const running: TenureServerProcess[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(running.splice(0).map((p) => p.kill()));
});

async function start(lines: string[]): Promise<TenureServerProcess> {
  const config = join(dir, `zoo-${running.length}-${Date.now()}.cfg`);
  writeFileSync(
    config,
    [
      'clientPort=0',
      'clientPortAddress=127.0.0.1',
      'secureClientPort=0',
      'serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory',
      ...lines,
      '',
    ].join('\n'),
  );
  const p = await TenureServerProcess.start({ args: ['--config', config] });
  running.push(p);
  return p;
}
function client(options: Parameters<typeof createClient>[0]): Client {
  const c = createClient({ sessionTimeoutMs: 10_000, connectionTimeoutMs: 5000, ...options });
  clients.push(c);
  return c;
}
const ids = async (c: Client): Promise<string[]> => (await c.whoAmI()).map((i) => `${i.authScheme}:${i.user}`);

test('PEM stores, clientAuth=need: the client certificate is x509:<subject>, its ACL holds; plaintext beside; no certificate is a TlsError', async () => {
  const p = await start([`ssl.keyStore.location=${keyStore}`, `ssl.trustStore.location=${trustStore}`, 'ssl.clientAuth=need']);
  expect(p.logs.filter((l) => l.level >= 40)).toEqual([]);
  const securePort = p.serving!.securePort as number;
  expect(securePort).toBeGreaterThan(0);
  expect(securePort).not.toBe(p.port);

  const secure = client({ connectString: `localhost:${securePort}`, tls: certs.clientOptions() });
  await secure.start();
  expect(await ids(secure)).toContain(`x509:${CLIENT_X509_ID}`);
  await secure.create('/cert-only', 'mine', { acl: [{ perms: Perms.ALL, id: { scheme: 'x509', id: CLIENT_X509_ID } }] });
  await secure.create('/open', 'for all');

  const plain = client({ connectString: p.connectString });
  await plain.start();
  expect((await plain.getData('/open')).data.toString()).toBe('for all');
  await expect(plain.getData('/cert-only')).rejects.toMatchObject({ name: 'NoAuthError' });

  const noCert = client({ connectString: `localhost:${securePort}`, tls: certs.clientOptions(null) });
  const t0 = performance.now();
  await expect(noCert.start()).rejects.toBeInstanceOf(TlsError);
  expect(performance.now() - t0).toBeLessThan(5000);
}, 60_000);

test('PKCS12 key store, clientAuth=want: no certificate is let in without x509; wss:// with webSocketSecure gives x509 too', async () => {
  const p = await start([
    `ssl.keyStore.location=${certs.stores.server}`,
    `ssl.keyStore.password=${STORE_PASSWORD}`,
    `ssl.trustStore.location=${trustStore}`,
    'ssl.clientAuth=want',
    'webSocketPort=0',
    'webSocketSecure=true',
  ]);
  const securePort = p.serving!.securePort as number;
  const url = p.serving!.webSocketUrl as string;
  expect(url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/zookeeper$/);

  const anonymous = client({ connectString: `localhost:${securePort}`, tls: certs.clientOptions(null) });
  await anonymous.start();
  expect((await ids(anonymous)).some((i) => i.startsWith('x509:'))).toBe(false);
  const withCert = client({ connectString: `localhost:${securePort}`, tls: certs.clientOptions() });
  await withCert.start();
  expect(await ids(withCert)).toContain(`x509:${CLIENT_X509_ID}`);
  await withCert.create('/p12', 'over tls');

  const ws = client({ transport: webSocket(url, { tls: certs.clientOptions() }) });
  await ws.start();
  expect((await ws.getData('/p12')).data.toString()).toBe('over tls');
  expect(await ids(ws)).toContain(`x509:${CLIENT_X509_ID}`);
}, 60_000);
