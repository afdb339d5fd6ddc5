/**
 * At most one leader at any instant on a real ZooKeeper 3.8 (Debian's package), with faults made
 * by the server or the network: the leader closing, its session expired (a second connection
 * closes it, the only way ZooKeeper allows), its connection blackholed by a FaultProxy past the
 * session timeout, and connection resets on every participant (flapping). Each client talks
 * through its own FaultProxy.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createClient, RetryPolicies, type Client, type ErrorPolicy } from '@tenure/client';
import { FaultProxy, TestingServer, expireSession, realZooKeeper } from '@tenure/testing';
import { LeaderLatch, LeaderSelector } from '../src/index.js';
import { anyEvent, nextEvent, sleep } from './harness.js';
import { LeadershipRecorder } from './recorder.js';

const zk = realZooKeeper();
const SESSION_MS = 2000;

interface Member {
  name: string;
  client: Client;
  proxy: FaultProxy;
  latch: LeaderLatch;
}

describe.skipIf(!zk.available)('at most one leader on ZooKeeper 3.8', () => {
  let server: TestingServer;
  const members: Member[] = [];
  const opened: Array<{ client: Client; proxy: FaultProxy }> = [];

  beforeAll(async () => {
    server = await TestingServer.start();
  });
  afterEach(async () => {
    await Promise.all(members.splice(0).map((m) => m.latch.close()));
    await Promise.all(opened.splice(0).map(async ({ client, proxy }) => (await client.close(), await proxy.close())));
  });
  afterAll(async () => {
    await server?.close();
  });

  async function open(errorPolicy: ErrorPolicy = 'standard'): Promise<{ client: Client; proxy: FaultProxy }> {
    const proxy = await FaultProxy.start(server.connectString);
    const client = createClient({
      connectString: proxy.connectString,
      sessionTimeoutMs: SESSION_MS,
      connectionTimeoutMs: 5000,
      retryPolicy: RetryPolicies.exponentialBackoff(20, 10, 200),
      errorPolicy,
    });
    opened.push({ client, proxy });
    await client.start();
    return { client, proxy };
  }

  async function election(path: string, n: number, errorPolicy: ErrorPolicy = 'standard'): Promise<LeadershipRecorder> {
    const recorder = new LeadershipRecorder();
    for (let i = 0; i < n; i++) {
      const { client, proxy } = await open(errorPolicy);
      const latch = new LeaderLatch(client, path, { id: `p${i}`, closeMode: 'notifyLeader' });
      recorder.attach(`p${i}`, latch);
      await latch.start();
      members.push({ name: `p${i}`, client, proxy, latch });
    }
    return recorder;
  }

  /** Exactly one member leads and owns the first node: checked now and after each isLeader, notLeader or joined. */
  const settled = async (timeoutMs = 15_000): Promise<Member> => {
    const until = performance.now() + timeoutMs;
    for (;;) {
      // Listening before the check: a change during the getLeader read is not missed.
      const stop = new AbortController();
      const change = anyEvent(
        members.map((m) => m.latch),
        ['isLeader', 'notLeader', 'joined'],
        undefined,
        { timeoutMs: Math.max(1, until - performance.now()), signal: stop.signal },
      );
      change.catch(() => {});
      const leaders = members.filter((m) => m.latch.hasLeadership());
      if (leaders.length === 1 && (await leaders[0]!.latch.getLeader())?.path === leaders[0]!.latch.ourPath) {
        stop.abort();
        return leaders[0]!;
      }
      await change.catch(() => {
        throw new Error(`no settled leader within ${timeoutMs} ms`);
      });
    }
  };

  /** The next isLeader of a member other than `not`. */
  const nextLeader = (not: Member, timeoutMs = 15_000): Promise<Member> =>
    anyEvent(
      members.filter((m) => m !== not).map((m) => m.latch),
      'isLeader',
      undefined,
      { timeoutMs },
    ).then(({ emitter }) => members.find((m) => m.latch === emitter)!);

  test('the leader closes, three times in a row; each successor has a larger token', async () => {
    const recorder = await election('/amo/close', 4);
    for (let round = 0; round < 3; round++) {
      const leader = await settled();
      const token = leader.latch.leadership!.fencingToken;
      await leader.latch.close();
      const i = members.indexOf(leader);
      const latch = new LeaderLatch(leader.client, '/amo/close', { id: `${leader.name}'`, closeMode: 'notifyLeader' });
      recorder.attach(`${leader.name}'`, latch);
      await latch.start();
      members[i] = { ...leader, name: `${leader.name}'`, latch };
      const next = await settled();
      expect(next.latch.leadership!.fencingToken).toBeGreaterThan(token);
    }
    recorder.assertSafe();
  });

  test("the leader's session is expired (closeSession from a second connection), three times", async () => {
    const recorder = await election('/amo/expire', 3);
    for (let round = 0; round < 3; round++) {
      const leader = await settled();
      const token = leader.latch.leadership!.fencingToken;
      const handover = nextLeader(leader);
      await expireSession(leader.client, server);
      const next = await handover;
      expect(next.latch.leadership!.fencingToken).toBeGreaterThan(token);
    }
    await settled();
    recorder.assertSafe();
  });

  for (const errorPolicy of ['standard', 'session'] as const) {
    test(`the leader's connection is blackholed past its session timeout (errorPolicy ${errorPolicy}): its term ends before the successor's begins`, async () => {
      const recorder = await election(`/amo/partition-${errorPolicy}`, 3, errorPolicy);
      const leader = await settled();
      const term = leader.latch.leadership!;
      const handover = nextLeader(leader);
      leader.proxy.blackhole();
      const next = await handover;
      recorder.assertSafe();
      const [old, successor] = recorder.terms.slice(-2);
      expect(old!.who).toBe(leader.name);
      expect(successor!.who).toBe(next.name);
      expect(old!.to!).toBeLessThan(successor!.from);
      expect(next.latch.leadership!.fencingToken).toBeGreaterThan(term.fencingToken);
      // Healed, the old leader finds its session gone and rejoins at the back.
      const rejoined = nextEvent(leader.latch, 'joined', undefined, { timeoutMs: 15_000 });
      leader.proxy.heal();
      await rejoined;
      expect(await next.latch.getParticipants()).toHaveLength(3);
      expect((await next.latch.getLeader())!.id).toBe(next.name);
      recorder.assertSafe();
    });
  }

  test('flapping: connections reset over and over on every participant; the leader keeps its node and its token', async () => {
    const recorder = await election('/amo/flapping', 4);
    const first = await settled();
    const paths = members.map((m) => m.latch.ourPath);
    const until = performance.now() + 2000;
    let resets = 0;
    while (performance.now() < until) {
      for (const m of members) {
        if (Math.random() < 0.5) {
          m.proxy.reset();
          resets++;
        }
      }
      await sleep(60 + Math.random() * 100);
    }
    expect(resets).toBeGreaterThan(10);
    const leader = await settled();
    recorder.assertSafe();
    expect(leader).toBe(first);
    expect(members.map((m) => m.latch.ourPath)).toEqual(paths);
    expect(new Set(recorder.terms.map((t) => t.token)).size).toBe(1);
  });

  test('LeaderSelector: terms never overlap across close, expiry and blackhole; tokens rise', async () => {
    const recorder = new LeadershipRecorder();
    const selectors: LeaderSelector[] = [];
    const clients: Array<{ client: Client; proxy: FaultProxy }> = [];
    let terms = 0;
    /** Resolves once `n` terms have begun (counted as each takeLeadership starts). */
    const waiting: Array<{ n: number; resolve: () => void }> = [];
    const termsReach = (n: number): Promise<void> =>
      terms >= n ? Promise.resolve() : new Promise((resolve) => waiting.push({ n, resolve }));
    for (let i = 0; i < 3; i++) {
      const c = await open();
      clients.push(c);
      const s = new LeaderSelector(c.client, '/amo/selector', {
        id: `s${i}`,
        autoRequeue: true,
        takeLeadership: async (signal) => {
          terms++;
          for (const w of waiting.filter((x) => terms >= x.n)) {
            waiting.splice(waiting.indexOf(w), 1);
            w.resolve();
          }
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, 100);
            signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
          });
        },
      });
      recorder.attach(`s${i}`, s);
      selectors.push(s);
      await s.start();
    }
    await termsReach(3);
    const leaderIndex = (): number => selectors.findIndex((s) => s.hasLeadership());
    await expireSession(clients[Math.max(0, leaderIndex())]!.client, server);
    await termsReach(terms + 2);
    clients[Math.max(0, leaderIndex())]!.proxy.blackhole();
    await termsReach(terms + 3);
    for (const c of clients) c.proxy.heal();
    await Promise.all(selectors.map((s) => s.close()));
    recorder.assertSafe();
    for (let i = 1; i < recorder.terms.length; i++) expect(recorder.terms[i]!.token).toBeGreaterThan(recorder.terms[i - 1]!.token);
  }, 60_000);
});
