/**
 * The locks on a real ZooKeeper 3.8: exclusion, no herd, no orphans, a silent holder (FaultProxy
 * blackhole), an injected expiry (expireSession), the semaphore's limit, tokens across a
 * re-created container.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventType } from '@tenure/client';
import { expireSession, realZooKeeper, ZooKeeperSuite } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { LeaseLostError, Mutex, ReadWriteLock, Semaphore, type Lease } from '../src/index.js';
import { answered, countingTransport, gone, roundTrip, sleep, tapped, watchingUnder, type TappedTransport } from './harness.js';
import type { Client } from '@tenure/client';

const zk = realZooKeeper();

describe.skipIf(!zk.available)('locks on ZooKeeper 3.8', () => {
  const suite = new ZooKeeperSuite();
  beforeAll(() => suite.start());
  afterEach(() => suite.afterEach());
  afterAll(() => suite.close());

  /** A client on a tapped transport, so the test can await its exchanges with the server. */
  async function openTapped(options: Parameters<typeof suite.clients.open>[0] = {}): Promise<{ c: Client; t: TappedTransport }> {
    const t = tapped(options.transport ?? suite.server.transport());
    return { c: await suite.clients.open({ ...options, transport: t }), t };
  }

  /** Lock and lease nodes left under `path`, by any session. */
  async function ephemeralsUnder(path: string): Promise<string[]> {
    const dump = await suite.server.dump();
    return dump.sessions
      .flatMap((s) => s.ephemerals)
      .filter((p) => p.startsWith(path + '/'))
      .sort();
  }

  it('10 clients x 100 unsafe increments inside the lock come to exactly 1,000', async () => {
    const admin = await suite.clients.open();
    await admin.create('/counter', '0');
    const workers = await suite.clients.openMany(10);
    let last = 0n;
    let rising = true;
    await Promise.all(
      workers.map(async (c) => {
        const mutex = new Mutex(c, '/locks/counter');
        for (let i = 0; i < 100; i++) {
          await using lease = await mutex.acquire();
          if (lease.fencingToken <= last) rising = false;
          last = lease.fencingToken;
          const { data } = await c.getData('/counter');
          await c.setData('/counter', String(Number(data.toString()) + 1));
        }
      }),
    );
    expect((await admin.getData('/counter')).data.toString()).toBe('1000');
    expect(rising).toBe(true);
    expect(await ephemeralsUnder('/locks/counter')).toEqual([]);
  });

  it('8 clients in tight acquire/release bursts all finish (a lost watch event would strand a waiter)', async () => {
    // Regression: an event in the same TCP read as the reply that set its watch used to be lost,
    // leaving a waiter with no watch. Bursts separated by pauses (the container is reaped between
    // them) made it likely.
    const cs = await suite.clients.openMany(8, { sessionTimeoutMs: 30_000 });
    const mutexes = cs.map((c) => new Mutex(c, '/locks/tight'));
    let done = 0;
    for (let burst = 0; burst < 6; burst++) {
      // Every client acquires and releases 10 times, back to back: the burst ends when all 80 are done.
      await Promise.all(
        mutexes.map(async (m) => {
          for (let i = 0; i < 10; i++) {
            const l = await m.acquire({ timeoutMs: 10_000 });
            await l.release();
            done++;
          }
        }),
      );
      await gone(cs[0]!, '/locks/tight'); // the pause: the server reaps the empty container
    }
    expect(done).toBe(480);
  });

  it('no herd: with 20 waiters each release wakes exactly one of them (counted watch events)', async () => {
    const counted = Array.from({ length: 21 }, () => countingTransport(zookeeper(suite.server.connectString)));
    const wires = counted.map((t) => tapped(t));
    const cs = await Promise.all(wires.map((t) => suite.clients.open({ transport: t })));
    const first = await new Mutex(cs[0]!, '/locks/herd').acquire();
    const leases: Array<Promise<Lease>> = [];
    const probe = new Mutex(cs[0]!, '/locks/herd');
    for (let i = 1; i <= 20; i++) {
      const queued = answered(wires[i]!, watchingUnder('/locks/herd'));
      leases.push(new Mutex(cs[i]!, '/locks/herd').acquire());
      await queued; // waiter i watches its predecessor
    }
    expect(await probe.participantNodes()).toHaveLength(21);
    const queue = await probe.participantNodes();
    // The server agrees: each waiter watches only its predecessor.
    const dump = await suite.server.dump();
    for (let i = 1; i <= 20; i++) {
      expect(dump.sessions.find((s) => s.sessionId === cs[i]!.sessionId)!.watchedPaths).toEqual([queue[i - 1]]);
    }
    let holder: Lease = first;
    for (let i = 1; i <= 20; i++) {
      const before = counted.map((t) => t.events.length);
      await holder.release();
      holder = await leases[i - 1]!;
      await roundTrip(...cs); // any stray event would have arrived before these replies
      // Events on a client's own node (its lease's watch) are not wake-ups.
      const woken = counted
        .map((t, k) => ({ k, events: t.events.slice(before[k]).filter((e) => e.path !== queue[k]) }))
        .filter(({ events }) => events.length > 0);
      expect(woken.map((w) => w.k)).toEqual([i]);
      expect(woken[0]!.events).toEqual([{ type: EventType.NodeDeleted, path: queue[i - 1] }]);
    }
    await holder.release();
    await roundTrip(...cs);
    expect((await suite.server.dump()).totalWatches).toBe(0);
  });

  it('timeouts and aborts leave no node and no watch behind', async () => {
    const a = await suite.clients.open();
    const { c: b, t } = await openTapped();
    const holder = await new Mutex(a, '/locks/orphans').acquire();
    const mutex = new Mutex(b, '/locks/orphans');
    await expect(mutex.acquire({ timeoutMs: 200 })).rejects.toMatchObject({ name: 'TimeoutError' });
    const ac = new AbortController();
    const queued = answered(t, watchingUnder('/locks/orphans'));
    const p = mutex.acquire({ signal: ac.signal });
    await queued;
    expect(await ephemeralsUnder('/locks/orphans')).toHaveLength(2);
    ac.abort();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    const writer = await new ReadWriteLock(a, '/locks/orphans-rw').writeLock.acquire();
    await expect(new ReadWriteLock(b, '/locks/orphans-rw').readLock.acquire({ timeoutMs: 200 })).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    expect(await ephemeralsUnder('/locks/orphans')).toEqual([holder.path]);
    expect(await ephemeralsUnder('/locks/orphans-rw')).toEqual([writer.path]);
    // Each given-up wait sent its removeWatches before its delete: a round trip orders after both.
    await roundTrip(b);
    expect((await suite.server.dump()).sessions.find((s) => s.sessionId === b.sessionId)!.watches).toBe(0);
    await holder.release();
    await writer.release();
  });

  it('a silent holder (FaultProxy blackhole): its signal aborts before the next waiter acquires; the new token is larger', async () => {
    const proxy = await suite.faultProxy();
    const a = await suite.clients.open({ transport: zookeeper(proxy.connectString), sessionTimeoutMs: 2000 });
    const { c: b, t } = await openTapped();
    const lease = await new Mutex(a, '/locks/silent').acquire();
    const queued = answered(t, watchingUnder('/locks/silent'));
    const next = new Mutex(b, '/locks/silent').acquire();
    await queued;
    const abortedAt = new Promise<number>((r) => lease.signal.addEventListener('abort', () => r(performance.now()), { once: true }));
    proxy.blackhole();
    const l2 = await next;
    const acquiredAt = performance.now();
    expect(lease.signal.aborted).toBe(true);
    expect(await abortedAt).toBeLessThan(acquiredAt);
    expect((lease.signal.reason as LeaseLostError).end).toBe('suspended');
    expect(l2.fencingToken > lease.fencingToken).toBe(true);
    await l2.release();
  });

  it('an injected expiry: the next waiter acquires with a larger token; the old signal aborts within the read timeout', async () => {
    const a = await suite.clients.open({ sessionTimeoutMs: 3000 });
    const { c: b, t } = await openTapped({ sessionTimeoutMs: 3000 });
    const lease = await new Mutex(a, '/locks/expire').acquire();
    const queued = answered(t, watchingUnder('/locks/expire'));
    const next = new Mutex(b, '/locks/expire').acquire();
    await queued;
    const abortedAt = new Promise<number>((r) => lease.signal.addEventListener('abort', () => r(performance.now()), { once: true }));
    const t0 = performance.now();
    await expireSession(a, suite.server);
    const l2 = await next;
    expect(l2.fencingToken > lease.fencingToken).toBe(true);
    expect((await abortedAt) - t0).toBeLessThan((a.negotiatedTimeoutMs * 2) / 3 + 500);
    await l2.release();
  });

  it('tokens rise across a container parent that the server removed and re-created', async () => {
    const c = await suite.clients.open();
    const mutex = new Mutex(c, '/locks/reborn');
    const first = await mutex.acquire();
    await first.release();
    await gone(c, '/locks/reborn'); // the container reaped
    const second = await mutex.acquire();
    expect(second.path.slice(-10)).toBe(first.path.slice(-10)); // the sequence restarted
    expect(second.fencingToken > first.fencingToken).toBe(true);
    await second.release();
  });

  it('the semaphore keeps its limit under churn: 6 clients, 2 leases', async () => {
    const cs = await suite.clients.openMany(6);
    const live = new Set<Lease>();
    let maxSeen = 0;
    await Promise.all(
      cs.map(async (c) => {
        const sem = new Semaphore(c, '/locks/sem', 2);
        for (let i = 0; i < 8; i++) {
          const l = await sem.acquire();
          live.add(l);
          maxSeen = Math.max(maxSeen, live.size);
          await sleep(15);
          live.delete(l);
          await l.release();
        }
      }),
    );
    expect(maxSeen).toBeLessThanOrEqual(2);
    expect(maxSeen).toBeGreaterThan(0);
    expect(await ephemeralsUnder('/locks/sem')).toEqual([]);
  });
});
