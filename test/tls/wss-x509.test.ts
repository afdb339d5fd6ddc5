/**
 * The WebSocket listener on wss:// takes a verified client certificate as the `x509` identity, as
 * the TLS listener does: x509 ACLs hold over @tenure/ws; a certificate the server cannot verify
 * (an untrusted CA) gives no identity when certificates are only requested.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { NoAuthError, Perms, createClient, type Client } from '@tenure/client';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { CLIENT_X509_ID, makeTlsCertificates, type TlsCertificates } from '@tenure/testing';
import { webSocket } from '@tenure/ws';

let dir: string;
let certs: TlsCertificates;
let server: EmbeddedServer;
const clients: Client[] = [];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tenure-wss-'));
  certs = await makeTlsCertificates(dir);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function wsClient(url: string, tls: ReturnType<TlsCertificates['clientOptions']>): Promise<Client> {
  const c = createClient({ transport: webSocket(url, { tls }), sessionTimeoutMs: 20_000, connectionTimeoutMs: 5000 });
  clients.push(c);
  await c.start();
  return c;
}
const ids = async (c: Client): Promise<string[]> => (await c.whoAmI()).map((i) => `${i.authScheme}:${i.user}`);

test('wss:// with a verified client certificate: x509:<subject>, and an x509 ACL holds', async () => {
  server = createEmbeddedServer();
  const { url } = await server.listen({ port: 0, webSocket: {}, tls: certs.serverOptions() });
  const owner = await wsClient(url, certs.clientOptions());
  expect(await ids(owner)).toEqual([`x509:${CLIENT_X509_ID}`, 'ip:127.0.0.1']);
  await owner.create('/mine', 'x', { acl: [{ perms: Perms.ALL, id: { scheme: 'x509', id: CLIENT_X509_ID } }] });
  expect((await owner.getData('/mine')).data.toString()).toBe('x');

  const tcp = createClient({ connectString: (await server.listen({ port: 0 })).connectString });
  clients.push(tcp);
  await tcp.start();
  await expect(tcp.getData('/mine')).rejects.toBeInstanceOf(NoAuthError);
});

test('certificates requested, not required: none, or one from an untrusted CA, gives no x509 identity', async () => {
  server = createEmbeddedServer();
  const { url } = await server.listen({ port: 0, webSocket: {}, tls: { ...certs.serverOptions(), rejectUnauthorized: false } });
  expect(await ids(await wsClient(url, certs.clientOptions(null)))).toEqual(['ip:127.0.0.1']);
  expect(await ids(await wsClient(url, certs.clientOptions('other-client')))).toEqual(['ip:127.0.0.1']);
  expect(await ids(await wsClient(url, certs.clientOptions()))).toEqual([`x509:${CLIENT_X509_ID}`, 'ip:127.0.0.1']);
});
