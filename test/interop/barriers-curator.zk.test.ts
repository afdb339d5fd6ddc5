/**
 * Tenure's barriers and Apache Curator's (Debian's libcurator-recipes-java 5.4) on one real
 * ZooKeeper 3.8, on the same paths. The Java side is test/interop/barriers-java/CuratorBarrierWorker.java,
 * compiled by this suite and driven line by line; every Curator member has its own session.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import type { Client } from '@tenure/client';
import { TestingServer, expireSession, realZooKeeper } from '@tenure/testing';
import { DistributedBarrier, DoubleBarrier, MemberLostError } from '@tenure/barriers';
import { Clients, settlesWithin, sleep } from '../../packages/barriers/test/harness.js';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

const zk = realZooKeeper();
const java = javaToolchain();
const WORKER = fileURLToPath(new URL('./barriers-java/CuratorBarrierWorker.java', import.meta.url));
const SESSION_MS = 4000;

/** A Curator member: its id in the JVM and its session, to expire it. */
interface CuratorMember {
  id: string;
  sessionId: bigint;
  sessionPassword: Buffer;
}

describe.skipIf(!zk.available || !java.available)('Curator barrier interop on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let compiled: CompiledJava;
  let curator: JavaProgram;
  let clients: Clients;
  const javaIds: string[] = [];
  const tenure: DoubleBarrier[] = [];
  const clientOf = new Map<DoubleBarrier, Client>();

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava([WORKER]), TestingServer.start()]);
    curator = await JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorBarrierWorker', args: [server.connectString, String(SESSION_MS)] },
      /^ready$/,
      60_000,
    );
    clients = new Clients(() => server.transport());
  });
  afterEach(async () => {
    await Promise.all(tenure.splice(0).map((b) => b.close()));
    for (const id of javaIds.splice(0)) await curator.ask(`close ${id}`, new RegExp(`^closed ${id}$`)).catch(() => {});
    await clients.closeAll();
  });
  afterAll(async () => {
    await curator?.stop();
    await server?.close();
    compiled?.dispose();
  });

  async function curatorMember(id: string, path: string, qty: number): Promise<CuratorMember> {
    const line = await curator.ask(`member ${id} ${path} ${qty}`, new RegExp(`^member ${id} `), 20_000);
    javaIds.push(id);
    const [, , sid, pw] = line.split(' ');
    return { id, sessionId: BigInt(`0x${sid}`), sessionPassword: Buffer.from(pw!, 'hex') };
  }

  async function tenureMember(path: string, qty: number): Promise<DoubleBarrier> {
    const c = await clients.open({ sessionTimeoutMs: SESSION_MS, connectionTimeoutMs: 5000 });
    const b = new DoubleBarrier(c, path, qty);
    tenure.push(b);
    clientOf.set(b, c);
    return b;
  }

  /** The next answer of Curator member `id` to an enter/leave: "entered id true" and the like. */
  const answer = (verb: string, id: string, timeoutMs = 20_000): Promise<string> => {
    const line = curator.waitFor(new RegExp(`^(${verb} ${id} |error ${id} )`), timeoutMs);
    line.catch(() => {}); // awaited by the test; a failed test must not add an unhandled rejection
    return line;
  };
  /** Whether Curator member `id` has answered `verb` yet. */
  const answered = (verb: string, ...ids: string[]): boolean => curator.lines.some((l) => ids.some((id) => l.startsWith(`${verb} ${id} `)));

  async function children(path: string): Promise<string[]> {
    const admin = await clients.open();
    return (await admin.getChildren(path).catch(() => ({ children: [] as string[] }))).children.sort();
  }

  for (const last of ['tenure', 'curator'] as const) {
    it(`2 Curator + 2 Tenure members, memberQty 4, the ${last} side last: none enters early, all enter and leave`, async () => {
      const path = `/interop/dbl/mixed-${last}`;
      const [c1, c2] = [await curatorMember(`c1${last}`, path, 4), await curatorMember(`c2${last}`, path, 4)];
      const [t1, t2] = [await tenureMember(path, 4), await tenureMember(path, 4)];
      // Three members enter, one of each side first; the fourth is `last`'s.
      const c1Entered = answer('entered', c1.id);
      curator.send(`enter ${c1.id} 20000`);
      const t1Entered = t1.enter({ timeoutMs: 20_000 });
      const c2Entered = answer('entered', c2.id);
      const t2Entered = last === 'curator' ? t2.enter({ timeoutMs: 20_000 }) : null;
      if (last === 'tenure') curator.send(`enter ${c2.id} 20000`);
      const early = Promise.all([c1Entered, t1Entered, ...(last === 'curator' ? [t2Entered] : [c2Entered])]);
      expect(await settlesWithin(early, 700)).toBe(false);
      expect(answered('entered', c1.id, c2.id)).toBe(false);
      expect((await children(path)).filter((n) => n !== 'ready')).toHaveLength(3);
      expect(await children(path)).not.toContain('ready');
      if (last === 'tenure') await t2.enter({ timeoutMs: 20_000 });
      else curator.send(`enter ${c2.id} 20000`);
      expect(await c1Entered).toBe(`entered ${c1.id} true`);
      expect(await c2Entered).toBe(`entered ${c2.id} true`);
      await Promise.all([t1Entered, t2Entered]);
      expect(await children(path)).toHaveLength(5); // 4 members + ready

      // Leave: three leave, the fourth (the same side's) last; nobody passes before it.
      const c1Left = answer('left', c1.id);
      curator.send(`leave ${c1.id} 20000`);
      const t1Left = t1.leave({ timeoutMs: 20_000 });
      const c2Left = answer('left', c2.id);
      const t2Left = last === 'curator' ? t2.leave({ timeoutMs: 20_000 }) : null;
      if (last === 'tenure') curator.send(`leave ${c2.id} 20000`);
      const leftEarly = Promise.all([c1Left, t1Left, ...(last === 'curator' ? [t2Left] : [c2Left])]);
      expect(await settlesWithin(leftEarly, 700)).toBe(false);
      expect(answered('left', c1.id, c2.id)).toBe(false);
      if (last === 'tenure') await t2.leave({ timeoutMs: 20_000 });
      else curator.send(`leave ${c2.id} 20000`);
      expect(await c1Left).toBe(`left ${c1.id} true`);
      expect(await c2Left).toBe(`left ${c2.id} true`);
      await Promise.all([t1Left, t2Left]);
      expect(await children(path)).toEqual([]);
    });
  }

  it('a Curator setBarrier holds a Tenure waitOnBarrier until Curator removes it, and the reverse', async () => {
    const [a] = await clients.openMany(1);
    const tenureSide = new DistributedBarrier(a!, '/interop-gate');
    await curator.ask('set /interop-gate', /^set \/interop-gate$/);
    const waiting = tenureSide.waitOnBarrier({ timeoutMs: 20_000 });
    expect(await settlesWithin(waiting, 700)).toBe(false);
    await curator.ask('remove /interop-gate', /^removed \/interop-gate$/);
    await waiting;

    await tenureSide.setBarrier();
    const javaWait = curator.waitFor(/^(waited|error) /, 20_000);
    curator.send('wait /interop-gate 20000');
    expect(await settlesWithin(javaWait, 700)).toBe(false);
    await tenureSide.removeBarrier();
    expect(await javaWait).toBe('waited /interop-gate true');
    await tenureSide.close();
  });

  it('a Tenure member whose session expires: the Tenure member leaves with MemberLostError naming it, the Curator members are not held up', async () => {
    const path = '/interop/dbl/expired';
    const [c1, c2] = [await curatorMember('c1x', path, 4), await curatorMember('c2x', path, 4)];
    const [t1, lost] = [await tenureMember(path, 4), await tenureMember(path, 4)];
    const entered = [answer('entered', c1.id), answer('entered', c2.id)];
    curator.send(`enter ${c1.id} 20000`);
    curator.send(`enter ${c2.id} 20000`);
    await Promise.all([t1.enter({ timeoutMs: 20_000 }), lost.enter({ timeoutMs: 20_000 }), ...entered]);

    const left = [answer('left', c1.id), answer('left', c2.id)];
    curator.send(`leave ${c1.id} 20000`);
    curator.send(`leave ${c2.id} 20000`);
    const t1Left = t1.leave({ timeoutMs: 20_000 }).catch((e: unknown) => e);
    await sleep(200);
    await expireSession(clientOf.get(lost)!);
    const err = await t1Left;
    expect(err).toBeInstanceOf(MemberLostError);
    expect((err as MemberLostError).member).toBe(lost.memberName);
    // Curator cannot tell a lost member from one that left: its members pass.
    expect(await Promise.all(left)).toEqual([`left ${c1.id} true`, `left ${c2.id} true`]);
    expect(await children(path)).toEqual([]);
  });

  it('a Curator member whose session expires is never reported lost: Tenure members leave normally', async () => {
    const path = '/interop/dbl/curator-expired';
    const [c1, c2] = [await curatorMember('c1y', path, 4), await curatorMember('c2y', path, 4)];
    const [t1, t2] = [await tenureMember(path, 4), await tenureMember(path, 4)];
    const entered = [answer('entered', c1.id), answer('entered', c2.id)];
    curator.send(`enter ${c1.id} 20000`);
    curator.send(`enter ${c2.id} 20000`);
    await Promise.all([t1.enter({ timeoutMs: 20_000 }), t2.enter({ timeoutMs: 20_000 }), ...entered]);
    const c1Left = answer('left', c1.id);
    curator.send(`leave ${c1.id} 20000`);
    const leaving = Promise.all([t1.leave({ timeoutMs: 20_000 }), t2.leave({ timeoutMs: 20_000 })]);
    await sleep(200);
    await expireSession({ ...c2, hosts: [server.connectString] }, server);
    await leaving;
    expect(await c1Left).toBe(`left ${c1.id} true`);
    expect((await children(path)).filter((n) => n !== 'ready')).toEqual([]);
  });
});
