/**
 * Mutex under real faults made by the embedded server: a silenced holder, an expired session, a
 * dropped connection, a lost reply, a server restart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionState } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { LeaseLostError, Mutex, type Lease } from '../src/index.js';
import { ManualClock } from '@tenure/testing';
import { OpCode } from '@tenure/protocol';
import { aborted, Clients, ephemeralsUnder, roundTrip, startServer } from './harness.js';

let server: EmbeddedServer;
let clients: Clients;
function setup(clock?: ManualClock): void {
  server = startServer({ clock });
  clients = new Clients(() => server.transport());
}
afterEach(async () => {
  await clients.closeAll();
  await server.close();
});

const endOf = (l: Lease): string | undefined => (l.signal.reason as LeaseLostError | undefined)?.end;

/** Records when (on `now`) a lease's signal aborts and a pending acquire resolves. */
function timeline(
  holder: Lease,
  next: Promise<Lease>,
  now: () => number = () => performance.now(),
): { aborted: Promise<number>; acquired: Promise<{ at: number; lease: Lease }> } {
  const aborted = new Promise<number>((resolve) => holder.signal.addEventListener('abort', () => resolve(now()), { once: true }));
  const acquired = next.then((lease) => ({ at: now(), lease }));
  return { aborted, acquired };
}

describe('Mutex under faults', () => {
  for (const errorPolicy of ['standard', 'session'] as const) {
    it(`a silent holder's signal aborts before the next waiter acquires, and the new token is larger (${errorPolicy})`, async () => {
      // Off the tick grid, so the holder's deadlines and the server's expiry never fall on one instant.
      const clock = new ManualClock(1_000_037);
      setup(clock);
      const a = await clients.open({ errorPolicy, clock });
      const b = await clients.open({ clock });
      const lease = await new Mutex(a, '/locks/silent').acquire();
      const queued = clients.waiting(b, '/locks/silent');
      const next = new Mutex(b, '/locks/silent').acquire();
      await queued;
      const t = timeline(lease, next, () => clock.now());
      let acquired = false;
      void t.acquired.then(() => (acquired = true));
      const t0 = clock.now();
      server.silence(a.sessionId, 5000); // a partition longer than the session timeout
      // The server expires the holder's session within its timeout (1,500 ms) and one tick of the last ping.
      await clock.advance(a.negotiatedTimeoutMs + 100);
      expect(acquired).toBe(true);
      const abortedAt = await t.aborted;
      const { at, lease: l2 } = await t.acquired;
      expect(abortedAt).toBeLessThan(at);
      expect(endOf(lease)).toBe(errorPolicy === 'standard' ? 'suspended' : 'lost');
      expect(lease.isHeld()).toBe(false);
      expect(l2.fencingToken > lease.fencingToken).toBe(true);
      // The successor waited for the server to expire the holder's session.
      expect(at - t0).toBeGreaterThan(1000);
      await l2.release();
    });
  }

  it("an injected expiry: the next waiter acquires with a larger token, the old holder's signal aborts within its read timeout", async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const lease = await new Mutex(a, '/locks/expire').acquire();
    const queued = clients.waiting(b, '/locks/expire');
    const next = new Mutex(b, '/locks/expire').acquire();
    await queued;
    const t = timeline(lease, next);
    const t0 = performance.now();
    server.expireSession(a.sessionId);
    const { lease: l2 } = await t.acquired;
    expect(l2.fencingToken > lease.fencingToken).toBe(true);
    const abortedAt = await t.aborted;
    expect(abortedAt - t0).toBeLessThan((a.negotiatedTimeoutMs * 2) / 3 + 200);
    expect(lease.isHeld()).toBe(false);
    await l2.release();
    // The old client comes back with a new session; nothing of the old one remains.
    await a.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    expect(ephemeralsUnder(server, '/locks/expire')).toEqual([]);
  });

  it('SUSPENDED ends the lease under the standard policy; the node is deleted even though the session survived', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const lease = await new Mutex(a, '/locks/susp').acquire();
    const queued = clients.waiting(b, '/locks/susp');
    const next = new Mutex(b, '/locks/susp').acquire();
    await queued;
    const session = a.sessionId;
    server.dropConnection(session);
    await aborted(lease.signal);
    expect(endOf(lease)).toBe('suspended');
    const l2 = await next;
    expect(a.sessionId).toBe(session); // same session: the node did not expire, we deleted it
    expect(l2.fencingToken > lease.fencingToken).toBe(true);
    expect(ephemeralsUnder(server, '/locks/susp')).toEqual([l2.path]);
    await l2.release();
  });

  it('keepNodeUntilRelease: a suspended lease aborts at once but keeps its node until release(); then the next waiter acquires', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const lease = await new Mutex(a, '/locks/kept').acquire({ keepNodeUntilRelease: true });
    let granted = false;
    const queued = clients.waiting(b, '/locks/kept');
    const next = new Mutex(b, '/locks/kept').acquire().then((l) => {
      granted = true;
      return l;
    });
    await queued;
    const session = a.sessionId;
    server.dropConnection(session);
    await aborted(lease.signal);
    expect(endOf(lease)).toBe('suspended');
    expect(lease.isHeld()).toBe(false);
    await a.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    expect(a.sessionId).toBe(session);
    // Whatever the holder sent on reconnecting has been served, and whatever that told the waiter has reached it.
    await roundTrip(a);
    await roundTrip(b);
    // Back on the same session: the node is still there and the waiter still waits.
    expect(server.node(lease.path)).toBeDefined();
    expect(granted).toBe(false);
    await lease.release();
    expect(server.node(lease.path)).toBeUndefined();
    const l2 = await next;
    expect(l2.fencingToken > lease.fencingToken).toBe(true);
    await l2.release();
    expect(ephemeralsUnder(server, '/locks/kept')).toEqual([]);
  });

  it('keepNodeUntilRelease: after LOST the node went with the session and release() resolves at once', async () => {
    setup();
    const a = await clients.open({ errorPolicy: 'session' }); // the lease ends at LOST, not at SUSPENDED
    const b = await clients.open();
    const lease = await new Mutex(a, '/locks/kept-lost').acquire({ keepNodeUntilRelease: true });
    const queued = clients.waiting(b, '/locks/kept-lost');
    const next = new Mutex(b, '/locks/kept-lost').acquire();
    await queued;
    server.expireSession(a.sessionId);
    await aborted(lease.signal);
    expect(endOf(lease)).toBe('lost');
    const l2 = await next; // the session's end removed the node: the successor needs no release
    const t0 = performance.now();
    await lease.release();
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(ephemeralsUnder(server, '/locks/kept-lost')).toEqual([l2.path]);
    await l2.release();
  });

  it('keepNodeUntilRelease: lock.close() deletes a kept node that was never released', async () => {
    setup();
    const a = await clients.open();
    const mutex = new Mutex(a, '/locks/kept-close');
    const lease = await mutex.acquire({ keepNodeUntilRelease: true });
    server.dropConnection(a.sessionId);
    await aborted(lease.signal);
    await a.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    expect(server.node(lease.path)).toBeDefined();
    expect(mutex.isAcquiredInThisProcess()).toBe(false);
    await mutex.close();
    expect(ephemeralsUnder(server, '/locks/kept-close')).toEqual([]);
    await lease.release(); // idempotent
  });

  it('under the session policy a lease survives SUSPENDED and RECONNECTED, and is re-checked', async () => {
    setup();
    const a = await clients.open({ errorPolicy: 'session' });
    const reads = (path: string) => (r: { type: number; path?: string }) => r.type === OpCode.getData && r.path === path;
    const armed = clients.answered(a, (r) => r.type === OpCode.getData && r.path.startsWith('/locks/keep/'));
    const lease = await new Mutex(a, '/locks/keep').acquire();
    await armed; // the lease's watch on its node
    const rechecked = clients.answered(a, reads(lease.path));
    server.dropConnection(a.sessionId);
    await a.waitForState(ConnectionState.SUSPENDED, { timeoutMs: 2000 });
    await a.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    await rechecked; // RECONNECTED re-read the node: still ours
    expect(lease.isHeld()).toBe(true);
    expect(lease.signal.aborted).toBe(false);
    // The node's watch came back with the reconnect: a deletion is still noticed.
    expect(server.watchesOf(a.sessionId).data).toContain(lease.path);
    await lease.release();
    expect(ephemeralsUnder(server, '/locks/keep')).toEqual([]);
  });

  it('release() through a lost reply completes with the guaranteed delete', async () => {
    setup();
    const a = await clients.open({ errorPolicy: 'session' });
    const b = await clients.open();
    const lease = await new Mutex(a, '/locks/lostreply').acquire();
    const queued = clients.waiting(b, '/locks/lostreply');
    const next = new Mutex(b, '/locks/lostreply').acquire();
    await queued;
    server.loseNextReply(a.sessionId);
    await lease.release();
    expect(server.node(lease.path)).toBeUndefined();
    expect(a.pendingDeletes).toEqual([]);
    const l2 = await next;
    await l2.release();
  });

  it('release() while the server refuses connections resolves after the reconnect, with the node gone', async () => {
    setup();
    const a = await clients.open({ errorPolicy: 'session' });
    const lease = await new Mutex(a, '/locks/restart').acquire();
    const restarting = server.restart(400);
    await a.waitForState(ConnectionState.SUSPENDED, { timeoutMs: 2000 });
    const released = lease.release();
    expect(a.pendingDeletes.length + (server.node(lease.path) ? 1 : 0)).toBeGreaterThan(0);
    await restarting;
    await released;
    expect(server.node(lease.path)).toBeUndefined();
    expect(a.pendingDeletes).toEqual([]);
  });

  it('a waiter keeps its place across a dropped connection', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const lease = await new Mutex(a, '/locks/wait-susp').acquire();
    const waiting = clients.waiting(b, '/locks/wait-susp');
    const next = new Mutex(b, '/locks/wait-susp').acquire();
    await waiting;
    const queued = ephemeralsUnder(server, '/locks/wait-susp');
    server.dropConnection(b.sessionId);
    await b.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    await lease.release();
    const l2 = await next;
    expect(queued).toContain(l2.path);
    await l2.release();
  });

  it('a waiter whose session expires queues again in the new session, leaving nothing of the old one', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const lease = await new Mutex(a, '/locks/wait-lost').acquire();
    const queued = clients.waiting(b, '/locks/wait-lost');
    const next = new Mutex(b, '/locks/wait-lost').acquire();
    await queued;
    const old = b.sessionId;
    const requeued = clients.waiting(b, '/locks/wait-lost');
    server.expireSession(old);
    await requeued; // in a new session, watching the holder again
    expect(b.sessionId).not.toBe(old);
    expect(b.sessionId).not.toBe(0n);
    expect(ephemeralsUnder(server, '/locks/wait-lost')).toHaveLength(2);
    await lease.release();
    const l2 = await next;
    expect(server.node(l2.path)!.stat.ephemeralOwner).toBe(b.sessionId);
    await l2.release();
    expect(ephemeralsUnder(server, '/locks/wait-lost')).toEqual([]);
  });
});
