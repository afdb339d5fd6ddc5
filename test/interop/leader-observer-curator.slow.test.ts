/**
 * Tenure's LeaderObserver on an election of Apache Curator's LeaderLatch (Debian's
 * libcurator-recipes-java 5.4, driven through test/interop/leader-java/CuratorLeaderParticipant.java)
 * and Tenure's, on a real ZooKeeper 3.8. Eleven participants alternate between the libraries;
 * ten hand-overs follow. The observer yields exactly the eleven leaders, in order, each with the
 * fencing token the latch itself holds (Java: its node's czxid, as the Java side reads it), rising;
 * waiters joining yield nothing. A second observer, started mid-way, agrees. And on Curator's
 * LeaderSelector layout (test/interop/leader-java/CuratorSelectorParticipant.java, autoRequeue),
 * mixed with Tenure's LeaderSelector: one item per term, the ids Curator writes.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestingServer, nextEvent, realZooKeeper } from '@tenure/testing';
import { LeaderLatch, LeaderObserver, LeaderSelector, type LeaderInfo } from '@tenure/leader';
import { Clients } from '../../packages/leader/test/harness.js';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

const zk = realZooKeeper();
const java = javaToolchain();
const SOURCE = fileURLToPath(new URL('./leader-java/CuratorLeaderParticipant.java', import.meta.url));
const SELECTOR_SOURCE = fileURLToPath(new URL('./leader-java/CuratorSelectorParticipant.java', import.meta.url));
const SESSION_MS = 4000;
const PATH = '/interop/observed';

/** The next item within `ms` (real time: it only bounds a test that would hang). */
async function nextItem<T>(it: AsyncIterator<T>, ms = 20_000): Promise<IteratorResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      it.next(),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no item within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

type Member = { kind: 'java'; id: string } | { kind: 'tenure'; id: string; latch: LeaderLatch };

describe.skipIf(!zk.available || !java.available)('LeaderObserver on a Curator + Tenure election (ZooKeeper 3.8)', () => {
  let server: TestingServer;
  let compiled: CompiledJava;
  let jvm: JavaProgram;
  let clients: Clients;

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava([SOURCE, SELECTOR_SOURCE]), TestingServer.start()]);
    jvm = await JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorLeaderParticipant', args: [server.connectString, String(SESSION_MS)] },
      /^ready$/,
      60_000,
    );
    clients = new Clients(() => server.transport());
  });
  afterAll(async () => {
    await clients?.closeAll();
    await jvm?.stop();
    await server?.close();
    compiled?.dispose();
  });

  it('10 hand-overs between Curator and Tenure latches: exactly the 11 leaders, in order, tokens rising and equal to each latch own', async () => {
    const watcher = await clients.open({ sessionTimeoutMs: SESSION_MS });
    const observer = new LeaderObserver(watcher, PATH);
    await observer.start({ timeoutMs: 10_000 });
    const items: LeaderInfo[] = [];
    const it = observer.leaders();
    const leaderEvents: string[] = [];
    observer.on('leader', (l) => leaderEvents.push(l.participantId));

    // Each participant's own token as it starts leading: Tenure's leadership, Java's isLeader line.
    const javaTokens = new Map<string, Promise<bigint>>();
    const members: Member[] = [];
    for (let i = 0; i < 11; i++) {
      const id = `${i % 2 === 0 ? 'java' : 'tenure'}-${i}`;
      if (i % 2 === 0) {
        javaTokens.set(
          id,
          jvm.waitFor(new RegExp(`^isLeader ${id} `), 120_000).then((line) => BigInt(line.split(' ')[3]!)),
        );
        await jvm.ask(`join ${id} ${PATH}`, new RegExp(`^joined ${id} /`), 20_000);
        members.push({ kind: 'java', id });
      } else {
        const c = await clients.open({ sessionTimeoutMs: SESSION_MS, connectionTimeoutMs: 5000 });
        const latch = new LeaderLatch(c, PATH, { id });
        await latch.start();
        members.push({ kind: 'tenure', id, latch });
      }
      // The first join is the first leader; the ten after it are waiters and yield nothing (the
      // next item, below, is the first hand-over's).
      if (i === 0) items.push((await nextItem(it)).value as LeaderInfo);
    }
    expect(items[0]!.participantId).toBe('java-0');

    let late: AsyncIterator<LeaderInfo> | null = null;
    let lateObserver: LeaderObserver | null = null;
    const ownTokens: bigint[] = [];
    let vacant: Promise<unknown> | null = null;
    for (let i = 0; i < 11; i++) {
      const m = members[i]!;
      const own = m.kind === 'java' ? await javaTokens.get(m.id)! : (await m.latch.await({ timeoutMs: 20_000 })).fencingToken;
      ownTokens.push(own);
      if (i > 0) items.push((await nextItem(it)).value as LeaderInfo);
      expect(items[i]).toMatchObject({ participantId: m.id, fencingToken: own });
      if (i === 5) {
        // Started mid-way: its first item is the leader now.
        lateObserver = new LeaderObserver(await clients.open({ sessionTimeoutMs: SESSION_MS }), PATH);
        await lateObserver.start({ timeoutMs: 10_000 });
        late = lateObserver.leaders();
      }
      if (late !== null) expect((await nextItem(late)).value).toMatchObject({ participantId: m.id, fencingToken: own });
      // Hand over: the leader leaves (the last one leaves the election empty).
      if (i === 10) vacant = nextEvent(observer, 'vacant', undefined, { timeoutMs: 20_000 });
      if (m.kind === 'java') await jvm.ask(`close ${m.id}`, new RegExp(`^closed ${m.id}`), 20_000);
      else await m.latch.close();
    }

    // The last leader left: the election is empty. Nothing more comes, and the iteration ends on close.
    await vacant;
    expect(await observer.current()).toBeUndefined();
    await observer.close();
    await lateObserver?.close();
    expect(await nextItem(it)).toEqual({ done: true, value: undefined });
    expect(items.map((l) => l.participantId)).toEqual(members.map((m) => m.id));
    expect(items.map((l) => l.fencingToken)).toEqual(ownTokens);
    for (let i = 1; i < items.length; i++) expect(items[i]!.fencingToken > items[i - 1]!.fencingToken).toBe(true);
    expect(leaderEvents).toEqual(members.map((m) => m.id));
    // Every item's node was the leader's own.
    for (const l of items) expect(l.path.startsWith(`${PATH}/_c_`) && /-latch-\d{10}$/.test(l.path)).toBe(true);
  });

  it("Curator's LeaderSelector layout (lock- nodes, autoRequeue) with Tenure's: one item per term, Curator's ids, tokens rising", async () => {
    const path = '/interop/observed-selector';
    const selectors = await JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorSelectorParticipant', args: [server.connectString, String(SESSION_MS)] },
      /^ready$/,
      60_000,
    );
    let ts: LeaderSelector | null = null;
    try {
      const observer = new LeaderObserver(await clients.open({ sessionTimeoutMs: SESSION_MS }), path);
      await observer.start({ timeoutMs: 10_000 });
      const it = observer.leaders();
      const next = async (): Promise<LeaderInfo> => (await nextItem(it)).value as LeaderInfo;
      const cj1Leads = selectors.waitFor(/^isLeader cj-1$/, 20_000);
      await selectors.ask(`join cj-1 ${path}`, /^joined cj-1$/, 20_000);
      await cj1Leads;
      let releaseTenure!: () => void;
      let tokenOf!: (token: bigint) => void;
      const tenureTerm = new Promise<bigint>((resolve) => (tokenOf = resolve));
      ts = new LeaderSelector(await clients.open({ sessionTimeoutMs: SESSION_MS }), path, {
        id: 'ts-1',
        takeLeadership: (signal, leadership) =>
          new Promise<void>((resolve) => {
            tokenOf(leadership.fencingToken);
            releaseTenure = resolve;
            signal.addEventListener('abort', () => resolve(), { once: true });
          }),
      });
      await ts.start();
      await selectors.ask(`join cj-2 ${path}`, /^joined cj-2$/, 20_000);
      const first = await next();
      expect(first.participantId).toBe('cj-1');
      expect(first.path).toMatch(/-lock-\d{10}$/);
      // cj-1 yields (and queues again at the back): the Tenure selector's term.
      await selectors.ask('yield cj-1', /^yielded cj-1$/);
      const second = await next();
      expect(second).toMatchObject({ participantId: 'ts-1', fencingToken: await tenureTerm });
      // The Tenure term ends (no autoRequeue): cj-2, then cj-1 again (a new node, a new token).
      const cj2Leads = selectors.waitFor(/^isLeader cj-2$/, 20_000);
      releaseTenure();
      await cj2Leads;
      const third = await next();
      expect(third.participantId).toBe('cj-2');
      await selectors.ask('yield cj-2', /^yielded cj-2$/);
      const fourth = await next();
      expect(fourth.participantId).toBe('cj-1');
      const tokens = [first, second, third, fourth].map((l) => l.fencingToken);
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]! > tokens[i - 1]!).toBe(true);
      await observer.close();
    } finally {
      await ts?.close();
      await selectors.stop();
    }
  });
});
