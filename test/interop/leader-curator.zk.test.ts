/**
 * Tenure's LeaderLatch and Apache Curator's (Debian's libcurator-recipes-java 5.4, compiled here
 * from test/interop/leader-java/CuratorLeaderParticipant.java) in one election on a real
 * ZooKeeper 3.8: one layout, one order. Java and Tenure participants always agree on the leader;
 * killing the Java leader's JVM elects a Tenure participant, and killing a Tenure leader's process
 * elects a Java one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventLog, TestingServer, realZooKeeper } from '@tenure/testing';
import { LeaderLatch } from '@tenure/leader';
import { Clients, eventually } from '../../packages/leader/test/harness.js';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

const zk = realZooKeeper();
const java = javaToolchain();
const SOURCE = fileURLToPath(new URL('./leader-java/CuratorLeaderParticipant.java', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../packages/leader/test/fixtures/', import.meta.url));
/** Every participant's session timeout (Java and Tenure alike). */
const SESSION_MS = 2000;

/** A Java participant: an id inside one JVM. */
interface JavaMember {
  jvm: JavaProgram;
  id: string;
}

describe.skipIf(!zk.available || !java.available)('Curator LeaderLatch interop on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let compiled: CompiledJava;
  let jvm: JavaProgram;
  let clients: Clients;
  const latches: LeaderLatch[] = [];
  const extraJvms: JavaProgram[] = [];
  const children: ChildProcess[] = [];

  const startJvm = (): Promise<JavaProgram> =>
    JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorLeaderParticipant', args: [server.connectString, String(SESSION_MS)] },
      /^ready$/,
      60_000,
    );

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava([SOURCE]), TestingServer.start()]);
    jvm = await startJvm();
    clients = new Clients(() => server.transport());
  });
  afterEach(async () => {
    await Promise.all(latches.splice(0).map((l) => l.close()));
    await clients.closeAll();
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await Promise.all(extraJvms.splice(0).map((j) => j.stop()));
  });
  afterAll(async () => {
    await jvm?.stop();
    await server?.close();
    compiled?.dispose();
  });

  async function joinJava(j: JavaProgram, id: string, path: string): Promise<JavaMember> {
    await j.ask(`join ${id} ${path}`, new RegExp(`^joined ${id} /`), 20_000);
    return { jvm: j, id };
  }

  async function joinTenure(id: string, path: string): Promise<LeaderLatch> {
    const c = await clients.open({ sessionTimeoutMs: SESSION_MS, connectionTimeoutMs: 5000 });
    const l = new LeaderLatch(c, path, { id, closeMode: 'notifyLeader' });
    latches.push(l);
    await l.start();
    return l;
  }

  /**
   * Waits until everybody agrees that `expected` leads: each Tenure latch and each Java latch says
   * whether it leads, both libraries' getLeader() name `expected`, and both list the same
   * participants in the same order.
   */
  async function agree(expected: string, tenure: LeaderLatch[], javas: JavaMember[]): Promise<string[]> {
    let last = '';
    try {
      return await eventually(
        async () => {
          const views: string[] = [];
          for (const l of tenure) {
            if (l.hasLeadership() !== (l.id === expected)) return ((last = `tenure ${l.id} hasLeadership=${l.hasLeadership()}`), null);
          }
          for (const m of javas) {
            const status = await m.jvm.ask(`status ${m.id}`, new RegExp(`^status ${m.id} `));
            if (status.split(' ')[2] !== String(m.id === expected)) return ((last = status), null);
            const leader = await m.jvm.ask(`leader ${m.id}`, new RegExp(`^leader ${m.id} `));
            if (leader.split(' ')[2] !== expected) return ((last = leader), null);
            views.push((await m.jvm.ask(`participants ${m.id}`, new RegExp(`^participants ${m.id} `))).split(' ')[2] ?? '');
          }
          for (const l of tenure) {
            const leader = await l.getLeader();
            if (leader?.id !== expected) return ((last = `tenure ${l.id} getLeader=${leader?.id}`), null);
            views.push((await l.getParticipants()).map((p) => p.id).join(','));
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

  it('one election, two libraries: Java and Tenure agree on the leader through every handover; tokens rise', async () => {
    const path = '/interop/agree';
    const j1 = await joinJava(jvm, 'java-1', path);
    const t1 = await joinTenure('tenure-1', path);
    const j2 = await joinJava(jvm, 'java-2', path);
    const t2 = await joinTenure('tenure-2', path);
    const javas = [j1, j2];
    const tenure = [t1, t2];
    expect(await agree('java-1', tenure, javas)).toEqual(['java-1', 'tenure-1', 'java-2', 'tenure-2']);
    const czxidOf = async (id: string): Promise<bigint> => {
      const status = await jvm.ask(`status ${id}`, new RegExp(`^status ${id} `));
      return (await t1.client.exists(status.split(' ')[3]!))!.czxid;
    };
    const tokens = [await czxidOf('java-1')];

    // Curator's leader leaves: Tenure's first participant takes over.
    await jvm.ask('close java-1', /^closed java-1/);
    expect(await agree('tenure-1', tenure, [j2])).toEqual(['tenure-1', 'java-2', 'tenure-2']);
    tokens.push(t1.leadership!.fencingToken);

    // Tenure's leader leaves: Curator's takes over.
    const javaLeads = jvm.waitFor(/^isLeader java-2 /, 15_000);
    await t1.close();
    const line = await javaLeads;
    expect(await agree('java-2', [t2], [j2])).toEqual(['java-2', 'tenure-2']);
    tokens.push(BigInt(line.split(' ')[3]!));

    await jvm.ask('close java-2', /^closed java-2/);
    expect(await agree('tenure-2', [t2], [])).toEqual(['tenure-2']);
    tokens.push(t2.leadership!.fencingToken);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]! > tokens[i - 1]!).toBe(true);
  });

  it("killing the Java leader's JVM (no close, its session expires) elects a Tenure participant", async () => {
    const path = '/interop/kill-java';
    const doomed = await startJvm();
    extraJvms.push(doomed);
    const jk = await joinJava(doomed, 'java-doomed', path);
    const t1 = await joinTenure('tenure-1', path);
    const j3 = await joinJava(jvm, 'java-3', path);
    await agree('java-doomed', [t1], [jk, j3]);
    const status = await doomed.ask('status java-doomed', /^status java-doomed /);
    const javaToken = (await t1.client.exists(status.split(' ')[3]!))!.czxid;

    const killedAt = performance.now();
    doomed.send('halt');
    expect(await doomed.exited).toBe(137);
    const leadership = await t1.await({ timeoutMs: 15_000 });
    const failoverMs = performance.now() - killedAt;
    expect(leadership.fencingToken > javaToken).toBe(true);
    expect(await agree('tenure-1', [t1], [j3])).toEqual(['tenure-1', 'java-3']);
    // The session had to expire first: about the session timeout, never much less.
    expect(failoverMs).toBeGreaterThan(SESSION_MS / 3);
    await jvm.ask('close java-3', /^closed java-3/);
  });

  it("killing a Tenure leader's process (SIGKILL, its session expires) elects a Java participant", async () => {
    const path = '/interop/kill-tenure';
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', `${FIXTURES}tenure-participant.ts`, server.connectString, path, 'tenure-doomed', String(SESSION_MS)],
      {
        cwd: FIXTURES,
        env: { ...process.env, TSX_TSCONFIG_PATH: `${FIXTURES}tsconfig.json` },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    children.push(child);
    const lines = new EventLog<string>();
    const seen = (re: RegExp): boolean => lines.some((l) => re.test(l));
    createInterface({ input: child.stdout! }).on('line', (l) => lines.push(l));
    await lines.until(() => seen(/^isLeader tenure-doomed /), { timeoutMs: 30_000 }); // the Tenure child leads
    const tenureToken = BigInt(lines.find((l) => l.startsWith('isLeader'))!.split(' ')[3]!);
    const j4 = await joinJava(jvm, 'java-4', path);
    const t2 = await joinTenure('tenure-2', path);
    await agree('tenure-doomed', [t2], [j4]);

    const javaLeads = jvm.waitFor(/^isLeader java-4 /, 20_000);
    child.kill('SIGKILL');
    const line = await javaLeads;
    expect(BigInt(line.split(' ')[3]!) > tenureToken).toBe(true);
    expect(await agree('java-4', [t2], [j4])).toEqual(['java-4', 'tenure-2']);
    await jvm.ask('close java-4', /^closed java-4/);
    expect(await agree('tenure-2', [t2], [])).toEqual(['tenure-2']);
  });
});
