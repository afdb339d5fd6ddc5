/** AtomicLong and AtomicInteger on the embedded server: Curator's bytes and results, contention, the promoted lock, faults. */
import { afterEach, describe, expect, it } from 'vitest';
import { RetryPolicies, InvalidArgumentError } from '@tenure/client';
import { Mutex } from '@tenure/locks';
import type { EmbeddedServer } from '@tenure/server';
import {
  AtomicInteger,
  AtomicLong,
  CorruptedValueError,
  OutcomeUnknownError,
  conflictRetryPolicy,
  type AtomicResult,
} from '../src/index.js';
import { Clients, faultyTransport, startServer, totalWatches, whenTree } from './harness.js';

let server: EmbeddedServer;
let clients: Clients;
const handles: Array<{ close(): Promise<void> }> = [];
const track = <T extends { close(): Promise<void> }>(h: T): T => (handles.push(h), h);

function setup(): void {
  server = startServer();
  clients = new Clients(() => server.transport());
}
afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.close()));
  await clients.closeAll();
  await server.close();
});

const plain = <T>(r: AtomicResult<T>): Omit<AtomicResult<T>, 'stats'> => ({
  succeeded: r.succeeded,
  preValue: r.preValue,
  postValue: r.postValue,
});

describe('AtomicLong', () => {
  it("the first increment creates the node: 8-byte big-endian, parents as containers; Curator's results", async () => {
    setup();
    const c = await clients.open();
    const n = track(new AtomicLong(c, '/app/seq'));
    const r = await n.increment();
    expect(plain(r)).toEqual({ succeeded: true, preValue: 0n, postValue: 1n });
    expect(r.stats).toMatchObject({ optimisticTries: 1, promotedLockTries: 0 });
    expect(server.node('/app/seq')!.data).toEqual(Buffer.from([0, 0, 0, 0, 0, 0, 0, 1]));
    expect(plain(await n.add(257n))).toEqual({ succeeded: true, preValue: 1n, postValue: 258n });
    expect(server.node('/app/seq')!.data).toEqual(Buffer.from([0, 0, 0, 0, 0, 0, 1, 2]));
    expect(plain(await n.subtract(259n))).toEqual({ succeeded: true, preValue: 258n, postValue: -1n });
    expect(server.node('/app/seq')!.data).toEqual(Buffer.alloc(8, 0xff));
    expect(plain(await n.decrement())).toEqual({ succeeded: true, preValue: -1n, postValue: -2n });
    expect(plain(await n.get())).toEqual({ succeeded: true, preValue: -2n, postValue: -2n });
  });

  it("wraps around as Java's long does; values outside 64 bits are refused", async () => {
    setup();
    const c = await clients.open();
    const n = track(new AtomicLong(c, '/n'));
    await n.forceSet(2n ** 63n - 1n);
    expect((await n.increment()).postValue).toBe(-(2n ** 63n));
    await expect(n.forceSet(2n ** 63n)).rejects.toThrow(InvalidArgumentError);
    await expect(n.add(1 as unknown as bigint)).rejects.toThrow(InvalidArgumentError);
  });

  it('get() of a missing or empty node is 0; 9 bytes read their first 8; 1-7 bytes are corrupt', async () => {
    setup();
    const c = await clients.open();
    const n = track(new AtomicLong(c, '/n'));
    expect((await n.get()).preValue).toBe(0n);
    expect(server.node('/n')).toBeUndefined();
    await c.create('/n', Buffer.alloc(0));
    expect((await n.get()).preValue).toBe(0n);
    await c.setData('/n', Buffer.from([0, 0, 0, 0, 0, 0, 0, 1, 9]));
    expect((await n.get()).preValue).toBe(1n);
    await c.setData('/n', Buffer.from([1, 2, 3]));
    await expect(n.get()).rejects.toThrow(CorruptedValueError);
    await expect(n.increment()).rejects.toThrow('Corrupted data for node "/n": [0x1, 0x2, 0x3]');
  });

  it('compareAndSet: missing node false (not created); compares raw bytes (empty is not 0); one attempt', async () => {
    setup();
    const c = await clients.open();
    const n = track(new AtomicLong(c, '/n'));
    expect((await n.compareAndSet(0n, 5n)).succeeded).toBe(false);
    expect(server.node('/n')).toBeUndefined();
    await c.create('/n', Buffer.alloc(0));
    expect((await n.compareAndSet(0n, 5n)).succeeded).toBe(false);
    await n.forceSet(3n);
    expect(plain(await n.compareAndSet(4n, 5n))).toEqual({ succeeded: false, preValue: 3n, postValue: 0n });
    expect(plain(await n.compareAndSet(3n, 5n))).toEqual({ succeeded: true, preValue: 3n, postValue: 5n });
  });

  it('initialize creates once; forceSet and trySet write whatever is there', async () => {
    setup();
    const c = await clients.open();
    const n = track(new AtomicLong(c, '/a/b'));
    expect(plain(await n.initialize(7n))).toEqual({ succeeded: true, preValue: 0n, postValue: 7n });
    expect(plain(await n.initialize(8n))).toEqual({ succeeded: false, preValue: 7n, postValue: 0n });
    expect(plain(await n.forceSet(9n))).toEqual({ succeeded: true, preValue: 7n, postValue: 9n });
    expect(plain(await n.trySet(10n))).toEqual({ succeeded: true, preValue: 9n, postValue: 10n });
    await c.delete('/a/b');
    expect((await n.forceSet(11n)).succeeded).toBe(true);
    expect((await n.get()).preValue).toBe(11n);
  });

  it('4 contenders x 50 increments: the final value is exactly the number that succeeded; the default policy retries at once', async () => {
    setup();
    const cs = await clients.openMany(4, { retryPolicy: RetryPolicies.forever(1000) });
    // As contenders in separate processes: racing, not taking turns.
    const longs = cs.map((c) => track(new AtomicLong(c, '/contended', { localTurns: false })));
    let succeeded = 0;
    let retried = 0;
    const t0 = performance.now();
    await Promise.all(
      longs.map(async (n) => {
        for (let i = 0; i < 50; i++) {
          const r = await n.increment();
          if (r.succeeded) succeeded++;
          if (r.stats.optimisticTries > 1) retried++;
          expect(r.stats.optimisticTries).toBeLessThanOrEqual(11);
        }
      }),
    );
    expect((await longs[0]!.get()).preValue).toBe(BigInt(succeeded));
    expect(retried).toBeGreaterThan(0);
    expect(succeeded).toBeGreaterThan(150);
    // Not the client's connection policy (1 s a retry).
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('4 contenders in one process take turns: 4 x 50 increments, each at its first try', async () => {
    setup();
    const cs = await clients.openMany(4);
    const longs = cs.map((c) => track(new AtomicLong(c, '/turns')));
    const tries = await Promise.all(
      longs.map(async (n) => {
        const t: number[] = [];
        for (let i = 0; i < 50; i++) {
          const r = await n.increment();
          expect(r.succeeded).toBe(true);
          t.push(r.stats.optimisticTries);
        }
        return t;
      }),
    );
    expect(new Set(tries.flat())).toEqual(new Set([1]));
    expect((await longs[0]!.get()).preValue).toBe(200n);
  });

  it('conflictRetryPolicy: 10 retries, the first at once, the rest within a few ms', () => {
    const p = conflictRetryPolicy();
    expect(p.allowRetry(0, 0)).toBe(0);
    for (let i = 1; i < 10; i++) expect(p.allowRetry(i, 0)).toBeLessThanOrEqual(4);
    expect(p.allowRetry(10, 0)).toBe(false);
  });

  it('succeeded: false writes nothing: no retries left, and a lost race', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const n = track(new AtomicLong(a, '/n', { retryPolicy: RetryPolicies.none() }));
    await n.forceSet(1n);
    // b writes between our read and our write, every time.
    const other = track(new AtomicLong(b, '/n'));
    const original = a.getData.bind(a);
    a.getData = (async (path: string, opts?: object) => {
      const r = await original(path, opts);
      await other.increment();
      return r;
    }) as typeof a.getData;
    const r = await n.increment();
    a.getData = original;
    expect(plain(r)).toEqual({ succeeded: false, preValue: 1n, postValue: 0n });
    expect(r.stats.optimisticTries).toBe(1);
    expect((await n.get()).preValue).toBe(2n); // only b's increment
  });

  it('promotedToLock: after optimism gives up, the update runs under a Curator-layout mutex', async () => {
    setup();
    const cs = await clients.openMany(4);
    const options = {
      retryPolicy: RetryPolicies.none(),
      promotedToLock: { path: '/locks/n', timeoutMs: 10_000, retryPolicy: RetryPolicies.nTimes(3, 0) },
      localTurns: false,
    };
    const longs = cs.map((c) => track(new AtomicLong(c, '/n', options)));
    let succeeded = 0;
    let promoted = 0;
    await Promise.all(
      longs.map(async (n) => {
        for (let i = 0; i < 25; i++) {
          const r = await n.increment();
          if (r.succeeded) succeeded++;
          if (r.stats.promotedLockTries > 0) promoted++;
        }
      }),
    );
    expect(promoted).toBeGreaterThan(0);
    expect(succeeded).toBe(100); // under the lock only version-checked writers that skip it could interfere
    expect((await longs[0]!.get()).preValue).toBe(100n);
    await Promise.all(handles.splice(0).map((h) => h.close()));
    expect(server.node('/locks/n')?.children ?? []).toEqual([]);
  });

  it('promotedToLock: a lock not had within timeoutMs fails the update, and nothing is written', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const lease = await track(new Mutex(b, '/locks/n')).acquire();
    const n = track(new AtomicLong(a, '/n', { retryPolicy: RetryPolicies.none(), promotedToLock: { path: '/locks/n', timeoutMs: 200 } }));
    await n.forceSet(1n);
    const original = a.setData.bind(a);
    let conflicts = 0;
    a.setData = (async (path: string, data: Buffer, opts?: { version?: number }) => {
      if (conflicts++ === 0) await b.setData('/n', Buffer.from([0, 0, 0, 0, 0, 0, 0, 5]));
      return original(path, data, opts);
    }) as typeof a.setData;
    const r = await n.increment();
    a.setData = original;
    expect(r.succeeded).toBe(false);
    expect(r.stats.promotedTimeMs).toBeGreaterThanOrEqual(150);
    expect((await n.get()).preValue).toBe(5n);
    await lease.release();
  });

  it('a reply lost after the setData applied: OutcomeUnknownError, and the value moved exactly once', async () => {
    setup();
    const t = faultyTransport(server);
    const c = await clients.open({ transport: t });
    const n = track(new AtomicLong(c, '/n'));
    await n.forceSet(10n);
    t.arm('lose-reply');
    const err = await n.increment().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err).toMatchObject({ operation: 'increment', path: '/n' });
    expect((await n.get()).preValue).toBe(11n);
  });

  it('a connection dropped before the setData reached the server (the client gives up): proven not landed, retried, once', async () => {
    setup();
    const t = faultyTransport(server);
    const c = await clients.open({ transport: t, retryPolicy: RetryPolicies.none() });
    const n = track(new AtomicLong(c, '/n'));
    await n.forceSet(10n);
    t.arm('drop-before');
    const r = await n.increment();
    expect(plain(r)).toEqual({ succeeded: true, preValue: 10n, postValue: 11n });
    expect(r.stats.optimisticTries).toBe(2);
    expect(server.node('/n')!.stat.version).toBe(1); // created at 0, written once
  });

  it('sets no watches and leaves no nodes but its own', async () => {
    setup();
    const c = await clients.open();
    const n = track(new AtomicLong(c, '/n', { promotedToLock: { path: '/locks/n', timeoutMs: 1000 } }));
    for (let i = 0; i < 5; i++) await n.increment();
    expect(totalWatches(server)).toBe(0);
    await n.close();
    // The lock's parents are containers: the reaper deletes them, which an observer hears.
    await whenTree(await clients.open(), '/locks', () => server.node('/locks') === undefined);
  });
});

describe('AtomicInteger', () => {
  it("4 bytes, Java's int arithmetic; an 8-byte long of 258 reads as its high 4 bytes (0)", async () => {
    setup();
    const c = await clients.open();
    const i = track(new AtomicInteger(c, '/i'));
    expect(plain(await i.add(258))).toEqual({ succeeded: true, preValue: 0, postValue: 258 });
    expect(server.node('/i')!.data).toEqual(Buffer.from([0, 0, 1, 2]));
    await i.forceSet(0x7fffffff);
    expect((await i.increment()).postValue).toBe(-0x80000000);
    await expect(i.add(0.5)).rejects.toThrow(InvalidArgumentError);
    await track(new AtomicLong(c, '/l')).forceSet(258n);
    expect((await track(new AtomicInteger(c, '/l')).get()).preValue).toBe(0);
  });
});
