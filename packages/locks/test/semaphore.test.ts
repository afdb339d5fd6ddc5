/** Semaphore and SemaphoreMutex on the embedded server: layout, the lease limit under churn and faults, all-or-nothing. */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, type Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { LeaseCountError, Semaphore, SemaphoreMutex, type Lease } from '../src/index.js';
import { OpCode } from '@tenure/protocol';
import {
  aborted,
  Clients,
  ephemeralsUnder,
  eventually,
  gone,
  roundTrip,
  sleep,
  startServer,
  tracked,
  watchingChildren,
} from './harness.js';

let server: EmbeddedServer;
let clients: Clients;
function setup(): void {
  server = startServer();
  clients = new Clients(() => server.transport());
}
afterEach(async () => {
  await clients.closeAll();
  await server.close();
});

/** Lease holders across every client: the limit is checked whenever a lease is granted. */
class Occupancy {
  live = new Set<Lease>();
  maxSeen = 0;
  violations: string[] = [];
  granted = 0;
  constructor(private readonly max: number) {}
  enter(l: Lease): void {
    for (const x of this.live) if (!x.isHeld()) this.live.delete(x);
    this.live.add(l);
    this.granted++;
    this.maxSeen = Math.max(this.maxSeen, this.live.size);
    if (this.live.size > this.max) this.violations.push(`${this.live.size} live leases`);
  }
  leave(l: Lease): void {
    this.live.delete(l);
  }
}

describe('Semaphore', () => {
  it("uses InterProcessSemaphoreV2's layout: leases/_c_<uuid>-lease-<seq>, and locks/ only while acquiring", async () => {
    setup();
    const c = await clients.open();
    const sem = new Semaphore(c, '/sem/layout', 2, { data: 'worker-1' });
    // The acquire lets the next acquirer go without waiting for the gate's delete.
    const gateReleased = clients.answered(c, (r) => r.type === OpCode.delete && r.path.startsWith('/sem/layout/locks/'));
    const [a, b] = await sem.acquire(2);
    expect(a!.path).toMatch(/^\/sem\/layout\/leases\/_c_[0-9a-f-]{36}-lease-\d{10}$/);
    expect(server.node(a!.path)!.data!.toString()).toBe('worker-1');
    expect(a!.fencingToken).not.toBe(b!.fencingToken); // each lease has its own token
    expect(server.node(a!.path)!.stat.czxid).toBe(a!.fencingToken);
    await gateReleased;
    expect(ephemeralsUnder(server, '/sem/layout/locks')).toEqual([]);
    expect((await sem.participantNodes()).sort()).toEqual([a!.path, b!.path].map((p) => p.slice(p.lastIndexOf('/') + 1)).sort());
    await a!.release();
    expect(b!.isHeld()).toBe(true);
    await b!.release();
    expect(ephemeralsUnder(server, '/sem/layout')).toEqual([]);
  });

  it('acquire(n) is all or nothing: a timed-out acquire of 2 leaves none of its leases', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const held = await new Semaphore(a, '/sem/aon', 3).acquire(2);
    const sem = new Semaphore(b, '/sem/aon', 3);
    const unwatched = clients.answered(b, (r) => r.type === OpCode.removeWatches && r.path === '/sem/aon/leases');
    await expect(sem.acquire(2, { timeoutMs: 150 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(ephemeralsUnder(server, '/sem/aon').sort()).toEqual(held.map((l) => l.path).sort());
    await unwatched;
    expect(server.watchesOf(b.sessionId).child).toEqual([]);
    const waiting = clients.answered(b, watchingChildren('/sem/aon/leases'));
    const two = tracked(sem.acquire(2));
    await waiting; // its second lease node is over the limit: it watches leases/
    expect(two.settled).toBe(false);
    await held[0]!.release();
    const got = await two.promise;
    expect(got).toHaveLength(2);
    for (const l of [...got, held[1]!]) await l.release();
    expect(ephemeralsUnder(server, '/sem/aon')).toEqual([]);
  });

  it('refuses more leases than it has, and bad counts', async () => {
    setup();
    const c = await clients.open();
    const sem = new Semaphore(c, '/sem/count', 2);
    await expect(sem.acquire(3)).rejects.toBeInstanceOf(LeaseCountError);
    await expect(sem.acquire(0)).rejects.toThrow(InvalidArgumentError);
    expect(() => new Semaphore(c, '/sem/count', 0)).toThrow(InvalidArgumentError);
    expect(ephemeralsUnder(server, '/sem')).toEqual([]);
  });

  it('two acquirers of all the leases do not deadlock (the gate is held for the whole acquire)', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const sa = new Semaphore(a, '/sem/dl', 2);
    const sb = new Semaphore(b, '/sem/dl', 2);
    const results = await Promise.all(
      [sa, sb].map(async (s) => {
        const ls = await s.acquire(2, { timeoutMs: 5000 });
        await sleep(30);
        for (const l of ls) await l.release();
        return ls.length;
      }),
    );
    expect(results).toEqual([2, 2]);
  });

  it('keeps its lease limit under churn: 8 clients, 3 leases, never more than 3 held', async () => {
    setup();
    const cs = await clients.openMany(8);
    const occ = new Occupancy(3);
    await Promise.all(
      cs.map(async (c) => {
        const sem = new Semaphore(c, '/sem/churn', 3);
        for (let i = 0; i < 15; i++) {
          const l = await sem.acquire();
          occ.enter(l);
          await sleep(Math.random() * 5);
          occ.leave(l);
          await l.release();
        }
      }),
    );
    expect(occ.violations).toEqual([]);
    expect(occ.granted).toBe(120);
    expect(occ.maxSeen).toBe(3);
    expect(ephemeralsUnder(server, '/sem/churn')).toEqual([]);
  });

  it('keeps its lease limit under faults (dropped connections, expired sessions), with no orphaned leases', async () => {
    setup();
    const cs = await clients.openMany(6);
    const occ = new Occupancy(2);
    let stop = false;
    let lost = 0;
    let injected = 0;
    const failed: string[] = [];
    const faults = (async () => {
      for (let i = 0; !stop; i++) {
        await sleep(40);
        injected++;
        const victim = cs[i % cs.length]!;
        if (victim.sessionId === 0n) continue;
        if (i % 3 === 2) server.expireSession(victim.sessionId);
        else server.dropConnection(victim.sessionId);
      }
    })();
    const work = async (c: Client): Promise<void> => {
      const sem = new Semaphore(c, '/sem/faults', 2);
      for (let i = 0; i < 15; i++) {
        let l: Lease;
        try {
          l = await sem.acquire({ timeoutMs: 10_000 });
        } catch (err) {
          // A fault can fail an acquire after the client's retries; the limit is what we test.
          if ((err as Error).name === 'TimeoutError') throw err;
          failed.push((err as Error).name);
          continue;
        }
        occ.enter(l);
        await sleep(15);
        if (l.signal.aborted) lost++;
        occ.leave(l);
        await l.release();
      }
    };
    await Promise.all(cs.map(work));
    stop = true;
    await faults;
    expect(occ.violations).toEqual([]);
    expect(injected).toBeGreaterThan(10);
    expect(occ.granted).toBeGreaterThan(45);
    // Every lease node and gate node is gone once the clients settle: no orphans.
    await eventually(() => ephemeralsUnder(server, '/sem/faults').length === 0, 5000, 'no lease or gate nodes left');
    for (const c of cs) expect(c.pendingDeletes).toEqual([]);
    expect(lost).toBeGreaterThanOrEqual(0);
  });

  it('a lease ends on SUSPENDED (standard policy) and its node is deleted', async () => {
    setup();
    const c = await clients.open();
    const observer = await clients.open();
    const l = await new Semaphore(c, '/sem/susp', 2).acquire();
    server.dropConnection(c.sessionId);
    await aborted(l.signal);
    await gone(observer, l.path); // deleted by the client once it is back
  });
});

describe('SemaphoreMutex', () => {
  it('is a one-lease semaphore with the same layout, never reentrant', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const m = new SemaphoreMutex(a, '/smutex/x');
    const l = await m.acquire();
    expect(l.path).toMatch(/^\/smutex\/x\/leases\/_c_[0-9a-f-]{36}-lease-\d{10}$/);
    const watching = clients.answered(a, watchingChildren('/smutex/x/leases'));
    const second = tracked(m.acquire());
    await watching; // same object, same caller: its lease node is over the limit, and it waits
    expect(second.settled).toBe(false);
    const other = new SemaphoreMutex(b, '/smutex/x');
    await expect(other.acquire({ timeoutMs: 100 })).rejects.toMatchObject({ name: 'TimeoutError' });
    await l.release();
    await m.close(); // the waiting acquire stops; nothing is left
    // Granted by the release, or stopped by the close: either way close() has let it go.
    await second.promise.then(
      (lease) => expect(lease.isHeld()).toBe(false),
      (err: unknown) => expect(err).toMatchObject({ name: 'ClosedError' }),
    );
    await roundTrip(a); // the gate's delete, sent without waiting, has been served
    expect(ephemeralsUnder(server, '/smutex/x')).toEqual([]);
    const l2 = await other.acquire();
    expect(l2.fencingToken > l.fencingToken).toBe(true);
    await l2.release();
  });
});
