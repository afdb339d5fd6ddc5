/** ReadWriteLock on the embedded server: shared readers, exclusive writers, downgrade, refused upgrade. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { LockUpgradeError, ReadWriteLock } from '../src/index.js';
import { Clients, ephemeralsUnder, roundTrip, settledOn, startServer, tracked } from './harness.js';

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

describe('ReadWriteLock', () => {
  it("uses Curator's __READ__ and __WRIT__ names; readers share, writers exclude", async () => {
    setup();
    const [a, b, c] = await clients.openMany(3);
    const r1 = await new ReadWriteLock(a, '/rw/x').readLock.acquire();
    const r2 = await new ReadWriteLock(b, '/rw/x').readLock.acquire();
    expect(r1.path).toMatch(/^\/rw\/x\/_c_[0-9a-f-]{36}-__READ__\d{10}$/);
    expect(r1.fencingToken).not.toBe(r2.fencingToken); // every read lease has its own token
    let waiting = clients.waiting(c, '/rw/x');
    const w = tracked(new ReadWriteLock(c, '/rw/x').writeLock.acquire());
    await waiting;
    expect(w.settled).toBe(false);
    await r1.release();
    await settledOn(c);
    expect(w.settled).toBe(false);
    await r2.release();
    const wl = await w.promise;
    expect(wl.path).toMatch(/-__WRIT__\d{10}$/);
    expect(wl.fencingToken > r2.fencingToken).toBe(true);
    // A reader behind a writer waits, even though only the writer holds.
    waiting = clients.waiting(a, '/rw/x');
    const r3 = tracked(new ReadWriteLock(a, '/rw/x').readLock.acquire());
    await waiting;
    expect(r3.settled).toBe(false);
    await wl.release();
    await (await r3.promise).release();
    expect(ephemeralsUnder(server, '/rw/x')).toEqual([]);
  });

  it('readers behind a waiting writer wait for it (no writer starvation)', async () => {
    setup();
    const [a, b, c] = await clients.openMany(3);
    const r1 = await new ReadWriteLock(a, '/rw/fair').readLock.acquire();
    const writerWaits = clients.waiting(b, '/rw/fair');
    const w = new ReadWriteLock(b, '/rw/fair').writeLock.acquire();
    await writerWaits;
    expect(ephemeralsUnder(server, '/rw/fair')).toHaveLength(2);
    const readerWaits = clients.waiting(c, '/rw/fair');
    const r2 = tracked(new ReadWriteLock(c, '/rw/fair').readLock.acquire());
    await readerWaits;
    expect(r2.settled).toBe(false);
    await r1.release();
    const wl = await w;
    await settledOn(c);
    expect(r2.settled).toBe(false);
    await wl.release();
    await (await r2.promise).release();
  });

  it('downgrade: the writer takes the read lock at once (Curator: EPHEMERAL at the writer sequence), then releases the write lock', async () => {
    setup();
    const [a, b, c] = await clients.openMany(3);
    const rw = new ReadWriteLock(a, '/rw/down');
    const owner = 'job-1';
    const w = await rw.writeLock.acquire({ owner });
    let writerWaits = clients.waiting(b, '/rw/down');
    const otherWriter = tracked(new ReadWriteLock(b, '/rw/down').writeLock.acquire());
    await writerWaits;
    expect(ephemeralsUnder(server, '/rw/down')).toHaveLength(2);
    const r = await rw.readLock.acquire({ owner, timeoutMs: 2000 });
    const seq = w.path.slice(-10);
    expect(r.path).toMatch(new RegExp(`-__READ__${seq}$`));
    expect(r.fencingToken > w.fencingToken).toBe(true);
    writerWaits = clients.waiting(b, '/rw/down');
    await w.release();
    // Still reading: the other writer, woken by the release, waits again, for our read lease; a new reader queues behind that writer.
    await writerWaits;
    expect(otherWriter.settled).toBe(false);
    const readerWaits = clients.waiting(c, '/rw/down');
    const reader = tracked(new ReadWriteLock(c, '/rw/down').readLock.acquire());
    await readerWaits;
    expect(reader.settled).toBe(false);
    await r.release();
    const ow = await otherWriter.promise;
    await settledOn(c);
    expect(reader.settled).toBe(false);
    await ow.release();
    await (await reader.promise).release();
    expect(ephemeralsUnder(server, '/rw/down')).toEqual([]);
  });

  it('upgrade is refused with a typed error, and takes nothing', async () => {
    setup();
    const a = await clients.open();
    const rw = new ReadWriteLock(a, '/rw/up');
    const r = await rw.readLock.acquire({ owner: 'me' });
    await expect(rw.writeLock.acquire({ owner: 'me' })).rejects.toBeInstanceOf(LockUpgradeError);
    expect(ephemeralsUnder(server, '/rw/up')).toEqual([r.path]);
    // Another owner simply waits for the reader.
    await expect(rw.writeLock.acquire({ owner: 'you', timeoutMs: 100 })).rejects.toMatchObject({ name: 'TimeoutError' });
    await r.release();
    const w = await rw.writeLock.acquire({ owner: 'me' });
    await w.release();
    expect(ephemeralsUnder(server, '/rw/up')).toEqual([]);
  });

  it('read and write leases are reentrant for their owner; a writer that downgraded may write again', async () => {
    setup();
    const a = await clients.open();
    const rw = new ReadWriteLock(a, '/rw/re');
    const w1 = await rw.writeLock.acquire({ owner: 1 });
    const r1 = await rw.readLock.acquire({ owner: 1 });
    const w2 = await rw.writeLock.acquire({ owner: 1 }); // still holds the write lock: reentrant, not an upgrade
    expect(w2.path).toBe(w1.path);
    const r2 = await rw.readLock.acquire({ owner: 1 });
    expect(r2.path).toBe(r1.path);
    for (const l of [w2, w1, r2, r1]) await l.release();
    expect(ephemeralsUnder(server, '/rw/re')).toEqual([]);
  });

  it('a timed-out reader or writer leaves nothing behind', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const w = await new ReadWriteLock(a, '/rw/t').writeLock.acquire();
    const rw = new ReadWriteLock(b, '/rw/t');
    await expect(rw.readLock.acquire({ timeoutMs: 100 })).rejects.toMatchObject({ name: 'TimeoutError' });
    await expect(rw.writeLock.acquire({ timeoutMs: 100 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(ephemeralsUnder(server, '/rw/t')).toEqual([w.path]);
    // Each timed-out wait sent its removeWatches before its delete: a round trip orders after both.
    await roundTrip(b);
    expect(server.watchesOf(b.sessionId).data).toEqual([]);
    await w.release();
    await rw.close();
  });
});
