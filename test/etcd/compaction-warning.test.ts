/**
 * The start-up warning (README "Compaction and quota"): an etcd that never compacted (past
 * UNCOMPACTED_WARN_REVISION) with the compactor off is a pino warn line of tenure-server and a
 * warning in etcdTransport's health() (and on the tenure:etcd:health channel); with the compactor
 * on, or on an etcd that auto-compacts, there is none. A backend at 80 % of its quota (read from
 * etcd's /metrics) is a warning too.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdRpc, etcdTransport, HEALTH_CHANNEL, QUOTA_WARN_RATIO, UNCOMPACTED_WARN_REVISION, type EtcdHealth } from '@tenure/etcd';
import { eventually, sleep, TenureServerProcess, TestingEtcd } from '@tenure/testing';
import { compactedPast, fill } from './etcd-revisions.js';

const NEVER_COMPACTED = /never been compacted/;

describe('the start-up warning', () => {
  let etcd: TestingEtcd;
  beforeAll(async () => {
    etcd = await TestingEtcd.start();
    await fill(etcd.endpoint, Number(UNCOMPACTED_WARN_REVISION) + 100);
  }, 30_000);
  afterAll(async () => {
    await etcd?.close();
  });

  it('tenure-server logs it when etcd never compacted and the compactor is off; not with the compactor on', async () => {
    const [off, on] = await Promise.all([
      TenureServerProcess.start({ args: ['--etcd', etcd.endpoint, '--etcd-prefix', '/warn'] }),
      TenureServerProcess.start({ args: ['--etcd', etcd.endpoint, '--etcd-prefix', '/warn', '--etcd-compaction-retention', '100000'] }),
    ]);
    try {
      const warned = off.logs.find((l) => NEVER_COMPACTED.test(l.msg ?? ''));
      expect(warned?.level).toBe(40); // pino's warn
      expect(warned?.['compacted']).toBe(false);
      expect(Number(warned?.['quotaBytes'])).toBeGreaterThan(0); // etcd's default quota, read from /metrics
      expect(on.logs.some((l) => NEVER_COMPACTED.test(l.msg ?? ''))).toBe(false);
      expect(on.logs.some((l) => l.msg === 'etcd compaction and quota')).toBe(true);
    } finally {
      await Promise.all([off.stop(), on.stop()]);
    }
  }, 30_000);

  it('etcdTransport reports it in health() and on the tenure:etcd:health channel', async () => {
    const published: EtcdHealth[] = [];
    const listener = (m: unknown): void => void published.push(m as EtcdHealth);
    subscribe(HEALTH_CHANNEL, listener);
    const t = etcdTransport(etcd.endpoint, { prefix: '/warn-in-process' });
    try {
      await t.engineServer();
      expect(t.health()?.warnings.some((w) => NEVER_COMPACTED.test(w))).toBe(true);
      expect(published.some((h) => h.warnings.some((w) => NEVER_COMPACTED.test(w)))).toBe(true);
    } finally {
      unsubscribe(HEALTH_CHANNEL, listener);
      await t.close();
    }
  });
});

describe('a backend near its quota', () => {
  const QUOTA = 2_900_000;
  let etcd: TestingEtcd;
  beforeAll(async () => {
    etcd = await TestingEtcd.start({ flags: ['--max-txn-ops=4096', `--quota-backend-bytes=${QUOTA}`] });
    // Large values until the backend's file passes the warning's share of the quota (it grows in steps).
    const rpc = new EtcdRpc([etcd.endpoint]);
    try {
      const value = Buffer.alloc(400_000, 'q');
      for (let i = 0; i < 10; i++) {
        const size = Number((await rpc.call('maintenance', 'Status', {}))['dbSize']);
        if (size >= QUOTA_WARN_RATIO * QUOTA) break;
        await rpc.call('kv', 'Put', { key: Buffer.from(`/big/${i}`), value });
        await sleep(250); // the backend commits every 100 ms
      }
    } finally {
      rpc.close();
    }
  }, 30_000);
  afterAll(async () => {
    await etcd?.close();
  });

  it('health() warns with the size and the quota read from /metrics', async () => {
    const t = etcdTransport(etcd.endpoint, { prefix: '/quota' });
    try {
      await t.engineServer();
      const h = t.health()!;
      expect(h.quotaBytes).toBe(QUOTA);
      expect(h.dbSize).toBeGreaterThanOrEqual(QUOTA_WARN_RATIO * QUOTA);
      expect(h.warnings.some((w) => /of its 2900000-byte quota/.test(w))).toBe(true);
    } finally {
      await t.close();
    }
  });
});

describe('no warning on an etcd that auto-compacts', () => {
  let etcd: TestingEtcd;
  beforeAll(async () => {
    etcd = await TestingEtcd.start({ flags: ['--max-txn-ops=4096', '--auto-compaction-mode=periodic', '--auto-compaction-retention=1s'] });
    await fill(etcd.endpoint, Number(UNCOMPACTED_WARN_REVISION) + 100);
  }, 30_000);
  afterAll(async () => {
    await etcd?.close();
  });

  it('etcd compacted on its own: health() has no warning', async () => {
    await eventually(() => compactedPast(etcd.endpoint, 1n), 15_000, 'etcd to auto-compact');
    const t = etcdTransport(etcd.endpoint, { prefix: '/auto' });
    try {
      await t.engineServer();
      expect(t.health()?.compacted).toBe(true);
      expect(t.health()?.warnings).toEqual([]);
    } finally {
      await t.close();
    }
  }, 30_000);
});
