/** Mutex on the embedded server: exclusion, layout, tokens, reentrancy, waits that give up, no herd. */
import { afterEach, describe, expect, it } from 'vitest';
import { EventType, InvalidArgumentError } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { LeaseLostError, Mutex, type Lease } from '../src/index.js';
import { aborted, Clients, countingTransport, ephemeralsUnder, gone, roundTrip, sent, startServer } from './harness.js';
import { OpCode } from '@tenure/protocol';

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

/** No session holds a watch any more. */
function noWatches(): boolean {
  return server.sessions().every((s) => s.watches === 0);
}

describe('Mutex', () => {
  it('10 clients x 100 unsafe increments inside the lock come to exactly 1,000, with rising tokens', async () => {
    setup();
    const admin = await clients.open();
    await admin.create('/counter', '0');
    const workers = await clients.openMany(10);
    const tokens: bigint[] = [];
    await Promise.all(
      workers.map(async (c) => {
        const mutex = new Mutex(c, '/locks/counter');
        for (let i = 0; i < 100; i++) {
          await using lease = await mutex.acquire();
          tokens.push(lease.fencingToken);
          const { data } = await c.getData('/counter');
          await c.sync('/counter'); // a round trip: every other worker could interleave here, were the lock broken
          await c.setData('/counter', String(Number(data.toString()) + 1));
        }
      }),
    );
    expect((await admin.getData('/counter')).data.toString()).toBe('1000');
    expect(tokens).toHaveLength(1000);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]! > tokens[i - 1]!).toBe(true);
    expect(ephemeralsUnder(server, '/locks')).toEqual([]);
    // Every wake-up consumed its watch and every release's delete removed its own.
    await roundTrip(admin, ...workers);
    expect(noWatches()).toBe(true);
  });

  it("lays out Curator's nodes: a protected EPHEMERAL_SEQUENTIAL lock- node whose czxid is the token and whose data is the payload", async () => {
    setup();
    const c = await clients.open();
    const lease = await new Mutex(c, '/locks/layout', { data: 'host-1' }).acquire();
    expect(lease.path).toMatch(/^\/locks\/layout\/_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\d{10}$/);
    const node = server.node(lease.path)!;
    expect(node.stat.czxid).toBe(lease.fencingToken);
    expect(node.stat.ephemeralOwner).toBe(c.sessionId);
    expect(node.data!.toString()).toBe('host-1');
    // The parent is a container: the server removes it once empty.
    await lease.release();
    await gone(c, '/locks/layout');
    expect(server.node('/locks/layout')).toBeUndefined();
  });

  it('tokens rise even when the container parent is removed and re-created (sequence numbers restart)', async () => {
    setup();
    const c = await clients.open();
    const mutex = new Mutex(c, '/locks/reborn');
    const first = await mutex.acquire();
    await first.release();
    await gone(c, '/locks/reborn'); // the container reaped
    const second = await mutex.acquire();
    expect(first.path.endsWith('-lock-0000000000')).toBe(true);
    expect(second.path.endsWith('-lock-0000000000')).toBe(true);
    expect(second.fencingToken > first.fencingToken).toBe(true);
    await second.release();
  });

  it('is not reentrant by default: a second acquire on the same object waits its turn', async () => {
    setup();
    const c = await clients.open();
    const mutex = new Mutex(c, '/locks/plain');
    const a = await mutex.acquire();
    // a's own node watch is armed on the next turn: let it be answered, so what follows is b's.
    await clients.answered(c, (r) => r.type === OpCode.getData && r.path === a.path);
    let granted = false;
    const waiting = clients.waiting(c, '/locks/plain');
    const b = mutex.acquire().then((l) => ((granted = true), l));
    await waiting; // b watches a's node
    await roundTrip(c);
    expect(granted).toBe(false);
    await a.release();
    const lease = await b;
    expect(lease.fencingToken > a.fencingToken).toBe(true);
    await lease.release();
  });

  it('is reentrant for an explicit owner: one node, one token, deleted when the count reaches zero', async () => {
    setup();
    const c = await clients.open();
    const mutex = new Mutex(c, '/locks/re');
    const owner = { job: 17 };
    const [a, b] = await Promise.all([mutex.acquire({ owner }), mutex.acquire({ owner })]);
    const cLease = await mutex.acquire({ owner });
    expect(new Set([a.path, b.path, cLease.path]).size).toBe(1);
    expect(b.fencingToken).toBe(a.fencingToken);
    expect(a.owner).toBe(owner);
    expect(ephemeralsUnder(server, '/locks/re')).toHaveLength(1);
    // Another owner waits.
    await expect(mutex.acquire({ owner: 'other', timeoutMs: 100 })).rejects.toMatchObject({ name: 'TimeoutError' });
    await a.release();
    await a.release(); // idempotent: counts once
    await b.release();
    expect(a.isHeld()).toBe(false);
    expect(cLease.isHeld()).toBe(true);
    expect(server.node(cLease.path)).toBeDefined();
    await cLease.release();
    expect(server.node(cLease.path)).toBeUndefined();
    expect(cLease.signal.aborted).toBe(true);
    // The owner gets a new node and a new token next time.
    const again = await mutex.acquire({ owner });
    expect(again.fencingToken > a.fencingToken).toBe(true);
    await again.release();
  });

  it('a timed-out or aborted wait leaves no node and no watch behind', async () => {
    setup();
    const [holderClient, waiter] = await clients.openMany(2);
    const holder = await new Mutex(holderClient, '/locks/t').acquire();
    const mutex = new Mutex(waiter, '/locks/t');
    const t0 = performance.now();
    const err = await mutex.acquire({ timeoutMs: 150 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'TimeoutError', timeoutMs: 150 });
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(ephemeralsUnder(server, '/locks/t')).toEqual([holder.path]);

    const ac = new AbortController();
    const queued = clients.waiting(waiter, '/locks/t');
    const pending = mutex.acquire({ signal: ac.signal });
    await queued;
    expect(ephemeralsUnder(server, '/locks/t')).toHaveLength(2);
    expect(server.watchesOf(waiter.sessionId).data).toEqual([holder.path]);
    const unwatched = clients.answered(waiter, (r) => r.type === OpCode.removeWatches && r.path === holder.path);
    ac.abort(new Error('changed my mind'));
    const aborted = await pending.catch((e: unknown) => e);
    expect(aborted).toMatchObject({ name: 'AbortError' });
    expect((aborted as Error).cause).toMatchObject({ message: 'changed my mind' });
    expect(ephemeralsUnder(server, '/locks/t')).toEqual([holder.path]);
    await unwatched; // the waiter took its watch back
    expect(server.watchesOf(waiter.sessionId).data).toEqual([]);

    // Already aborted: nothing is even created.
    await expect(mutex.acquire({ signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(ephemeralsUnder(server, '/locks/t')).toEqual([holder.path]);
    await holder.release();
    expect(waiter.pendingDeletes).toEqual([]);
  });

  it('an abort while the create is unanswered leaves no orphan once the create lands', async () => {
    setup();
    const [holderClient, waiter] = await clients.openMany(2, { errorPolicy: 'session' });
    const holder = await new Mutex(holderClient, '/locks/o').acquire();
    // The waiter's requests are held by the server (a partition) shorter than the read timeout.
    server.silence(waiter.sessionId, 400);
    const ac = new AbortController();
    const creating = clients.answered(waiter, (r) => r.type === OpCode.create2 && r.path.startsWith('/locks/o/'));
    const cleanedUp = clients.answered(waiter, (r) => r.type === OpCode.delete && r.path.startsWith('/locks/o/'));
    const sentCreate = sent(clients.tap(waiter), (r) => r.type === OpCode.create2);
    const pending = new Mutex(waiter, '/locks/o').acquire({ signal: ac.signal });
    await sentCreate; // on the wire, held by the silence
    ac.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    // When the silence ends the create is applied; the client's protected-create clean-up deletes it.
    await creating;
    await cleanedUp;
    expect(ephemeralsUnder(server, '/locks/o')).toEqual([holder.path]);
    await holder.release();
  });

  it('no herd: with 20 waiters each release wakes exactly one of them (counted watch events)', async () => {
    setup();
    const counted = Array.from({ length: 21 }, () => countingTransport(server.transport()));
    const cs = await Promise.all(counted.map((t) => clients.open({ transport: t })));
    const first = await new Mutex(cs[0]!, '/locks/herd').acquire();
    const leases: Array<Promise<Lease>> = [];
    for (let i = 1; i <= 20; i++) {
      // Queue them in a known order, so that waiter i holds the lock i-th.
      const queued = clients.waiting(cs[i]!, '/locks/herd');
      leases.push(new Mutex(cs[i]!, '/locks/herd').acquire());
      await queued;
    }
    expect(ephemeralsUnder(server, '/locks/herd')).toHaveLength(21);
    // Each waiter watches only its immediate predecessor.
    const queue = await new Mutex(cs[0]!, '/locks/herd').participantNodes();
    for (let i = 1; i <= 20; i++) expect(server.watchesOf(cs[i]!.sessionId).data).toEqual([queue[i - 1]]);

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
    expect(noWatches()).toBe(true);
  });

  it('the signal aborts when our node is deleted by someone else, and the next waiter gets the lock', async () => {
    setup();
    const [a, b, admin] = await clients.openMany(3);
    const lease = await new Mutex(a, '/locks/d').acquire();
    const queued = clients.listed(b, '/locks/d');
    const next = new Mutex(b, '/locks/d').acquire();
    await queued;
    expect(ephemeralsUnder(server, '/locks/d')).toHaveLength(2);
    await admin.delete(lease.path);
    await aborted(lease.signal);
    expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
    expect((lease.signal.reason as LeaseLostError).end).toBe('deleted');
    expect(lease.isHeld()).toBe(false);
    const l2 = await next;
    expect(l2.fencingToken > lease.fencingToken).toBe(true);
    await lease.release(); // harmless
    await l2.release();
  });

  it('lock.close() stops pending acquires with ClosedError and releases what it holds', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const holder = await new Mutex(b, '/locks/close').acquire();
    const mutex = new Mutex(a, '/locks/close');
    const own = await new Mutex(a, '/locks/close2').acquire();
    const queued = clients.listed(a, '/locks/close');
    const pending = mutex.acquire();
    await queued;
    expect(ephemeralsUnder(server, '/locks/close')).toHaveLength(2);
    await mutex.close();
    await expect(pending).rejects.toMatchObject({ name: 'ClosedError' });
    await expect(mutex.acquire()).rejects.toMatchObject({ name: 'ClosedError' });
    expect(ephemeralsUnder(server, '/locks/close')).toEqual([holder.path]);
    const held = new Mutex(a, '/locks/close3');
    const l = await held.acquire();
    await held.close();
    expect(l.isHeld()).toBe(false);
    expect((l.signal.reason as LeaseLostError).end).toBe('closed');
    expect(server.node(l.path)).toBeUndefined();
    await own.release();
    await holder.release();
  });

  it('closing the client ends its leases (closed) and its pending acquires (ClosedError)', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const lease = await new Mutex(a, '/locks/cc').acquire();
    const queued = [clients.listed(a, '/locks/cc'), clients.listed(b, '/locks/cc')];
    const pending = new Mutex(a, '/locks/cc').acquire();
    const waiter = new Mutex(b, '/locks/cc').acquire();
    await Promise.all(queued);
    expect(ephemeralsUnder(server, '/locks/cc')).toHaveLength(3);
    await a.close();
    expect((lease.signal.reason as LeaseLostError).end).toBe('closed');
    await expect(pending).rejects.toMatchObject({ name: 'ClosedError' });
    const l = await waiter;
    expect(l.fencingToken > lease.fencingToken).toBe(true);
    await l.release();
  });

  it('works through a namespace view, and refuses a closed client with ClosedError', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const lease = await new Mutex(a.usingNamespace('app'), '/locks/ns').acquire();
    expect(lease.path).toMatch(/^\/locks\/ns\/_c_/);
    expect(server.node(`/app${lease.path}`)!.stat.czxid).toBe(lease.fencingToken);
    await expect(new Mutex(b.usingNamespace('app'), '/locks/ns').acquire({ timeoutMs: 100 })).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    await lease.release();
    expect(ephemeralsUnder(server, '/app')).toEqual([]);
    await b.close();
    await expect(new Mutex(b, '/locks/ns').acquire()).rejects.toMatchObject({ name: 'ClosedError' });
  });

  it('validates its input', async () => {
    setup();
    const c = await clients.open();
    expect(() => new Mutex(c, 'no-slash')).toThrow(/invalid path/);
    await expect(new Mutex(c, '/locks/v').acquire({ timeoutMs: -1 })).rejects.toThrow(InvalidArgumentError);
  });

  it('lists participants in queue order', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const m = new Mutex(a, '/locks/p');
    expect(await m.participantNodes()).toEqual([]);
    const l = await m.acquire();
    const queued = clients.listed(b, '/locks/p');
    const w = new Mutex(b, '/locks/p').acquire();
    await queued;
    expect(ephemeralsUnder(server, '/locks/p')).toHaveLength(2);
    const nodes = await m.participantNodes();
    expect(nodes[0]).toBe(l.path);
    expect(nodes).toHaveLength(2);
    expect(m.isAcquiredInThisProcess()).toBe(true);
    await l.release();
    expect(m.isAcquiredInThisProcess()).toBe(false);
    await (await w).release();
  });
});
