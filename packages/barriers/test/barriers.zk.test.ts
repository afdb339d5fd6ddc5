/**
 * The barriers on a real ZooKeeper 3.8: quorum and leave-together, an injected expiry
 * (expireSession) reported by name, a member cut off (FaultProxy) while the others leave is not
 * reported lost, DistributedBarrier holding and releasing; nothing left behind.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionState } from '@tenure/client';
import { expireSession, realZooKeeper, ZooKeeperSuite } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { DistributedBarrier, DoubleBarrier, MemberLostError } from '../src/index.js';
import { roundTrip, settlesWithin, sleep } from './harness.js';

const zk = realZooKeeper();

describe.skipIf(!zk.available)('barriers on ZooKeeper 3.8', () => {
  const suite = new ZooKeeperSuite();
  beforeAll(() => suite.start());
  afterEach(() => suite.afterEach());
  afterAll(() => suite.close());

  /** Children of `path` and the watches every session holds, once the server has settled. */
  async function leftBehind(path: string): Promise<{ children: string[]; watches: number }> {
    const admin = await suite.clients.open();
    const children = await admin.getChildren(path).then(
      (r) => r.children,
      () => [],
    );
    const dump = await suite.server.dump();
    return { children, watches: dump.totalWatches };
  }

  it('4 members: none enters before the 4th, none leaves before the 4th leaves; nothing left', async () => {
    const cs = await suite.clients.openMany(4);
    const ms = cs.map((c) => new DoubleBarrier(c, '/zk/dbl/basic', 4));
    const three = Promise.all(ms.slice(0, 3).map((m) => m.enter({ timeoutMs: 10_000 })));
    expect(await settlesWithin(three, 300)).toBe(false);
    await Promise.all([three, ms[3]!.enter({ timeoutMs: 10_000 })]);
    const leaving = Promise.all(ms.slice(1).map((m) => m.leave({ timeoutMs: 10_000 })));
    expect(await settlesWithin(leaving, 300)).toBe(false);
    await Promise.all([leaving, ms[0]!.leave({ timeoutMs: 10_000 })]);
    expect((await leftBehind('/zk/dbl/basic')).children).toEqual([]);
  });

  it('an expired member (expireSession): the others leave with MemberLostError naming it, not a hang', async () => {
    const cs = await suite.clients.openMany(4, { sessionTimeoutMs: 4000 });
    const ms = cs.map((c) => new DoubleBarrier(c, '/zk/dbl/expired', 4));
    await Promise.all(ms.map((m) => m.enter({ timeoutMs: 10_000 })));
    const leaves = ms.slice(0, 2).map((m) => m.leave({ timeoutMs: 15_000 }).catch((e: unknown) => e));
    await sleep(100);
    await expireSession(cs[3]!);
    leaves.push(ms[2]!.leave({ timeoutMs: 15_000 }).catch((e: unknown) => e));
    for (const err of await Promise.all(leaves)) {
      expect(err).toBeInstanceOf(MemberLostError);
      expect((err as MemberLostError).member).toBe(ms[3]!.memberName);
    }
    await cs[3]!.waitForState([ConnectionState.RECONNECTED, ConnectionState.CONNECTED], { timeoutMs: 10_000 }).catch(() => {});
    const own = await ms[3]!.leave({ timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(own).toBeInstanceOf(MemberLostError);
    expect((own as MemberLostError).self).toBe(true);
    expect((await leftBehind('/zk/dbl/expired')).children).toEqual([]);
  });

  it('a member cut off (FaultProxy) while the others mark and leave is not reported lost on reconnect', async () => {
    const proxy = await suite.faultProxy();
    const cut = await suite.clients.open({ transport: zookeeper(proxy.connectString), sessionTimeoutMs: 6000 });
    const others = await suite.clients.openMany(2);
    const mCut = new DoubleBarrier(cut, '/zk/dbl/cut', 3);
    const ms = others.map((c) => new DoubleBarrier(c, '/zk/dbl/cut', 3));
    await Promise.all([mCut.enter({ timeoutMs: 10_000 }), ...ms.map((m) => m.enter({ timeoutMs: 10_000 }))]);
    proxy.blackhole();
    await cut.waitForState(ConnectionState.SUSPENDED, { timeoutMs: 10_000 });
    // At least one of the two is not the lowest: it marks and deletes its node while we are away.
    const leaving = ms.map((m) => m.leave({ timeoutMs: 20_000 }));
    await sleep(300);
    proxy.heal();
    await cut.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 10_000 });
    await mCut.leave({ timeoutMs: 10_000 });
    await Promise.all(leaving);
    expect((await leftBehind('/zk/dbl/cut')).children).toEqual([]);
  });

  it('DistributedBarrier holds every waiter until removed; a timeout is a TimeoutError; no watch left', async () => {
    const cs = await suite.clients.openMany(3);
    const setter = new DistributedBarrier(cs[0]!, '/zk/db/gate');
    await setter.setBarrier();
    const waiters = cs.slice(1).map((c) => new DistributedBarrier(c, '/zk/db/gate'));
    await expect(waiters[0]!.waitOnBarrier({ timeoutMs: 100 })).rejects.toMatchObject({ name: 'TimeoutError' });
    const waits = Promise.all(waiters.map((w) => w.waitOnBarrier({ timeoutMs: 10_000 })));
    expect(await settlesWithin(waits, 300)).toBe(false);
    await setter.removeBarrier();
    await waits;
    await Promise.all(waiters.map((w) => w.close()));
    await roundTrip(cs); // after the watch removals the closes sent
    expect((await leftBehind('/zk/db')).watches).toBe(0);
  });
});
