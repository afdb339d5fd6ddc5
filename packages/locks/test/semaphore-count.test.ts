/**
 * Semaphore with a count-backed maximum (Curator's InterProcessSemaphoreV2 on a SharedCount), on
 * the embedded server, with a real SharedCount from @tenure/counters (a test-only dependency).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { SharedCount } from '@tenure/counters';
import { Semaphore, type Lease, type LeaseCount } from '../src/index.js';
import { Clients, ephemeralsUnder, eventually, sleep, startServer } from './harness.js';

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

const pending = <T>(p: Promise<T>, ms = 150): Promise<T | 'waiting'> => Promise.race([p, sleep(ms).then(() => 'waiting' as const)]);

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
    const sa = new Semaphore(a, '/semc/follow', await sharedCount(a, '/semc/max', 1));
    const sb = new Semaphore(b, '/semc/follow', await sharedCount(b, '/semc/max', 1));
    const writer = await sharedCount(admin, '/semc/max', 1);
    expect(sa.maxLeases).toBe(1);

    const first = await sa.acquire();
    const second = sb.acquire();
    expect(await pending(second)).toBe('waiting');
    await writer.setCount(2); // another client raises it: b's SharedCount sees it and wakes b's waiter
    const l2 = await second;
    await eventually(() => sa.maxLeases === 2, 2000, 'the raise to reach a');

    await writer.setCount(1);
    await eventually(() => sa.maxLeases === 1 && sb.maxLeases === 1, 2000, 'the cut to reach a and b');
    expect(first.isHeld() && l2.isHeld()).toBe(true); // lowering revokes nothing
    const third = sa.acquire();
    expect(await pending(third)).toBe('waiting');
    await first.release();
    expect(await pending(third)).toBe('waiting'); // l2 and the waiter: 2 nodes, still over 1
    await l2.release();
    const l3 = await third;
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
    const two = waiter.acquire(2); // more than the count allows now: waits, no LeaseCountError
    expect(await pending(two)).toBe('waiting');
    await eventually(() => server.watchesOf(b.sessionId).child.length === 1, 2000, 'the waiter to watch leases/');
    await countA.setCount(3);
    const got = await two;
    expect(got).toHaveLength(2);
    for (const l of [held, ...got]) await l.release();
    await eventually(() => server.watchesOf(b.sessionId).child.length === 0, 2000, 'no child watch left');
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

    const waits = [sem.acquire(), sem.acquire()];
    await eventually(() => count.listenerCount('change') === 1, 2000, 'the waiter to listen to the count');
    const closing = sem.close();
    expect(count.listenerCount('change')).toBe(0); // at once, even before the waiter has run again
    await closing;
    for (const w of waits) await expect(w).rejects.toMatchObject({ name: 'ClosedError' });
    expect(count.listenerCount('change')).toBe(0);
    await eventually(() => server.watchesOf(b.sessionId).child.length === 0, 2000, 'no child watch left');
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
          await sleep(Math.random() * 5);
          live.delete(l);
          await l.release();
        }
      }),
    );
    await sleep(100);
    source.set(2);
    await sleep(100);
    source.set(3);
    await run;
    expect(violations).toEqual([]);
    expect(granted).toBe(60);
    expect(maxSeen).toBeGreaterThan(1);
    expect(listeners.size).toBe(0);
    expect(ephemeralsUnder(server, '/semc/churn')).toEqual([]);
  });
});
