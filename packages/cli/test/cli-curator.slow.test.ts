/**
 * `tenure locks` and `tenure leaders` read what Apache Curator 5.4 writes (Debian's
 * libcurator-recipes-java, driven by curator-java/CuratorRecipeHolders.java) on a real ZooKeeper
 * 3.8: InterProcessMutex holder and waiter (with Tenure's Mutex queued behind them), the read-write
 * lock, InterProcessSemaphoreV2 leases, LeaderLatch and LeaderSelector participants; and `tenure
 * services` reads curator-x-discovery's registry and `tenure groups` Curator's GroupMember.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '@tenure/client';
import { Mutex } from '@tenure/locks';
import { childrenUntil, realZooKeeper, TestingServer } from '@tenure/testing';
import { compileJava, CURATOR_JARS, javaToolchain, JavaProgram, type CompiledJava } from '../../../test/interop/java.js';
import { sessionHex } from '../src/index.js';
import { json, tenure } from './cli-harness.js';

const zk = realZooKeeper();
const JARS = [...CURATOR_JARS, '/usr/share/java/curator-x-discovery.jar'];
const java = javaToolchain(JARS);
const SOURCE = fileURLToPath(new URL('./curator-java/CuratorRecipeHolders.java', import.meta.url));

describe.skipIf(!zk.available || !java.available)("tenure locks / leaders on Curator's recipes (ZooKeeper 3.8)", () => {
  let server: TestingServer;
  let compiled: CompiledJava;
  let jvm: JavaProgram;
  let tenureClient: Client;
  const run = (...args: string[]) => tenure(['--server', server.connectString, ...args]);

  /** Starts a Curator holder; resolves with its session id (hex). */
  async function curator(command: string): Promise<string> {
    const name = command.split(' ')[1]!;
    const answer = await jvm.ask(command, new RegExp(`^started ${name} `), 20_000);
    if (answer.startsWith('error')) throw new Error(answer);
    return answer.split(' ')[2]!;
  }

  /** Resolves once the JVM has printed `line` (now or earlier). */
  const seen = async (line: string): Promise<void> => void (jvm.lines.includes(line) || (await jvm.waitFor((l) => l === line, 20_000)));

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava([SOURCE], JARS), TestingServer.start()]);
    jvm = await JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorRecipeHolders', args: [server.connectString] },
      /^ready$/,
      60_000,
    );
    tenureClient = createClient({ connectString: server.connectString, sessionTimeoutMs: 4000 });
    await tenureClient.start();
  }, 180_000);
  afterAll(async () => {
    await tenureClient?.close();
    await jvm?.stop();
    await server?.close();
    compiled?.dispose();
  });

  it('shows the holder and the queue of a Curator InterProcessMutex, a read-write lock and semaphore leases', async () => {
    const holder = await curator('mutex j1 /curator/orders holder-J1');
    await seen('acquired j1');
    const waiter = await curator('mutex j2 /curator/orders waiter-J2');
    await childrenUntil(tenureClient, '/curator/orders', (kids) => kids.length === 2, { timeoutMs: 20_000 });
    expect(json(await run('locks', '/curator/orders', '--json')).locks[0]?.waiters).toHaveLength(1);
    // A Tenure Mutex queues behind them on the same lock.
    const tenureWait = new Mutex(tenureClient, '/curator/orders', { data: 'tenure-T' }).acquire();
    tenureWait.catch(() => {});
    await curator('write w1 /curator/rw');
    await seen('acquired w1');
    await curator('read r1 /curator/rw');
    await curator('lease s1 /curator/sem 2 slot-1');
    await curator('lease s2 /curator/sem 2 slot-2');
    await childrenUntil(tenureClient, '/curator/orders', (kids) => kids.length === 3, { timeoutMs: 20_000 });
    await childrenUntil(tenureClient, '/curator/rw', (kids) => kids.length === 2, { timeoutMs: 20_000 });

    const { locks } = json(await run('locks', '/curator', '--json'));
    expect(locks.map((l: { path: string; kind: string }) => [l.path, l.kind])).toEqual([
      ['/curator/orders', 'mutex'],
      ['/curator/rw', 'read-write'],
      ['/curator/sem', 'semaphore'],
    ]);
    const orders = locks[0];
    expect(orders.holder).toMatchObject({
      sessionId: holder,
      data: { encoding: 'utf8', value: 'holder-J1' },
      name: expect.stringMatching(/^_c_[0-9a-f-]{36}-lock-0000000000$/),
    });
    expect(orders.holder.fencingToken).toMatch(/^\d+$/);
    expect(orders.heldForMs).toBeGreaterThanOrEqual(0);
    expect(orders.waiters.map((w: { sessionId: string; data: { value: string } }) => [w.sessionId, w.data.value])).toEqual([
      [waiter, 'waiter-J2'],
      [sessionHex(tenureClient.sessionId), 'tenure-T'],
    ]);
    expect(locks[1]).toMatchObject({ holders: [{ kind: 'write' }], waiters: [{ kind: 'read' }] });
    expect(locks[2].holders.map((h: { data: { value: string } }) => h.data.value)).toEqual(['slot-1', 'slot-2']);

    const table = (await run('locks', '/curator/orders')).stdout;
    expect(table).toMatch(new RegExp(`^/curator/orders +mutex +holder +${holder} +\\d+ +\\S+ (ms|s) +holder-J1 +_c_`, 'm'));
    expect(table).toMatch(new RegExp(`^/curator/orders +mutex +waiter 1 +${waiter} +\\d+ +- +waiter-J2 +_c_`, 'm'));
    expect(table).toMatch(/^\/curator\/orders +mutex +waiter 2 +0x[0-9a-f]+ +\d+ +- +tenure-T +_c_/m);

    // The holder lets go: the first waiter holds, as the CLI shows.
    await jvm.ask('release j1', /^released j1$/);
    await seen('acquired j2');
    const after = json(await run('locks', '/curator/orders', '--json')).locks[0];
    expect(after.holder).toMatchObject({ sessionId: waiter, data: { value: 'waiter-J2' } });
    expect(after.waiters.map((w: { data: { value: string } }) => w.data.value)).toEqual(['tenure-T']);
    await jvm.ask('release j2', /^released j2$/);
    await (await tenureWait).release();
    for (const n of ['w1', 'r1', 's1', 's2']) await jvm.ask(`release ${n}`, new RegExp(`^released ${n}$`));
  });

  it('shows the leader and participants of Curator LeaderLatch and LeaderSelector elections', async () => {
    const alpha = await curator('latch alpha /curator/latch');
    const beta = await curator('latch beta /curator/latch');
    const sel1 = await curator('selector sel-1 /curator/selector');
    await seen('leading sel-1');
    const sel2 = await curator('selector sel-2 /curator/selector');
    await childrenUntil(tenureClient, '/curator/selector', (kids) => kids.length === 2, { timeoutMs: 20_000 });

    const { elections } = json(await run('leaders', '/curator', '--json'));
    const latch = elections.find((e: { path: string }) => e.path === '/curator/latch');
    expect(latch).toMatchObject({ kind: 'leader-latch', leader: { id: 'alpha', sessionId: alpha, isLeader: true } });
    expect(latch.participants.map((p: { id: string; sessionId: string; isLeader: boolean }) => [p.id, p.sessionId, p.isLeader])).toEqual([
      ['alpha', alpha, true],
      ['beta', beta, false],
    ]);
    const selector = elections.find((e: { path: string }) => e.path === '/curator/selector');
    expect(selector).toMatchObject({ kind: 'leader-selector', leader: { id: 'sel-1', sessionId: sel1 } });
    expect(selector.participants.map((p: { id: string }) => p.id)).toEqual(['sel-1', 'sel-2']);
    expect(selector.participants[1].sessionId).toBe(sel2);
    expect((await run('leaders', '/curator/latch')).stdout).toMatch(
      new RegExp(`^/curator/latch +leader-latch +leader +alpha +${alpha} +\\d+ +\\S+ (ms|s) +_c_`, 'm'),
    );

    // alpha closes: beta leads, as the CLI shows.
    await jvm.ask('release alpha', /^released alpha$/);
    await childrenUntil(tenureClient, '/curator/latch', (kids) => kids.length === 1, { timeoutMs: 20_000 }); // alpha's node gone
    expect(json(await run('leaders', '/curator/latch', '--json')).elections[0]?.leader?.id).toBe('beta');
    for (const n of ['beta', 'sel-1', 'sel-2']) await jvm.ask(`release ${n}`, new RegExp(`^released ${n}$`));
  });

  it('lists the instances that curator-x-discovery registers', async () => {
    const s1 = await curator('service inst-1 orders 10.0.0.1 8080');
    await curator('service inst-2 orders 10.0.0.2 8081');
    await curator('service inst-3 billing 10.0.0.3 9090');
    const { services } = json(await run('services', '--json'));
    expect(
      services.map((s: { name: string; basePath: string; instances: { id: string }[] }) => [
        s.basePath,
        s.name,
        s.instances.map((i) => i.id),
      ]),
    ).toEqual([
      ['/services', 'billing', ['inst-3']],
      ['/services', 'orders', ['inst-1', 'inst-2']],
    ]);
    expect(services[1].instances[0]).toMatchObject({
      id: 'inst-1',
      address: '10.0.0.1',
      port: 8080,
      sslPort: null,
      serviceType: 'DYNAMIC',
      enabled: true,
      sessionId: s1,
      path: '/services/orders/inst-1',
    });
    expect((await run('services')).stdout).toMatch(
      new RegExp(`^orders +inst-1 +10\\.0\\.0\\.1 +8080 +DYNAMIC +yes +${s1} +/services/orders/inst-1$`, 'm'),
    );
    for (const n of ['inst-1', 'inst-2', 'inst-3']) await jvm.ask(`release ${n}`, new RegExp(`^released ${n}$`));
    expect((await run('services')).stdout).toBe('no services found\n');
  });

  it('lists the members of a Curator GroupMember group', async () => {
    const m1 = await curator('member m1 /curator/group payload-1');
    const m2 = await curator('member m2 /curator/group payload-2');
    const { groups } = json(await run('groups', '/curator', '--json'));
    expect(groups).toEqual([
      {
        path: '/curator/group',
        members: [
          expect.objectContaining({ id: 'm1', sessionId: m1, data: { encoding: 'utf8', value: 'payload-1', bytes: 9 } }),
          expect.objectContaining({ id: 'm2', sessionId: m2 }),
        ],
      },
    ]);
    for (const n of ['m1', 'm2']) await jvm.ask(`release ${n}`, new RegExp(`^released ${n}$`));
  });
});
