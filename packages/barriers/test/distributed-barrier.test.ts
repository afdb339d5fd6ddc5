/** DistributedBarrier on the embedded server: holds until removed, typed failures, nothing left behind. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AbortError, ClosedError, CreateMode, TimeoutError } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { DistributedBarrier } from '../src/index.js';
import { Clients, roundTrip, settlesWithin, startServer, totalWatches } from './harness.js';

describe('DistributedBarrier', () => {
  let server: EmbeddedServer;
  let clients: Clients;
  beforeAll(() => {
    server = startServer();
    clients = new Clients(() => server.transport());
  });
  afterEach(() => clients.closeAll());
  afterAll(() => server.close());

  it('passes at once without a barrier; holds waiters while it is set and releases them all when removed', async () => {
    const [a, b, c] = await clients.openMany(3);
    const setter = new DistributedBarrier(a!, '/db/gate/one');
    await new DistributedBarrier(b!, '/db/gate/one').waitOnBarrier({ timeoutMs: 1000 });
    await setter.setBarrier();
    await setter.setBarrier(); // already set: fine
    const node = server.node('/db/gate/one')!;
    expect(node.stat.ephemeralOwner).toBe(0n);
    expect(server.node('/db/gate')!.stat.ephemeralOwner).toBe(0n);
    const waits = [b!, c!].map((cl) => new DistributedBarrier(cl, '/db/gate/one').waitOnBarrier());
    expect(await settlesWithin(Promise.all(waits), 300)).toBe(false);
    await a!.setData('/db/gate/one', 'changed'); // a change is not removal
    expect(await settlesWithin(Promise.all(waits), 200)).toBe(false);
    await setter.removeBarrier();
    await Promise.all(waits);
    await setter.removeBarrier(); // already removed: fine
    await roundTrip(clients.all);
    expect(totalWatches(server)).toBe(0);
  });

  it('rejects with TimeoutError, AbortError and ClosedError, never resolves while set, and leaves no watch', async () => {
    const [a, b] = await clients.openMany(2);
    await new DistributedBarrier(a!, '/db/typed').setBarrier();
    const waiter = new DistributedBarrier(b!, '/db/typed');
    for (let i = 0; i < 5; i++) await expect(waiter.waitOnBarrier({ timeoutMs: 50 })).rejects.toBeInstanceOf(TimeoutError);
    await roundTrip([b!]); // timed-out waits took their watches back
    expect(totalWatches(server)).toBe(0);
    const ac = new AbortController();
    const aborted = waiter.waitOnBarrier({ signal: ac.signal });
    ac.abort();
    await expect(aborted).rejects.toBeInstanceOf(AbortError);
    const closed = waiter.waitOnBarrier();
    await expect(settlesWithin(closed, 100)).resolves.toBe(false);
    await waiter.close();
    await expect(closed).rejects.toBeInstanceOf(ClosedError);
    await expect(waiter.waitOnBarrier()).rejects.toBeInstanceOf(ClosedError);
    await roundTrip([b!]);
    expect(totalWatches(server)).toBe(0); // none left after close
    expect(server.node('/db/typed')).toBeDefined(); // close leaves the barrier as it is
  });

  it('outlives the session that set it, and a client close ends waits with ClosedError', async () => {
    const [a, b] = await clients.openMany(2);
    await new DistributedBarrier(a!, '/db/durable').setBarrier();
    await a!.close();
    expect(server.node('/db/durable')).toBeDefined();
    const wait = new DistributedBarrier(b!, '/db/durable').waitOnBarrier();
    await b!.close();
    await expect(wait).rejects.toBeInstanceOf(ClosedError);
  });

  it('a barrier created as any node kind holds, and its removal by anyone releases', async () => {
    const [a, b] = await clients.openMany(2);
    await a!.create('/db/foreign', Buffer.from('10.0.0.1'), { mode: CreateMode.EPHEMERAL });
    const wait = new DistributedBarrier(b!, '/db/foreign').waitOnBarrier({ timeoutMs: 5000 });
    expect(await settlesWithin(wait, 100)).toBe(false);
    await a!.close(); // the ephemeral goes with the session
    await wait;
  });
});
