/**
 * NonBlockingLease and MultiNonBlockingLease on the embedded server, on one ManualClock (the
 * periods are manual time): kazoo's record bytes, one holder per period, renewal, expiry, Multi.
 */
import diagnostics from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, type Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { ManualClock } from '@tenure/testing';
import {
  LeaseFormatError,
  MultiNonBlockingLease,
  TIMED_LEASE_CHANNEL,
  type LeaseAttemptMessage,
  NonBlockingLease,
  decodeLeaseRecord,
  encodeLeaseRecord,
  formatKazooTime,
  parseKazooTime,
  wallClock,
} from '../src/index.js';
import { Clients, ephemeralsUnder, roundTrip, startServer } from './harness.js';

let clock: ManualClock;
let server: EmbeddedServer;
let clients: Clients;
let a: Client;
let b: Client;

beforeEach(async () => {
  clock = new ManualClock();
  server = startServer({ clock });
  clients = new Clients(() => server.transport());
  [a, b] = await clients.openMany(2, { clock });
});
afterEach(async () => {
  await clients.closeAll();
  await server.close();
});

const HOUR = 120_000; // a period (manual time)
const record = (path: string): string => server.node(`${path}/lease_holder`)!.data!.toString();

describe('NonBlockingLease', () => {
  it("writes kazoo's record, refuses another holder until the end, renews for the same identifier, and passes on after the end", async () => {
    const now = wallClock(clock);
    const first = await NonBlockingLease.obtain(a, '/leases/cron', HOUR, { identifier: 'host-a' });
    expect(first.obtained).toBe(true);
    expect(first.holder).toBe('host-a');
    // now + duration, truncated to the second (strftime).
    expect(first.endsAt.getTime()).toBe(Math.floor((now().getTime() + HOUR) / 1000) * 1000);
    expect(record('/leases/cron')).toBe(`{"version": 1, "holder": "host-a", "end": "${formatKazooTime(first.endsAt)}"}`);

    const refused = await NonBlockingLease.obtain(b, '/leases/cron', HOUR, { identifier: 'host-b' });
    expect(refused).toEqual({ obtained: false, holder: 'host-a', endsAt: first.endsAt });

    await clock.advance(HOUR / 2);
    const renewed = await NonBlockingLease.obtain(a, '/leases/cron', HOUR, { identifier: 'host-a' });
    expect(renewed.obtained).toBe(true);
    expect(renewed.endsAt.getTime()).toBeGreaterThan(first.endsAt.getTime());

    // Just before the renewed end: still refused; at the end: the period is b's.
    await clock.advance(renewed.endsAt.getTime() - now().getTime() - 1);
    expect((await NonBlockingLease.obtain(b, '/leases/cron', HOUR, { identifier: 'host-b' })).obtained).toBe(false);
    await clock.advance(1);
    const taken = await NonBlockingLease.obtain(b, '/leases/cron', HOUR, { identifier: 'host-b' });
    expect(taken.obtained).toBe(true);
    expect(taken.holder).toBe('host-b');
    // The lock was held only for the exchange: no lock node, no watch.
    expect(ephemeralsUnder(server, '/leases')).toEqual([]);
    expect(server.node('/leases/cron')!.children).toEqual(['lease_holder']);
    await roundTrip(a, b);
    expect([...server.watchCounts().values()].every((n) => n === 0)).toBe(true);
  });

  it('contenders at once: one holder per period over several periods', async () => {
    const more = await clients.openMany(4, { clock });
    const all = [a, b, ...more];
    const holders: string[] = [];
    for (let period = 0; period < 4; period++) {
      const results = await Promise.all(
        all.map((c, i) => NonBlockingLease.obtain(c, '/leases/once', 60_000, { identifier: `c${i}-p${period}` })),
      );
      const won = results.filter((r) => r.obtained);
      expect(won).toHaveLength(1);
      for (const r of results) expect(r.holder).toBe(won[0]!.holder);
      holders.push(won[0]!.holder);
      await clock.advance(61_000);
    }
    expect(new Set(holders).size).toBe(4);
  });

  it('refuses a record of another version, and a record that is not JSON is a LeaseFormatError', async () => {
    await a.create('/leases/v2/lease_holder', '{"version": 2, "holder": "future", "end": "2000-01-01T00:00:00"}', { createParents: true });
    expect(await NonBlockingLease.obtain(b, '/leases/v2', HOUR, { identifier: 'b' })).toEqual({
      obtained: false,
      holder: 'future',
      endsAt: new Date(Date.UTC(2000, 0, 1)),
    });
    await a.create('/leases/bad/lease_holder', 'not json', { createParents: true });
    const err = await NonBlockingLease.obtain(b, '/leases/bad', HOUR, { identifier: 'b' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseFormatError);
    expect((err as LeaseFormatError).code).toBe('LEASE_FORMAT');
    // The lock was released on the way out.
    expect(ephemeralsUnder(server, '/leases')).toEqual([]);
  });

  it('refuses bad arguments at once', async () => {
    await expect(NonBlockingLease.obtain(a, '/leases/x', 0, { identifier: 'a' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(NonBlockingLease.obtain(a, '/leases/x', HOUR, { identifier: '' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(MultiNonBlockingLease.obtain(a, '/leases/x', 0, HOUR, { identifier: 'a' })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('the timed-lease channel', () => {
  it('publishes each attempt: path, identifier, obtained, holder, end', async () => {
    const seen: LeaseAttemptMessage[] = [];
    const onMessage = (m: unknown): void => void seen.push(m as LeaseAttemptMessage);
    diagnostics.subscribe(TIMED_LEASE_CHANNEL, onMessage);
    try {
      const won = await NonBlockingLease.obtain(a, '/leases/traced', HOUR, { identifier: 'a' });
      await MultiNonBlockingLease.obtain(b, '/leases/traced', 1, HOUR, { identifier: 'b' });
      await NonBlockingLease.obtain(b, '/leases/traced', HOUR, { identifier: 'b' });
      expect(seen).toEqual([
        { path: '/leases/traced', identifier: 'a', obtained: true, holder: 'a', endsAt: won.endsAt },
        { path: '/leases/traced/0', identifier: 'b', obtained: true, holder: 'b', endsAt: expect.any(Date) },
        { path: '/leases/traced', identifier: 'b', obtained: false, holder: 'a', endsAt: won.endsAt },
      ]);
    } finally {
      diagnostics.unsubscribe(TIMED_LEASE_CHANNEL, onMessage);
    }
  });
});

describe('MultiNonBlockingLease', () => {
  it('at most count holders per period, on <path>/0 … <path>/<count-1>', async () => {
    const c = await clients.open({ clock });
    const ra = await MultiNonBlockingLease.obtain(a, '/leases/multi', 2, HOUR, { identifier: 'a' });
    const rb = await MultiNonBlockingLease.obtain(b, '/leases/multi', 2, HOUR, { identifier: 'b' });
    const rc = await MultiNonBlockingLease.obtain(c, '/leases/multi', 2, HOUR, { identifier: 'c' });
    expect([ra.obtained, rb.obtained, rc.obtained]).toEqual([true, true, false]);
    expect(decodeLeaseRecord(server.node('/leases/multi/0/lease_holder')!.data!).holder).toBe('a');
    expect(decodeLeaseRecord(server.node('/leases/multi/1/lease_holder')!.data!).holder).toBe('b');
    expect(rc.holder).toBe('b');
    // a renews its own slot; after the period c gets one.
    expect((await MultiNonBlockingLease.obtain(a, '/leases/multi', 2, HOUR, { identifier: 'a' })).obtained).toBe(true);
    await clock.advance(HOUR + 1000);
    expect((await MultiNonBlockingLease.obtain(c, '/leases/multi', 2, HOUR, { identifier: 'c' })).obtained).toBe(true);
  });
});

describe("kazoo's encoding", () => {
  it("is Python's json.dumps: ', ' and ': ' separators, non-ASCII as \\u escapes", () => {
    const end = new Date(Date.UTC(2026, 11, 2, 3, 4, 5, 678));
    expect(encodeLeaseRecord('höst "1"\u007f😀', end).toString()).toBe(
      '{"version": 1, "holder": "h\\u00f6st \\"1\\"\\u007f\\ud83d\\ude00", "end": "2026-12-02T03:04:05"}',
    );
    expect(decodeLeaseRecord(encodeLeaseRecord('höst', end))).toEqual({
      version: 1,
      holder: 'höst',
      endsAt: new Date(Date.UTC(2026, 11, 2, 3, 4, 5)),
    });
  });

  it('reads the time as strptime does: UTC, no zone, no fraction', () => {
    expect(parseKazooTime('2026-12-02T03:04:05').toISOString()).toBe('2026-12-02T03:04:05.000Z');
    expect(parseKazooTime('2026-1-2T3:04:05').toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect(Number.isNaN(parseKazooTime('2026-12-02T03:04:05.5').getTime())).toBe(true);
    expect(Number.isNaN(parseKazooTime('2026-12-02T03:04:05Z').getTime())).toBe(true);
    expect(Number.isNaN(parseKazooTime('2026-02-30T03:04:05').getTime())).toBe(true);
  });
});
