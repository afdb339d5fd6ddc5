/**
 * Tenure's LeaderSelector and Apache Curator's (Debian's libcurator-recipes-java 5.4, compiled here
 * from test/interop/leader-java/CuratorSelectorParticipant.java) on one election path on a real
 * ZooKeeper 3.8: InterProcessMutex's layout on both sides. Both libraries always agree on who leads,
 * leadership passes back and forth between the two sides, and only one participant leads at a time
 * (whoever starts leading finds every other participant, Java or Tenure, not leading).
 */
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TestingServer, realZooKeeper } from '@tenure/testing';
import { LeaderSelector } from '@tenure/leader';
import { Clients, eventually } from '../../packages/leader/test/harness.js';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

const zk = realZooKeeper();
const java = javaToolchain();
const SOURCE = fileURLToPath(new URL('./leader-java/CuratorSelectorParticipant.java', import.meta.url));
const SESSION_MS = 4000;

/** A Tenure participant whose takeLeadership holds until yielded (or its signal aborts). */
interface TenureMember {
  id: string;
  selector: LeaderSelector;
  yieldTerm(): void;
}

describe.skipIf(!zk.available || !java.available)('Curator LeaderSelector interop on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let compiled: CompiledJava;
  let jvm: JavaProgram;
  let clients: Clients;
  const selectors: LeaderSelector[] = [];
  /** Who leads, as seen by the events of both sides; a second leader at once is an overlap. */
  const leading = new Set<string>();
  const overlaps: string[] = [];
  const terms: string[] = [];
  const javaIds = new Set<string>();

  const began = (id: string): void => {
    if (leading.size > 0) overlaps.push(`${id} began leading while ${[...leading].join(',')} led`);
    leading.add(id);
    terms.push(id);
  };

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava([SOURCE]), TestingServer.start()]);
    jvm = await JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorSelectorParticipant', args: [server.connectString, String(SESSION_MS)] },
      /^ready$/,
      60_000,
    );
    clients = new Clients(() => server.transport());
    // Java's events, as they arrive (its notLeader is printed before Curator releases its node).
    void jvm
      .waitFor((line) => {
        const [event, id] = line.split(' ');
        if (event === 'isLeader') began(id!);
        if (event === 'notLeader') leading.delete(id!);
        return false;
      }, 600_000)
      .catch(() => {});
  });
  afterEach(async () => {
    await Promise.all(selectors.splice(0).map((s) => s.close()));
    await clients.closeAll();
    for (const id of javaIds) await jvm.ask(`close ${id}`, new RegExp(`^closed ${id}`));
    javaIds.clear();
    leading.clear();
    overlaps.length = 0;
    terms.length = 0;
  });
  afterAll(async () => {
    await jvm?.stop();
    await server?.close();
    compiled?.dispose();
  });

  async function joinJava(id: string, path: string): Promise<string> {
    await jvm.ask(`join ${id} ${path}`, new RegExp(`^joined ${id}$`), 20_000);
    javaIds.add(id);
    return id;
  }

  async function joinTenure(id: string, path: string): Promise<TenureMember> {
    const c = await clients.open({ sessionTimeoutMs: SESSION_MS, connectionTimeoutMs: 5000 });
    let yieldTerm = (): void => {};
    const selector = new LeaderSelector(c, path, {
      id,
      autoRequeue: true,
      takeLeadership: (signal) =>
        new Promise<void>((resolve) => {
          began(id);
          const done = (): void => {
            leading.delete(id);
            resolve();
          };
          yieldTerm = done;
          signal.addEventListener('abort', done, { once: true });
        }),
    });
    selectors.push(selector);
    await selector.start();
    await eventually(async () => (await selector.getParticipants()).some((p) => p.id === id), 10_000, `${id} listed`);
    return { id, selector, yieldTerm: () => yieldTerm() };
  }

  /**
   * Waits until everybody agrees that `expected` leads: each Tenure selector and each Java one says
   * whether it leads, both libraries' getLeader() name `expected`, and both list the same
   * participants in the same order. Returns that order.
   */
  async function agree(expected: string, tenure: TenureMember[], javas: string[]): Promise<string[]> {
    let last = '';
    try {
      return await eventually(
        async () => {
          const views: string[] = [];
          for (const t of tenure) {
            if (t.selector.hasLeadership() !== (t.id === expected))
              return ((last = `tenure ${t.id} hasLeadership=${t.selector.hasLeadership()}`), null);
          }
          for (const id of javas) {
            const status = await jvm.ask(`status ${id}`, new RegExp(`^status ${id} `));
            if (status.split(' ')[2] !== String(id === expected)) return ((last = status), null);
            const leader = await jvm.ask(`leader ${id}`, new RegExp(`^leader ${id} `));
            if (leader.split(' ')[2] !== expected) return ((last = leader), null);
            views.push((await jvm.ask(`participants ${id}`, new RegExp(`^participants ${id} `))).split(' ')[2] ?? '');
          }
          for (const t of tenure) {
            const leader = await t.selector.getLeader();
            if (leader?.id !== expected) return ((last = `tenure ${t.id} getLeader=${leader?.id}`), null);
            views.push((await t.selector.getParticipants()).map((p) => p.id).join(','));
          }
          if (new Set(views).size !== 1) return ((last = `participant lists differ: ${views.join(' | ')}`), null);
          return views[0]!.split(',');
        },
        15_000,
        `agreement on ${expected}`,
      );
    } catch (err) {
      throw new Error(`${String(err)}; last view: ${last}`);
    }
  }

  it('one election, two libraries: leadership passes Java -> Tenure -> Java -> Tenure and round again, one leader at a time', async () => {
    const path = '/interop/selector';
    const j1 = await joinJava('java-1', path);
    const t1 = await joinTenure('tenure-1', path);
    const j2 = await joinJava('java-2', path);
    const t2 = await joinTenure('tenure-2', path);
    const tenure = [t1, t2];
    const javas = [j1, j2];
    let order = await agree('java-1', tenure, javas);
    expect(order).toEqual(['java-1', 'tenure-1', 'java-2', 'tenure-2']);
    // Eight handovers: each leader yields; autoRequeue puts it at the back of the line.
    for (let round = 0; round < 8; round++) {
      const current = order[0]!;
      const member = tenure.find((t) => t.id === current);
      if (member) member.yieldTerm();
      else await jvm.ask(`yield ${current}`, new RegExp(`^yielded ${current}$`));
      const next = order[1]!;
      order = await agree(next, tenure, javas);
      expect(order[0]).toBe(next);
      expect(order.at(-1)).toBe(current);
    }
    expect(terms).toEqual(['java-1', 'tenure-1', 'java-2', 'tenure-2', 'java-1', 'tenure-1', 'java-2', 'tenure-2', 'java-1']);
    expect(overlaps).toEqual([]);
  });

  it("closing the leader hands over across libraries: Curator's close elects Tenure, Tenure's close elects Curator", async () => {
    const path = '/interop/selector-close';
    const j1 = await joinJava('java-1', path);
    const t1 = await joinTenure('tenure-1', path);
    const j2 = await joinJava('java-2', path);
    const t2 = await joinTenure('tenure-2', path);
    expect(await agree('java-1', [t1, t2], [j1, j2])).toEqual(['java-1', 'tenure-1', 'java-2', 'tenure-2']);

    await jvm.ask('close java-1', /^closed java-1$/);
    javaIds.delete('java-1');
    expect(await agree('tenure-1', [t1, t2], [j2])).toEqual(['tenure-1', 'java-2', 'tenure-2']);

    await t1.selector.close();
    expect(await agree('java-2', [t2], [j2])).toEqual(['java-2', 'tenure-2']);

    await jvm.ask('close java-2', /^closed java-2$/);
    javaIds.delete('java-2');
    expect(await agree('tenure-2', [t2], [])).toEqual(['tenure-2']);
    expect(terms).toEqual(['java-1', 'tenure-1', 'java-2', 'tenure-2']);
    expect(overlaps).toEqual([]);
  });
});
