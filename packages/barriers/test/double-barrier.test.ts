/**
 * DoubleBarrier on the embedded server: nobody enters before the quorum nor leaves before all have
 * left, Curator's nodes, typed failures, a member lost inside reported by name, nothing left behind.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { AbortError, ClosedError, CreateMode, TimeoutError, type Client, InvalidArgumentError } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { DoubleBarrier, MemberLostError } from '../src/index.js';
import { Clients, childrenOf, roundTrip, settlesWithin, sleep, startServer, totalWatches, whenTree } from './harness.js';

describe('DoubleBarrier', () => {
  let server: EmbeddedServer;
  let clients: Clients;
  beforeAll(() => {
    server = startServer();
    clients = new Clients(() => server.transport());
  });
  afterEach(() => clients.closeAll());
  afterAll(() => server.close());

  const barriers = (cs: Client[], path: string, qty: number): DoubleBarrier[] => cs.map((c) => new DoubleBarrier(c, path, qty));

  it('enters only with memberQty members and leaves only when all have left, on Curator nodes', async () => {
    const cs = await clients.openMany(3);
    const [a, b, c] = barriers(cs, '/dbl/basic', 3);
    const early = Promise.all([a!.enter(), b!.enter()]);
    expect(await settlesWithin(early, 300)).toBe(false);
    // Curator's layout: the two members are ephemeral UUID nodes, no ready yet.
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    expect(childrenOf(server, '/dbl/basic')).toEqual([a!.memberName, b!.memberName].sort());
    for (const m of [a!, b!]) {
      expect(m.memberName).toMatch(uuid);
      const n = server.node(m.memberPath)!;
      expect(n.stat.ephemeralOwner).not.toBe(0n);
      expect(n.data?.toString()).toBe('tenure:in');
    }
    await Promise.all([early, c!.enter()]);
    expect(childrenOf(server, '/dbl/basic')).toEqual([a!.memberName, b!.memberName, c!.memberName, 'ready'].sort());
    expect(server.node('/dbl/basic/ready')!.stat.ephemeralOwner).toBe(0n);
    expect([a!, b!, c!].every((m) => m.inside)).toBe(true);

    const leaving = Promise.all([a!.leave(), b!.leave()]);
    expect(await settlesWithin(leaving, 300)).toBe(false);
    await Promise.all([leaving, c!.leave()]);
    expect(childrenOf(server, '/dbl/basic')).toEqual([]);
    await roundTrip(clients.all);
    expect(totalWatches(server)).toBe(0);
  });

  it('memberQty is a threshold: a late member enters at once; the barrier can be used again', async () => {
    const cs = await clients.openMany(3);
    const [a, b, late] = barriers(cs, '/dbl/late', 2);
    await Promise.all([a!.enter(), b!.enter()]);
    await late!.enter({ timeoutMs: 1000 });
    await Promise.all([a!.leave(), b!.leave(), late!.leave()]);
    for (let round = 0; round < 2; round++) {
      await Promise.all([a!.enter(), b!.enter()]);
      await Promise.all([a!.leave(), b!.leave()]);
    }
    expect(childrenOf(server, '/dbl/late')).toEqual([]);
  });

  it('rounds of 4 racing members: none passes enter before the 4th node, none passes leave before the 4th leave()', async () => {
    const cs = await clients.openMany(4);
    const ms = barriers(cs, '/dbl/race', 4);
    for (let round = 0; round < 5; round++) {
      let entering = 0;
      let passedEnterEarly = false;
      let leaving = 0;
      let passedLeaveEarly = false;
      await Promise.all(
        ms.map(async (m, i) => {
          await sleep(i * 7 * (round % 3));
          entering++;
          await m.enter({ timeoutMs: 10_000 });
          if (entering < 4) passedEnterEarly = true;
          await sleep(((i + round) % 4) * 5);
          leaving++;
          await m.leave({ timeoutMs: 10_000 });
          if (leaving < 4) passedLeaveEarly = true;
        }),
      );
      expect({ passedEnterEarly, passedLeaveEarly }).toEqual({ passedEnterEarly: false, passedLeaveEarly: false });
    }
    expect(childrenOf(server, '/dbl/race')).toEqual([]);
    await roundTrip(clients.all);
    expect(totalWatches(server)).toBe(0);
  });

  it('a member whose session ends inside makes the others fail leave with MemberLostError naming it; its own leave too', async () => {
    const cs = await clients.openMany(3);
    const [a, b, lost] = barriers(cs, '/dbl/lost', 3);
    await Promise.all([a!.enter(), b!.enter(), lost!.enter()]);
    const aLeave = a!.leave({ timeoutMs: 10_000 });
    await sleep(50);
    server.expireSession(cs[2]!.sessionId);
    const errA = await aLeave.catch((e: unknown) => e);
    const errB = await b!.leave({ timeoutMs: 10_000 }).catch((e: unknown) => e);
    for (const err of [errA, errB]) {
      expect(err).toBeInstanceOf(MemberLostError);
      expect((err as MemberLostError).member).toBe(lost!.memberName);
      expect((err as MemberLostError).self).toBe(false);
      expect((err as MemberLostError).path).toBe('/dbl/lost');
      expect((err as Error).message).toContain(lost!.memberName);
    }
    await cs[2]!.waitForState('RECONNECTED', { timeoutMs: 5000 }).catch(() => {});
    const own = await lost!.leave({ timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(own).toBeInstanceOf(MemberLostError);
    expect((own as MemberLostError).self).toBe(true);
    expect(childrenOf(server, '/dbl/lost')).toEqual([]);
    await roundTrip(clients.all);
    expect(totalWatches(server)).toBe(0);
  });

  it('a foreign (Curator) member is counted, and never reported lost when its node goes', async () => {
    const cs = await clients.openMany(3);
    const observer = await clients.open();
    const [a, b] = barriers(cs.slice(0, 2), '/dbl/foreign', 3);
    const foreign = cs[2]!;
    const entered = Promise.all([a!.enter(), b!.enter()]);
    await whenTree(observer, '/dbl/foreign', () => childrenOf(server, '/dbl/foreign').length === 2); // both members in
    // What Curator writes: an ephemeral UUID node with its default data (the local address).
    await foreign.create(`/dbl/foreign/${randomUUID()}`, Buffer.from('127.0.1.1'), { mode: CreateMode.EPHEMERAL });
    await foreign.getChildren('/dbl/foreign');
    await foreign.create('/dbl/foreign/ready', null).catch(() => {});
    await entered;
    server.expireSession(foreign.sessionId);
    await Promise.all([a!.leave({ timeoutMs: 5000 }), b!.leave({ timeoutMs: 5000 })]);
    expect(childrenOf(server, '/dbl/foreign')).toEqual([]);
  });

  it('a failed enter rejects with TimeoutError, AbortError or ClosedError and withdraws its node', async () => {
    const cs = await clients.openMany(2);
    const observer = await clients.open();
    const members = (n: number): Promise<void> => whenTree(observer, '/dbl/fail', () => childrenOf(server, '/dbl/fail').length === n);
    const [a, b] = barriers(cs, '/dbl/fail', 3);
    await expect(a!.enter({ timeoutMs: 100 })).rejects.toBeInstanceOf(TimeoutError);
    expect(childrenOf(server, '/dbl/fail')).toEqual([]);
    const ac = new AbortController();
    const aborted = a!.enter({ signal: ac.signal });
    await members(1); // a waits inside enter
    ac.abort();
    await expect(aborted).rejects.toBeInstanceOf(AbortError);
    expect(childrenOf(server, '/dbl/fail')).toEqual([]);
    const closing = b!.enter();
    await members(1);
    expect(childrenOf(server, '/dbl/fail')).toEqual([b!.memberName]);
    await b!.close();
    await expect(closing).rejects.toBeInstanceOf(ClosedError);
    await expect(b!.enter()).rejects.toBeInstanceOf(ClosedError);
    expect(childrenOf(server, '/dbl/fail')).toEqual([]);
    await a!.close();
    await roundTrip(clients.all);
    expect(totalWatches(server)).toBe(0);
  });

  it('a timed-out leave rejects with TimeoutError and withdraws: the others are not held up', async () => {
    const cs = await clients.openMany(3);
    const [a, b, c] = barriers(cs, '/dbl/leave-timeout', 3);
    await Promise.all([a!.enter(), b!.enter(), c!.enter()]);
    await expect(a!.leave({ timeoutMs: 100 })).rejects.toBeInstanceOf(TimeoutError);
    expect(a!.inside).toBe(false);
    expect(childrenOf(server, '/dbl/leave-timeout')).not.toContain(a!.memberName);
    await Promise.all([b!.leave({ timeoutMs: 5000 }), c!.leave({ timeoutMs: 5000 })]);
    expect(childrenOf(server, '/dbl/leave-timeout')).toEqual([]);
  });

  it('close() while inside withdraws our node, stops the roll call and leaves no watch', async () => {
    const cs = await clients.openMany(2);
    const [a, b] = barriers(cs, '/dbl/close', 2);
    await Promise.all([a!.enter(), b!.enter()]);
    expect(totalWatches(server)).toBeGreaterThan(0);
    await a!.close();
    await b!.close();
    expect(childrenOf(server, '/dbl/close').filter((n) => n !== 'ready')).toEqual([]);
    await roundTrip(clients.all);
    expect(totalWatches(server)).toBe(0);
    await expect(a!.leave()).rejects.toThrow(/before enter/);
  });

  it('refuses a bad memberQty and a second enter', async () => {
    const [c] = await clients.openMany(1);
    expect(() => new DoubleBarrier(c!, '/dbl/bad', 0)).toThrow(InvalidArgumentError);
    const m = new DoubleBarrier(c!, '/dbl/once', 1);
    await m.enter();
    await expect(m.enter()).rejects.toThrow(/already inside/);
    await m.leave();
  });
});
