/** The counters on a real ZooKeeper 3.8: bytes, contention, a lost connection and an expired session. */
import diagnostics from 'node:diagnostics_channel';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expireSession, realZooKeeper, ZooKeeperSuite } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { AtomicLong, SharedCount } from '../src/index.js';
import { whenCount } from './harness.js';

const zk = realZooKeeper();

describe.skipIf(!zk.available)('counters on ZooKeeper 3.8', () => {
  const suite = new ZooKeeperSuite();
  beforeAll(() => suite.start());
  afterEach(() => suite.afterEach());
  afterAll(() => suite.close());

  it('SharedCount: seed under container parents, change events, 3 x 30 trySetCount loops = 90', async () => {
    const cs = await suite.clients.openMany(3);
    const counts = cs.map((c) => new SharedCount(c, '/zk/counts/a', 0));
    await Promise.all(counts.map((c) => c.start()));
    expect((await cs[0]!.getData('/zk/counts/a')).data).toEqual(Buffer.alloc(4));
    const seen: number[] = [];
    counts[2]!.on('change', (v) => seen.push(v.value));
    await Promise.all(
      counts.map(async (count) => {
        for (let done = 0; done < 30;) {
          const v = count.getVersionedValue();
          if (await count.trySetCount(v.value + 1, v)) done++;
        }
      }),
    );
    await Promise.all(counts.map((c) => whenCount(c, 90)));
    expect(seen.at(-1)).toBe(90);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen); // in version order
    await Promise.all(counts.map((c) => c.close()));
  });

  it("AtomicLong: in-process contenders take turns: a read waits for the neighbour's write in flight", async () => {
    const proxy = await suite.faultProxy();
    const a = await suite.clients.open({ transport: zookeeper(proxy.connectString) });
    const b = await suite.clients.open();
    const [na, nb] = [new AtomicLong(a, '/zk/inflight'), new AtomicLong(b, '/zk/inflight')];
    await na.forceSet(0n);
    // Hold a's setData on the wire, and start b's increment while it is in flight.
    const channel = diagnostics.tracingChannel<unknown, { op: string }>('tenure:client:request');
    let sent!: () => void;
    const setDataSent = new Promise<void>((resolve) => (sent = resolve));
    const onStart = { start: (m: { op: string }): void => void (m.op === 'setData' && sent()) };
    channel.subscribe(onStart as never);
    proxy.delay(100);
    const first = na.increment();
    await setDataSent;
    channel.unsubscribe(onStart as never);
    const second = await nb.increment();
    expect((await first).stats.optimisticTries).toBe(1);
    // b read after a's write landed: one try, and a's value as its pre-value.
    expect({ succeeded: second.succeeded, preValue: second.preValue, tries: second.stats.optimisticTries }).toEqual({
      succeeded: true,
      preValue: 1n,
      tries: 1,
    });
    proxy.delay(0);
    await Promise.all([na.close(), nb.close()]);
  });

  it('SharedCount survives a reset connection and an expired session: it re-reads and keeps its watch', async () => {
    const proxy = await suite.faultProxy();
    const a = await suite.clients.open({ transport: zookeeper(proxy.connectString), sessionTimeoutMs: 4000 });
    const b = await suite.clients.open();
    await using count = new SharedCount(a, '/zk/survive', 0);
    await count.start();
    proxy.reset();
    await b.setData('/zk/survive', Buffer.from([0, 0, 0, 1]));
    await whenCount(count, 1, 10_000);
    await expireSession(a);
    await b.setData('/zk/survive', Buffer.from([0, 0, 0, 2]));
    await whenCount(count, 2, 15_000);
    await b.setData('/zk/survive', Buffer.from([0, 0, 0, 3]));
    await whenCount(count, 3, 10_000);
  });

  it('AtomicLong: 4 contenders x 50 increments end at exactly the number that succeeded', async () => {
    const cs = await suite.clients.openMany(4);
    const longs = cs.map((c) => new AtomicLong(c, '/zk/long'));
    let succeeded = 0;
    await Promise.all(
      longs.map(async (n) => {
        for (let i = 0; i < 50; i++) if ((await n.increment()).succeeded) succeeded++;
      }),
    );
    expect((await longs[0]!.get()).preValue).toBe(BigInt(succeeded));
    expect((await cs[0]!.getData('/zk/long')).data.length).toBe(8);
    await Promise.all(longs.map((n) => n.close()));
  });
});
