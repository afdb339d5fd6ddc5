/**
 * tenure-server with SASL users from a JAAS file and a WebSocket listener from zoo.cfg, spawned
 * as a process: Tenure clients (@tenure/client) authenticate with DIGEST-MD5 over TCP and over
 * WebSocket (@tenure/ws), `sasl` ACLs hold, a wrong password is AuthFailedError, and the WebSocket
 * path and origins are enforced.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, test } from 'vitest';
import WebSocket from 'ws';
import { AuthFailedError, NoAuthError, Perms, createClient, type Client } from '@tenure/client';
import { TenureServerProcess } from '@tenure/testing';
import { webSocket } from '@tenure/ws';

const dir = mkdtempSync(join(tmpdir(), 'tenure-server-sasl-ws-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const running: TenureServerProcess[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(running.splice(0).map((p) => p.kill()));
});

const jaas = join(dir, 'jaas.conf');
writeFileSync(
  jaas,
  `Server {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       user_bob="secret"
       user_alice="alicesecret";
};
`,
);
const config = join(dir, 'zoo.cfg');
writeFileSync(
  config,
  [
    'tickTime=500',
    'clientPort=0',
    'clientPortAddress=127.0.0.1',
    'authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider',
    `java.security.auth.login.config=${jaas}`,
    'webSocketPort=0',
    'webSocketPath=/zk',
    'webSocketOrigins=https://app.example.com',
    '',
  ].join('\n'),
);

async function start(): Promise<TenureServerProcess> {
  const p = await TenureServerProcess.start({ args: ['--config', config] });
  running.push(p);
  return p;
}
function client(options: Parameters<typeof createClient>[0]): Client {
  const c = createClient({ sessionTimeoutMs: 5000, connectionTimeoutMs: 5000, ...options });
  clients.push(c);
  return c;
}
const sasl = (username: string, password: string) => ({ mechanism: 'DIGEST-MD5' as const, username, password });

test('SASL users from the JAAS Server section: sasl:bob over TCP, its ACL holds, a wrong password is AuthFailedError', async () => {
  const p = await start();
  expect(p.serving).toMatchObject({
    saslUsers: 2,
    webSocketPort: expect.any(Number),
    webSocketUrl: expect.stringMatching(/^ws:\/\/127\.0\.0\.1:\d+\/zk$/),
  });
  expect(p.logs.filter((l) => l.level >= 40)).toEqual([]); // authProvider.1 is no warning

  const bob = client({ connectString: p.connectString, sasl: sasl('bob', 'secret') });
  await bob.start();
  expect((await bob.whoAmI()).map((i) => `${i.authScheme}:${i.user}`)).toContain('sasl:bob');
  await bob.create('/bob', 'for bob', { acl: [{ perms: Perms.ALL, id: { scheme: 'sasl', id: 'bob' } }] });

  const alice = client({ connectString: p.connectString, sasl: sasl('alice', 'alicesecret') });
  await alice.start();
  await expect(alice.getData('/bob')).rejects.toBeInstanceOf(NoAuthError);

  const wrong = client({ connectString: p.connectString, sasl: sasl('bob', 'guess') });
  const t0 = performance.now();
  await expect(wrong.start()).rejects.toBeInstanceOf(AuthFailedError);
  expect(performance.now() - t0).toBeLessThan(5000);
}, 60_000);

test('WebSocket from zoo.cfg: a SASL client over @tenure/ws shares the tree with TCP; path and origins enforced', async () => {
  const p = await start();
  const url = p.serving!.webSocketUrl as string;
  const tcp = client({ connectString: p.connectString, sasl: sasl('bob', 'secret') });
  await tcp.start();
  await tcp.create('/shared', 'from tcp', { acl: [{ perms: Perms.ALL, id: { scheme: 'sasl', id: 'bob' } }] });

  const ws = client({ transport: webSocket(url), sasl: sasl('bob', 'secret') });
  await ws.start();
  expect((await ws.whoAmI()).map((i) => `${i.authScheme}:${i.user}`)).toContain('sasl:bob');
  expect((await ws.getData('/shared')).data.toString()).toBe('from tcp');
  await ws.setData('/shared', 'from ws');
  expect((await tcp.getData('/shared')).data.toString()).toBe('from ws');

  const anonymous = client({ transport: webSocket(url) });
  await anonymous.start();
  await expect(anonymous.getData('/shared')).rejects.toBeInstanceOf(NoAuthError);

  // The upgrade: another path is 404; a browser origin not listed is refused, a listed one let in.
  const upgrade = (target: string, origin?: string): Promise<string> =>
    new Promise((resolve) => {
      const s = new WebSocket(target, origin === undefined ? {} : { origin });
      s.once('open', () => {
        s.close();
        resolve('open');
      });
      s.once('unexpected-response', (_req, res) => {
        resolve(String(res.statusCode));
        s.terminate();
      });
      s.once('error', () => resolve('error'));
    });
  expect(await upgrade(url.replace(/\/zk$/, '/zookeeper'))).toBe('404');
  expect(await upgrade(url, 'https://evil.example.com')).toBe('403');
  expect(await upgrade(url, 'https://app.example.com')).toBe('open');
}, 60_000);
