/**
 * TLS to etcd: a TestingEtcd that serves https:// and requires a client certificate
 * (--client-cert-auth), reached by etcdTransport (`tls`) and by tenure-server (etcd.tls.* keys);
 * a CA that does not sign etcd's certificate is a typed EtcdTlsError, never a hang or a crash.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@tenure/client';
import { etcdTransport, EtcdTlsError } from '@tenure/etcd';
import { TenureError } from '@tenure/protocol';
import { makeTlsCertificates, TenureServerProcess, TestingEtcd, type TlsCertificates } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';

describe('TLS to etcd', () => {
  let dir: string;
  let certs: TlsCertificates;
  let etcd: TestingEtcd;
  const file = (name: string): string => join(dir, name);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tenure-etcd-tls-'));
    certs = await makeTlsCertificates(dir);
    etcd = await TestingEtcd.start({ tls: { cert: file('server.pem'), key: file('server-key.pem'), ca: file('ca.pem') } });
  }, 60_000);
  afterAll(async () => {
    await etcd?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('etcdTransport over https:// with a client certificate', async () => {
    expect(etcd.endpoint).toMatch(/^https:\/\//);
    const t = etcdTransport(etcd.endpoint, { prefix: '/tls', tls: certs.clientOptions('client') });
    const c = createClient({ transport: t, sessionTimeoutMs: 10_000 });
    await c.start({ timeoutMs: 10_000 });
    await c.create('/secure', 'over tls');
    expect((await c.getData('/secure')).data.toString()).toBe('over tls');
    await c.close();
    await t.close();
  });

  it("a CA that does not sign etcd's certificate: a typed EtcdTlsError", async () => {
    const t = etcdTransport(etcd.endpoint, { prefix: '/tls', tls: { ...certs.clientOptions('client'), ca: certs.pem['other-ca'].cert } });
    const err = await t.engineServer().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TenureError);
    const cause = (err as Error).cause;
    expect(cause).toBeInstanceOf(EtcdTlsError);
    expect((cause as EtcdTlsError).code).toBe('EtcdTlsError');
    expect((cause as Error).message).toMatch(/TLS handshake with etcd failed/);
    // A client on it is refused by its deadline, with a TenureError.
    const c = createClient({ transport: t, sessionTimeoutMs: 10_000 });
    expect(await c.start({ timeoutMs: 2000 }).catch((e: unknown) => e)).toBeInstanceOf(TenureError);
    await c.close();
    await t.close();
  });

  it('tenure-server with etcd.tls.ca / cert / key', async () => {
    const server = await TenureServerProcess.start({
      args: [
        '--etcd',
        etcd.endpoint,
        '--etcd-prefix',
        '/tls-server',
        '--etcd-tls-ca',
        file('ca.pem'),
        '--etcd-tls-cert',
        file('client.pem'),
        '--etcd-tls-key',
        file('client-key.pem'),
      ],
    });
    try {
      const c = createClient({ transport: zookeeper(server.connectString), sessionTimeoutMs: 6000 });
      await c.start({ timeoutMs: 10_000 });
      await c.create('/through-front-end', 'tls');
      expect((await c.getData('/through-front-end')).data.toString()).toBe('tls');
      await c.close();
    } finally {
      await server.stop();
    }
  }, 30_000);
});
