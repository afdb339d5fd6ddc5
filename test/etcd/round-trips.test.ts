/**
 * etcd round trips per ZooKeeper operation over etcdTransport, counted at the gRPC calls:
 * reads cost 0 (the mirror answers), a write 1 Txn, an uncontended Mutex cycle 2, sync 1, a new
 * session 2 (LeaseGrant, Put), closeSession 2 (Txn, LeaseRevoke).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '@tenure/client';
import { etcdTransport, type EtcdTransport } from '@tenure/etcd';
import { Mutex } from '@tenure/locks';
import { TestingEtcd } from '@tenure/testing';

const total = (calls: Record<string, number>, skip: string[] = ['LeaseKeepAlive']): number =>
  Object.entries(calls).reduce((n, [m, c]) => (skip.includes(m) ? n : n + c), 0);

describe('etcd round trips per operation', () => {
  let etcd: TestingEtcd;
  let t: EtcdTransport;
  let c: Client;
  beforeAll(async () => {
    etcd = await TestingEtcd.start();
    t = etcdTransport(etcd.endpoint, { prefix: '/trips' });
    c = createClient({ transport: t, sessionTimeoutMs: 10_000 });
    await c.start();
    await c.create('/r', 'x');
  });
  afterAll(async () => {
    await c?.close();
    await t?.close();
    await etcd?.close();
  });

  async function cost(op: () => Promise<unknown>): Promise<number> {
    const before = total(t.etcdCalls());
    await op();
    return total(t.etcdCalls()) - before;
  }

  it('reads: 0; create, setData, delete, a failing write, multi: 1; sync: 1', async () => {
    expect(await cost(() => c.getData('/r'))).toBe(0);
    expect(await cost(() => c.exists('/r'))).toBe(0);
    expect(await cost(() => c.getChildren('/'))).toBe(0);
    expect(await cost(() => c.create('/r/a', 'x'))).toBe(1);
    expect(await cost(() => c.setData('/r/a', 'y'))).toBe(1);
    expect(await cost(() => c.create('/r/a', 'x').catch(() => undefined))).toBe(1); // NODEEXISTS, compared
    expect(await cost(() => c.transaction().create('/r/b', '').create('/r/c', '').commit())).toBe(1);
    expect(await cost(() => c.delete('/r/a'))).toBe(1);
    expect(await cost(() => c.sync('/r'))).toBe(1);
  });

  it('an uncontended Mutex acquire/release cycle: at most 2', async () => {
    const mutex = new Mutex(c, '/locks/trips');
    await (await mutex.acquire()).release(); // the lock's parents exist from here on
    const trips: number[] = [];
    for (let i = 0; i < 5; i++) trips.push(await cost(async () => (await mutex.acquire()).release()));
    expect(Math.max(...trips)).toBeLessThanOrEqual(2);
    await mutex.close();
  });

  it('a session: 2 to open (LeaseGrant, Put), 2 to close (Txn, LeaseRevoke)', async () => {
    let other: Client | undefined;
    expect(
      await cost(async () => {
        other = createClient({ transport: t, sessionTimeoutMs: 10_000 });
        await other.start();
      }),
    ).toBe(2);
    expect(await cost(() => other!.close())).toBe(2);
  });
});
