/** MultiLock and revocation on the embedded server. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { LeaseLostError, MultiLock, Mutex, ReadWriteLock, Revoker, SemaphoreMutex, type Lease } from '../src/index.js';
import { aborted, Clients, ephemeralsUnder, startServer } from './harness.js';

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

describe('MultiLock', () => {
  it('takes every lock in order and releases them in reverse order', async () => {
    setup();
    const c = await clients.open();
    const multi = new MultiLock(c, ['/ml/a', '/ml/b', new SemaphoreMutex(c, '/ml/s')]);
    const lease = await multi.acquire();
    expect(lease.leases).toHaveLength(3);
    expect(lease.fencingTokens[0]! < lease.fencingTokens[1]!).toBe(true);
    expect(lease.isHeld()).toBe(true);
    // Record the deletion order through the server's zxids.
    const paths = lease.leases.map((l) => l.path);
    const order: string[] = [];
    let allDeleted!: () => void;
    const deleted = new Promise<void>((resolve) => (allDeleted = resolve));
    const onDeleted = (p: string): void => {
      if (order.push(p) === paths.length) allDeleted();
    };
    const watchers = paths.map((p) => c.exists(p, { watch: (ev) => ev.type === 'NodeDeleted' && onDeleted(p) }));
    await Promise.all(watchers);
    await lease.release();
    await deleted;
    expect(order).toEqual([...paths].reverse());
    expect(lease.isHeld()).toBe(false);
    expect(lease.signal.aborted).toBe(true);
    await multi.close();
  });

  it('takes all or none: when one lock times out, the ones taken are released', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const blocker = await new Mutex(b, '/ml2/c').acquire();
    const multi = new MultiLock(a, ['/ml2/a', '/ml2/b', '/ml2/c']);
    await expect(multi.acquire({ timeoutMs: 200 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(ephemeralsUnder(server, '/ml2')).toEqual([blocker.path]);
    await blocker.release();
    const lease = await multi.acquire({ timeoutMs: 2000 });
    await lease.release();
    expect(ephemeralsUnder(server, '/ml2')).toEqual([]);
  });

  it('its signal aborts when any one lease is lost', async () => {
    setup();
    const [a, admin] = await clients.openMany(2);
    const rw = new ReadWriteLock(a, '/ml3/rw');
    const lease = await new MultiLock(a, ['/ml3/m', rw.writeLock]).acquire();
    await admin.delete(lease.leases[1]!.path);
    await aborted(lease.signal);
    expect((lease.signal.reason as LeaseLostError).end).toBe('deleted');
    expect(lease.isHeld()).toBe(false);
    await lease.release();
    expect(ephemeralsUnder(server, '/ml3')).toEqual([]);
  });
});

describe('revocation', () => {
  it("a revocable holder is asked through __REVOKE__ and releases; the revoker's waiter then acquires", async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const mutex = new Mutex(a, '/rev/x', { data: 'ignored when revocable' });
    const asked: Lease[] = [];
    mutex.makeRevocable((lease) => {
      asked.push(lease);
      void lease.release();
    });
    const held = await mutex.acquire();
    expect(server.node(held.path)!.data!.length).toBe(0); // Curator writes empty data to revocable nodes
    const other = new Mutex(b, '/rev/x');
    const waiting = other.acquire();
    const [holderNode] = await other.participantNodes();
    await Revoker.attemptRevoke(b, holderNode!);
    const mine = await waiting;
    expect(asked).toEqual([held]);
    expect(held.isHeld()).toBe(false);
    expect(mine.fencingToken > held.fencingToken).toBe(true);
    await mine.release();
    // Revoking a node that is gone is not an error.
    await Revoker.attemptRevoke(b, held.path);
  });

  it('a lock that is not revocable ignores the request', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const held = await new Mutex(a, '/rev/y').acquire();
    await Revoker.attemptRevoke(b, held.path);
    await expect(new Mutex(b, '/rev/y').acquire({ timeoutMs: 200 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(held.isHeld()).toBe(true);
    await held.release();
  });

  it('a revocation written while the lock was still being granted is delivered at the grant', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const first = await new Mutex(b, '/rev/z').acquire();
    const mutex = new Mutex(a, '/rev/z');
    let asked = 0;
    let listened!: () => void;
    const listener = new Promise<void>((resolve) => (listened = resolve));
    mutex.makeRevocable(() => {
      asked++;
      listened();
    });
    const queued = clients.waiting(a, '/rev/z');
    const waiting = mutex.acquire();
    await queued;
    expect(ephemeralsUnder(server, '/rev/z')).toHaveLength(2);
    const ours = ephemeralsUnder(server, '/rev/z').find((p) => p !== first.path)!;
    await Revoker.attemptRevoke(b, ours);
    await first.release();
    const lease = await waiting;
    await listener;
    expect(asked).toBe(1);
    await lease.release();
  });
});
