/**
 * kazoo's recipes in the inspection and the commands, on the embedded server over TCP: a
 * SetPartitioner of two members (partitions: item → holder), timed leases (holder, time left),
 * and kazoo Locks listed as locks of kind `kazoo` (never as group members).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, RetryPolicies, type Client } from '@tenure/client';
import { SetPartitioner } from '@tenure/group';
import { KazooLock, MultiNonBlockingLease, NonBlockingLease } from '@tenure/locks';
import { TestingEmbeddedServer } from '@tenure/testing';
import { inspectRecipes } from '../src/index.js';
import { json, tenure } from './cli-harness.js';

const ITEMS = ['q-a', 'q-b', 'q-c', 'q-d', 'q-e'];

describe("kazoo's recipes in the inspection (embedded server over TCP)", () => {
  let server: TestingEmbeddedServer;
  const clients: Client[] = [];
  const partitioners: SetPartitioner[] = [];

  async function open(): Promise<Client> {
    const c = createClient({
      connectString: server.connectString,
      sessionTimeoutMs: 4000,
      retryPolicy: RetryPolicies.exponentialBackoff(20, 5, 200),
    });
    clients.push(c);
    await c.start();
    return c;
  }

  beforeAll(async () => {
    server = await TestingEmbeddedServer.start();
  });
  afterEach(async () => {
    await Promise.all(partitioners.splice(0).map((p) => p.close()));
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(() => server.close());

  it('shows each item of a partitioned set with its holder, and the members', async () => {
    const [a, b] = [await open(), await open()];
    const pa = new SetPartitioner(a, '/work/set', ITEMS, { identifier: 'worker-a', timeBoundaryMs: 50 });
    const pb = new SetPartitioner(b, '/work/set', ITEMS, { identifier: 'worker-b', timeBoundaryMs: 50 });
    partitioners.push(pa, pb);
    await Promise.all([pa.start(), pb.start()]);
    for (;;) {
      const [ia, ib] = await Promise.all([pa.waitForAcquire({ timeoutMs: 10_000 }), pb.waitForAcquire({ timeoutMs: 10_000 })]);
      if (ia.length + ib.length === ITEMS.length && pa.allocation === 'acquired' && pb.allocation === 'acquired') break;
    }
    const report = await inspectRecipes(a, { path: '/work' });
    expect(report.partitions).toHaveLength(1);
    const p = report.partitions[0]!;
    expect(p.path).toBe('/work/set');
    expect(p.members.map((m) => m.id)).toEqual(['worker-a', 'worker-b']);
    const holderOf = new Map(p.items.map((i) => [i.item, i.holder?.memberId]));
    for (const item of pa.items) expect(holderOf.get(item)).toBe('worker-a');
    for (const item of pb.items) expect(holderOf.get(item)).toBe('worker-b');
    expect(p.items.map((i) => i.item)).toEqual(ITEMS);
    // The item locks are kazoo locks, and neither they nor their nodes pass for group members.
    expect(report.locks.filter((l) => l.kind === 'kazoo').map((l) => l.path)).toEqual(ITEMS.map((i) => `/work/set/locks/${i}`));
    expect(report.groups.map((g) => g.path)).toEqual(['/work/set/party']);

    const table = await tenure(['--server', server.connectString, 'partitions', '/work']);
    expect(table.code).toBe(0);
    const rows = table.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^SET\s+ITEM\s+HOLDER\s+SESSION\s+TOKEN\s+HELD FOR\s+WAITING$/);
    expect(rows).toHaveLength(ITEMS.length + 1);
    for (const item of pa.items) expect(rows.find((r) => r.includes(` ${item} `))).toMatch(/worker-a/);
    expect(json(await tenure(['--server', server.connectString, '--json', 'partitions', '/work'])).partitions[0].items).toHaveLength(
      ITEMS.length,
    );
  });

  it('shows timed leases with their holder and time left, and a kazoo lock as a lock', async () => {
    const c = await open();
    const lease = await NonBlockingLease.obtain(c, '/cron/nightly', 3_600_000, { identifier: 'host-1' });
    expect(lease.obtained).toBe(true);
    await MultiNonBlockingLease.obtain(c, '/cron/pool', 2, 60_000, { identifier: 'host-2' });
    const lock = new KazooLock(c, '/cron/plain', { identifier: 'holder' });
    const held = await lock.acquire();
    const at = Date.now();
    const report = await inspectRecipes(c, { path: '/cron', now: at });
    expect(report.timedLeases.map((l) => [l.path, l.holder, l.running])).toEqual([
      ['/cron/nightly', 'host-1', true],
      ['/cron/pool/0', 'host-2', true],
    ]);
    const nightly = report.timedLeases[0]!;
    expect(nightly.endsAt).toBe(lease.endsAt.getTime());
    expect(nightly.timeLeftMs).toBe(lease.endsAt.getTime() - at);
    const plain = report.locks.find((l) => l.path === '/cron/plain')!;
    expect(plain.kind).toBe('kazoo');
    expect(plain.holder?.data.value).toBe('holder');
    // An hour later (the report's clock), the period has ended.
    const later = await inspectRecipes(c, { path: '/cron', now: at + 3_601_000 });
    expect(later.timedLeases[0]).toMatchObject({ running: false, timeLeftMs: 0 });

    const table = await tenure(['--server', server.connectString, 'leases', '/cron']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^LEASE\s+HOLDER\s+ENDS \(UTC\)\s+TIME LEFT/);
    expect(table.stdout).toMatch(/\/cron\/nightly\s+host-1\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+(59 min|1 h)/);
    await held.release();
    await lock.close();
  });
});
