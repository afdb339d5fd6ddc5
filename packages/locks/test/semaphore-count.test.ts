/**
 * Semaphore with a count-backed maximum (Curator's InterProcessSemaphoreV2 on a SharedCount), on
 * the embedded server, with a real SharedCount from @tenure/counters (a test-only dependency).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { SharedCount } from '@tenure/counters';
import { Semaphore, type Lease, type LeaseCount } from '../src/index.js';
import { OpCode } from '@tenure/protocol';
import { nextEvent } from '@tenure/testing';
import { Clients, ephemeralsUnder, roundTrip, sleep, startServer, tracked, watchingChildren } from './harness.js';

let server: EmbeddedServer;
let clients: Clients;
const counts: SharedCount[] = [];
function setup(): void {
  server = startServer();
  clients = new Clients(() => server.transport());
}
afterEach(async () => {
  await Promise.all(counts.splice(0).map((c) => c.close()));
  await clients.closeAll();
  await server.close();
});

async function sharedCount(c: Client, path: string, seed: number): Promise<SharedCount> {
  const count = new SharedCount(c, path, seed);
  await count.start();
  counts.push(count);
  return count;
}

describe('Semaphore on a SharedCount', () => {
  it('the limit follows the count: raising it grants a waiter, lowering it makes new acquires wait until leases are returned', async () => {
    setup();
    const [a, b, admin] = await clients.openMany(3);
    const countA = await sharedCount(a, '/semc/max', 1);
    const countB = await sharedCount(b, '/semc/max', 1);
    const sa = new Semaphore(a, '/semc/follow', countA);
    const sb = new Semaphore(b, '/semc/follow', countB);
    const writer = await sharedCount(admin, '/semc/max', 1);
    expect(sa.maxLeases).toBe(1);
    const leases = '/semc/follow/leases';

    const first = await sa.acquire();
    const bWaits = clients.answered(b, watchingChildren(leases));
    const second = tracked(sb.acquire());
    await bWaits; // two lease nodes for a limit of 1: b watches leases/
    expect(second.settled).toBe(false);
    const raised = nextEvent(countA, 'change', () => sa.maxLeases === 2);
    await writer.setCount(2); // another client raises it: b's SharedCount sees it and wakes b's waiter
    const l2 = await second.promise;
    await raised; // the raise reaches a too

    const cut = [nextEvent(countA, 'change', () => sa.maxLeases === 1), nextEvent(countB, 'change', () => sb.maxLeases === 1)];
    await writer.setCount(1);
    await Promise.all(cut); // the cut reaches a and b
    expect(first.isHeld() && l2.isHeld()).toBe(true); // lowering revokes nothing
    let aWaits = clients.answered(a, watchingChildren(leases));
    const third = tracked(sa.acquire());
    await aWaits;
    expect(third.settled).toBe(false);
    aWaits = clients.answered(a, watchingChildren(leases));
    await first.release();
    await aWaits; // woken by the release, it counted again and watches again
    expect(third.settled).toBe(false); // l2 and the waiter: 2 nodes, still over 1
    await l2.release();
    const l3 = await third.promise;
    await l3.release();
    expect(ephemeralsUnder(server, '/semc/follow')).toEqual([]);
  });

  it('a change of the count alone wakes a waiter (no lease node changes), and acquire(n) above the count waits for it', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const countA = await sharedCount(a, '/semc/wake/max', 1);
    const sem = new Semaphore(a, '/semc/wake', countA);
    const held = await sem.acquire();
    const waiter = new Semaphore(b, '/semc/wake', await sharedCount(b, '/semc/wake/max', 1));
    const watching = clients.answered(b, watchingChildren('/semc/wake/leases'));
    const two = tracked(waiter.acquire(2)); // more than the count allows now: waits, no LeaseCountError
    await watching;
    expect(two.settled).toBe(false);
    expect(server.watchesOf(b.sessionId).child).toHaveLength(1); // the waiter watches leases/
    const unwatched = clients.answered(b, (r) => r.type === OpCode.removeWatches && r.path === '/semc/wake/leases');
    await countA.setCount(3);
    const got = await two.promise;
    expect(got).toHaveLength(2);
    for (const l of [held, ...got]) await l.release();
    await unwatched; // the count woke it, not its watch: it took the watch back
    expect(server.watchesOf(b.sessionId).child).toEqual([]);
  });

  it('the count listener exists only while an acquirer waits; close() removes it and leaves nothing behind', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const count = await sharedCount(b, '/semc/close/max', 1);
    const held = await new Semaphore(a, '/semc/close', 1).acquire();
    const sem = new Semaphore(b, '/semc/close', count);
    expect(count.listenerCount('change')).toBe(0);
    await expect(sem.acquire({ timeoutMs: 150 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(count.listenerCount('change')).toBe(0);

    const watching = clients.answered(b, watchingChildren('/semc/close/leases'));
    const waits = [sem.acquire(), sem.acquire()];
    await watching; // the gate's holder waits for room; the other waits for the gate
    expect(count.listenerCount('change')).toBe(1);
    const unwatched = clients.answered(b, (r) => r.type === OpCode.removeWatches && r.path === '/semc/close/leases');
    const closing = sem.close();
    expect(count.listenerCount('change')).toBe(0); // at once, even before the waiter has run again
    await closing;
    for (const w of waits) await expect(w).rejects.toMatchObject({ name: 'ClosedError' });
    expect(count.listenerCount('change')).toBe(0);
    await unwatched;
    expect(server.watchesOf(b.sessionId).child).toEqual([]);
    await roundTrip(b);
    expect(ephemeralsUnder(server, '/semc/close')).toEqual([held.path]);
    await held.release();
  });

  it('accepts any { count, on, off } source, and keeps the limit under churn while the count rises', async () => {
    setup();
    // A plain source, not a SharedCount: the shape is the whole contract.
    const listeners = new Set<() => void>();
    const source: LeaseCount & { set(n: number): void } = {
      count: 1,
      on: (_e, l) => listeners.add(l),
      off: (_e, l) => listeners.delete(l),
      set(n) {
        (this as { count: number }).count = n;
        for (const l of [...listeners]) l();
      },
    };
    const cs = await clients.openMany(6);
    const live = new Set<Lease>();
    const violations: string[] = [];
    let maxSeen = 0;
    let granted = 0;
    // The count rises while the churn runs: at the 10th grant, then at the 25th.
    const raises = new Map([
      [10, 2],
      [25, 3],
    ]);
    const run = Promise.all(
      cs.map(async (c) => {
        const sem = new Semaphore(c, '/semc/churn', source);
        for (let i = 0; i < 10; i++) {
          const l = await sem.acquire();
          const max = source.count; // the count only rises here, so this bounds every moment since the grant
          live.add(l);
          granted++;
          maxSeen = Math.max(maxSeen, live.size);
          if (live.size > max) violations.push(`${live.size} leases with a count of ${max}`);
          const raise = raises.get(granted);
          if (raise !== undefined) source.set(raise);
          await sleep(Math.random() * 5);
          live.delete(l);
          await l.release();
        }
      }),
    );
    await run;
    expect(source.count).toBe(3);
    expect(violations).toEqual([]);
    expect(granted).toBe(60);
    expect(maxSeen).toBeGreaterThan(1);
    expect(listeners.size).toBe(0);
    expect(ephemeralsUnder(server, '/semc/churn')).toEqual([]);
  });
});
