/**
 * etcd's user/password auth under etcdTransport: a user whose role has readwrite on the prefix's
 * range runs a client; a wrong password cannot start one (a typed error by the deadline).
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@tenure/client';
import { etcdTransport } from '@tenure/etcd';
import { TenureError } from '@tenure/protocol';
import { TestingEtcd } from '@tenure/testing';

describe('etcd auth under etcdTransport', () => {
  let etcd: TestingEtcd;
  const ctl = (...args: string[]): string =>
    execFileSync('etcdctl', ['--endpoints', etcd.endpoint, ...args], { env: { ...process.env, ETCDCTL_API: '3' } }).toString();

  beforeAll(async () => {
    etcd = await TestingEtcd.start();
    ctl('user', 'add', 'root:rootpw');
    ctl('user', 'add', 'app:apppw');
    ctl('role', 'add', 'tenure');
    ctl('role', 'grant-permission', 'tenure', 'readwrite', '/authed/', '/authed0');
    ctl('user', 'grant-role', 'app', 'tenure');
    ctl('auth', 'enable');
  });
  afterAll(async () => {
    await etcd?.close();
  });

  it('a user with readwrite on the prefix runs a client; a wrong password is refused', async () => {
    const t = etcdTransport(etcd.endpoint, { prefix: '/authed', auth: { username: 'app', password: 'apppw' } });
    const c = createClient({ transport: t, sessionTimeoutMs: 10_000 });
    await c.start({ timeoutMs: 10_000 });
    await c.create('/x', 'through auth');
    expect((await c.getData('/x')).data.toString()).toBe('through auth');
    await c.close();
    await t.close();

    const bad = etcdTransport(etcd.endpoint, { prefix: '/authed', auth: { username: 'app', password: 'wrong' } });
    const refused = createClient({ transport: bad, sessionTimeoutMs: 10_000 });
    const err = await refused.start({ timeoutMs: 3000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TenureError);
    await refused.close();
    await bad.close();
  });
});
