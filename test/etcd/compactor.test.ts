/**
 * The elected compactor (README "Compaction and quota"): of two engines with it on, exactly one
 * compacts; cut that one off from etcd (FaultProxy: its lease stops being renewed) and the other
 * takes over once the lease expires; back in touch, the old one follows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '@tenure/client';
import { etcdTransport, type EtcdTransport } from '@tenure/etcd';
import { eventually, FaultProxy, TestingEtcd } from '@tenure/testing';
import { compactedPast } from './etcd-revisions.js';

describe('the elected compactor', () => {
  let etcd: TestingEtcd;
  const proxies: FaultProxy[] = [];
  const transports: EtcdTransport[] = [];
  const clients: Client[] = [];
  beforeAll(async () => {
    etcd = await TestingEtcd.start();
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const t of transports) await t.close();
    for (const p of proxies) await p.close();
    await etcd?.close();
  });

  it('exactly one engine compacts; cut off from etcd, the other takes over', async () => {
    for (let i = 0; i < 2; i++) {
      const proxy = await FaultProxy.start(etcd.endpoint.slice('http://'.length));
      proxies.push(proxy);
      const t = etcdTransport(`http://${proxy.address}`, {
        prefix: '/compactor',
        compaction: { retention: 5, intervalMs: 200, leaseTtlS: 2 },
      });
      transports.push(t);
      const c = createClient({ transport: t, sessionTimeoutMs: 10_000 });
      clients.push(c);
      await c.start({ timeoutMs: 10_000 });
    }
    const [a, b] = transports as [EtcdTransport, EtcdTransport];
    await clients[0]!.create('/n', 'v0');
    for (let i = 1; i <= 20; i++) await clients[i % 2]!.setData('/n', `v${i}`);

    const leader = await eventually(
      () => transports.find((t) => t.compaction()!.state === 'leading' && t.compaction()!.compactions > 0),
      10_000,
      'one engine to compact',
    );
    const follower = leader === a ? b : a;
    expect(follower.compaction()!.state).toBe('following');
    expect(follower.compaction()!.compactions).toBe(0);
    expect(await compactedPast(etcd.endpoint, leader.compaction()!.compactedTo - 1n)).toBe(true);

    // The leader is cut off: its lease is no longer renewed, expires, and the key is free.
    const leaderProxy = proxies[transports.indexOf(leader)]!;
    leaderProxy.blackhole();
    const before = leader.compaction()!.compactedTo;
    for (let i = 0; i < 10; i++) await clients[transports.indexOf(follower)]!.setData('/n', `w${i}`);
    await eventually(
      () => follower.compaction()!.state === 'leading' && follower.compaction()!.compactedTo > before,
      15_000,
      'the other engine to take over',
    );
    expect(await compactedPast(etcd.endpoint, follower.compaction()!.compactedTo - 1n)).toBe(true);

    // Back in touch, the old leader finds its lease gone and follows; the new one keeps compacting.
    const oldCount = leader.compaction()!.compactions;
    leaderProxy.heal();
    leaderProxy.reset();
    await eventually(() => leader.compaction()!.state === 'following', 15_000, 'the old leader to follow');
    for (let i = 0; i < 10; i++) await clients[transports.indexOf(follower)]!.setData('/n', `x${i}`);
    await eventually(() => follower.compaction()!.compactions >= 2, 10_000, 'the new leader to compact again');
    expect(leader.compaction()!.compactions).toBe(oldCount);
  }, 60_000);
});
