/**
 * Bad input over etcdTransport: a multi too large for etcd's --max-txn-ops, a node of jute.maxbuffer
 * + 1 bytes, paths that etcd's key space must take as they are (unicode, long, deep; the characters ZooKeeper refuses, such as surrogates, refused first), and an etcd
 * that is down at start. Each gives a typed error or ZooKeeper's behaviour, never a crash or a
 * half-applied write.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '@tenure/client';
import { StoreLimitError } from '@tenure/server';
import { TenureError } from '@tenure/protocol';
import { etcdTransport, type EtcdTransport } from '@tenure/etcd';
import { freePort, TestClients, TestingEtcd } from '@tenure/testing';

describe('bad input over etcdTransport', () => {
  let etcd: TestingEtcd;
  let raised: EtcdTransport;
  let strict: EtcdTransport;
  let clients: TestClients;
  let strictClients: TestClients;
  let c: Client;

  beforeAll(async () => {
    etcd = await TestingEtcd.start(); // --max-txn-ops=4096
    raised = etcdTransport(etcd.endpoint, { prefix: '/bad', maxTxnOps: 4096 });
    // The same etcd, as a deployment that left --max-txn-ops at etcd's default would see it.
    strict = etcdTransport(etcd.endpoint, { prefix: '/bad' });
    clients = new TestClients(() => raised);
    strictClients = new TestClients(() => strict);
    c = await clients.open();
  });
  afterAll(async () => {
    await clients?.closeAll();
    await strictClients?.closeAll();
    await Promise.all([raised?.close(), strict?.close()]);
    await etcd?.close();
  });

  it('a multi over --max-txn-ops is refused whole (a StoreLimitError naming the limit), never split; under the limit it commits at one zxid', async () => {
    await c.create('/huge', '');
    const s = await strictClients.open();
    const tx = s.transaction();
    for (let i = 0; i < 200; i++) tx.create(`/huge/n${i}`, 'x');
    const err = await tx.commit().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreLimitError);
    expect((err as TenureError).code).toBe('StoreLimitError');
    expect((err as StoreLimitError).limit).toBe('max-txn-ops');
    expect((err as Error).message).toMatch(/--max-txn-ops is 128/);
    await s.sync('/huge');
    expect((await s.getChildren('/huge')).children).toEqual([]);
    // With the limit raised (on etcd and in the transport), the same multi lands whole.
    const ok = c.transaction();
    for (let i = 0; i < 200; i++) ok.create(`/huge/n${i}`, 'x');
    await ok.commit();
    const { children } = await c.getChildren('/huge');
    expect(children.length).toBe(200);
    const czxids = new Set(await Promise.all(children.map(async (n) => (await c.exists(`/huge/${n}`))!.czxid)));
    expect(czxids.size).toBe(1);
  });

  it('a node of jute.maxbuffer + 1 bytes closes the connection as ZooKeeper does, and is not written; 1,000,000 bytes round-trip', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 7);
    const err = await c.create('/big', big).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TenureError);
    expect(await c.exists('/big')).toBeNull();
    const fits = Buffer.alloc(1_000_000, 9);
    await c.create('/fits', fits);
    expect((await c.getData('/fits')).data.equals(fits)).toBe(true);
    const other = await strictClients.open();
    await other.sync('/fits');
    expect((await other.getData('/fits')).data.equals(fits)).toBe(true);
  });

  it('unicode, long and deep paths are kept as they are and read back through etcd', async () => {
    const names = ['ünïcødé', '日本語', 'a'.repeat(4000), 'x y z', '%2F'];
    await c.create('/paths', '');
    for (const n of names) await c.create(`/paths/${n}`, n);
    let deep = '/paths/deep';
    await c.create(deep, '');
    for (let i = 0; i < 120; i++) {
      deep += `/l${i}`;
      await c.create(deep, String(i));
    }
    const other = await strictClients.open();
    await other.sync('/paths');
    expect((await other.getChildren('/paths')).children.sort()).toEqual([...names, 'deep'].sort());
    for (const n of names) expect((await other.getData(`/paths/${n}`)).data.toString()).toBe(n);
    expect((await other.getData(deep)).data.toString()).toBe('119');
    // etcd holds them under readable keys (etcdctl get --prefix).
    const keys = execFileSync('etcdctl', ['--endpoints', etcd.endpoint, 'get', '--prefix', '--keys-only', '/bad/n/paths/'], {
      env: { ...process.env, ETCDCTL_API: '3' },
    }).toString();
    expect(keys).toContain('/bad/n/paths/日本語');
    // What ZooKeeper refuses is refused before etcd sees it.
    await expect(c.create('/paths/bad\u0000name', '')).rejects.toBeInstanceOf(TenureError);
    await expect(c.create('/paths/\ud83d\ude00', '')).rejects.toBeInstanceOf(TenureError);
  });

  it('an etcd that is down at start: start() fails with a typed error by its deadline, and no process crash', async () => {
    const port = await freePort();
    const t = etcdTransport(`http://127.0.0.1:${port}`);
    const client = createClient({ transport: t, sessionTimeoutMs: 4000 });
    const err = await client.start({ timeoutMs: 3000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TenureError);
    await client.close();
    await t.close();
  });
});
