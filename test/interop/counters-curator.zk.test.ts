/**
 * Tenure's counters and Apache Curator's (Debian's libcurator-recipes-java 5.4, compiled here from
 * test/interop/counters-java/CuratorCounterWorker.java) on one real ZooKeeper 3.8, on one node:
 * one byte format, one version protocol. Tenure workers run as their own processes
 * (packages/counters/test/fixtures/tenure-counter-worker.ts), as Java's do.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FaultProxy, TestingServer, expireSession, realZooKeeper } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { AtomicLong, OutcomeUnknownError, SharedCount } from '@tenure/counters';
import { Clients, sleep } from '../../packages/counters/test/harness.js';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

const zk = realZooKeeper();
const java = javaToolchain();
const SOURCE = fileURLToPath(new URL('./counters-java/CuratorCounterWorker.java', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../packages/counters/test/fixtures/', import.meta.url));

/** Runs a Tenure worker process to its end; resolves with its "done ..." line's numbers. */
function tenureWorker(connectString: string, command: string, path: string, n: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', `${FIXTURES}tenure-counter-worker.ts`, connectString, command, path, String(n)],
      {
        cwd: FIXTURES,
        env: { ...process.env, TSX_TSCONFIG_PATH: `${FIXTURES}tsconfig.json` },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out
        .trim()
        .split('\n')
        .find((l) => l.startsWith('done '));
      if (code !== 0 || line === undefined) reject(new Error(`tenure worker exited ${code}:\n${out}\n${err}`));
      else resolve(line.split(' ').slice(1).map(Number));
    });
  });
}

describe.skipIf(!zk.available || !java.available)('Curator counters interop on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let compiled: CompiledJava;
  let jvms: JavaProgram[];
  let clients: Clients;
  let proxy: FaultProxy | undefined;

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava([SOURCE]), TestingServer.start()]);
    const start = (): Promise<JavaProgram> =>
      JavaProgram.start(
        { classpath: compiled.classpath, mainClass: 'CuratorCounterWorker', args: [server.connectString] },
        /^ready$/,
        60_000,
      );
    jvms = await Promise.all([start(), start()]);
    clients = new Clients(() => server.transport());
  });
  afterEach(async () => {
    proxy?.heal();
    await clients.closeAll();
    await proxy?.close();
    proxy = undefined;
  });
  afterAll(async () => {
    await Promise.all((jvms ?? []).map((j) => j.stop()));
    await server?.close();
    compiled?.dispose();
  });

  it('each reads what the other wrote: SharedCount (4 bytes) and DistributedAtomicLong (8 bytes)', async () => {
    const c = await clients.open();
    await using count = new SharedCount(c, '/interop/read/count', 0);
    await count.start();
    await count.setCount(-2);
    expect(await jvms[0]!.ask('getcount /interop/read/count', /^count /)).toBe('count -2');
    await using long = new AtomicLong(c, '/interop/read/long');
    await long.forceSet(2n ** 40n + 258n);
    expect(await jvms[0]!.ask('getlong /interop/read/long', /^long /)).toBe(`long ${2n ** 40n + 258n}`);
    await jvms[0]!.ask('increment /interop/read/long 1', /^done 1$/);
    expect((await long.get()).preValue).toBe(2n ** 40n + 259n);
  });

  it('2 Curator and 2 Tenure processes x 100 successful trySetCount(count + 1) loops on one SharedCount end at exactly 400', async () => {
    const path = '/interop/sharedcount';
    const results = await Promise.all([
      ...jvms.map((j) => j.ask(`sharedcount ${path} 100`, /^done /, 90_000)),
      tenureWorker(server.connectString, 'sharedcount', path, 100),
      tenureWorker(server.connectString, 'sharedcount', path, 100),
    ]);
    const c = await clients.open();
    expect((await c.getData(path)).data).toEqual(Buffer.from([0, 0, 1, 0x90])); // 400
    expect(await jvms[0]!.ask(`getcount ${path}`, /^count /)).toBe('count 400');
    // They did contend: somebody's trySetCount was refused along the way.
    const refused = results.map((r) => (typeof r === 'string' ? Number(r.split(' ')[1]) : r[0]!));
    expect(refused.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });

  it('2 Curator and 2 Tenure processes x 100 DistributedAtomicLong increments end at exactly the number that succeeded', async () => {
    const path = '/interop/atomiclong';
    const [j1, j2, t1, t2] = await Promise.all([
      ...jvms.map((j) => j.ask(`increment ${path} 100`, /^done /, 90_000)),
      tenureWorker(server.connectString, 'increment', path, 100),
      tenureWorker(server.connectString, 'increment', path, 100),
    ]);
    const succeeded =
      Number((j1 as string).split(' ')[1]) + Number((j2 as string).split(' ')[1]) + (t1 as number[])[0]! + (t2 as number[])[0]!;
    expect((t1 as number[])[1]! + (t2 as number[])[1]!).toBe(0); // no faults, nothing unknown
    const c = await clients.open();
    await using long = new AtomicLong(c, path);
    expect((await long.get()).preValue).toBe(BigInt(succeeded));
    expect(succeeded).toBeGreaterThan(300);
  });

  it('under injected connection loss (FaultProxy resets, expireSession) no increment is lost or doubled: final = succeeded + at most unknown', async () => {
    const path = '/interop/faults';
    proxy = await FaultProxy.start(server.connectString);
    const tenure = await clients.openMany(3, {
      transport: zookeeper(proxy.connectString),
      sessionTimeoutMs: 4000,
      connectionTimeoutMs: 4000,
    });
    let succeeded = 0;
    let unknown = 0;
    let failed = 0;
    let stop = false;
    const workers = tenure.map(async (c) => {
      const long = new AtomicLong(c, path);
      try {
        for (let i = 0; i < 150; i++) {
          try {
            const r = await long.increment();
            if (r.succeeded) succeeded++;
            else failed++;
          } catch (err) {
            if (err instanceof OutcomeUnknownError) unknown++;
            else await sleep(20); // the read or the create failed before anything was written
          }
        }
      } finally {
        await long.close();
      }
    });
    const chaos = (async () => {
      for (let round = 0; !stop; round++) {
        await sleep(40 + Math.floor(Math.random() * 60));
        if (stop) break;
        if (round % 7 === 6) {
          const victim = tenure[round % tenure.length]!;
          if (victim.sessionId !== 0n) await expireSession(victim, server).catch(() => {});
        } else proxy!.reset();
      }
    })();
    // Curator's increments go straight to the server, unfaulted: they are counted exactly.
    const javaDone = jvms.map((j) => j.ask(`increment ${path} 100`, /^done /, 120_000));
    await Promise.all(workers);
    stop = true;
    await chaos;
    const javaSucceeded = (await Promise.all(javaDone)).reduce((a, l) => a + Number(l.split(' ')[1]), 0);
    const c = await clients.open();
    await using long = new AtomicLong(c, path);
    const final = Number((await long.get()).preValue);
    const known = succeeded + javaSucceeded;
    console.log(
      `faults: tenure succeeded ${succeeded}, unknown ${unknown}, failed ${failed}; curator succeeded ${javaSucceeded}; final ${final}`,
    );
    expect(final).toBeGreaterThanOrEqual(known);
    expect(final).toBeLessThanOrEqual(known + unknown);
    expect(unknown + succeeded).toBeGreaterThan(0);
  });
});
