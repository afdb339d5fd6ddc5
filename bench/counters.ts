/**
 * AtomicLong increments per second (succeeded ones): Tenure's AtomicLong against Apache Curator's
 * DistributedAtomicLong (Debian's libcurator-recipes-java, compiled here from
 * bench/java/CuratorCounterBench.java) on one real ZooKeeper in one run, uncontended (1 client)
 * and with 4 contenders (each with its own session, on one counter). Both sides retry conflicts
 * with the same policy, 10 retries 1 ms apart (Curator's RetryNTimes(10, 1)); a last row runs
 * Tenure's default conflictRetryPolicy(). Then Tenure on the embedded server, in-process.
 *
 *   npx tsx bench/counters.ts [--seconds 2] [--rounds 5] [--clients 4] [--warmup 2]
 *
 * Median of `rounds` timed rounds after a warm-up, per case. Every case runs in its own process
 * (a fresh JVM for Curator, a fresh Node for Tenure), so no case inherits another's JIT state or
 * garbage. @tenure/* are imported from source (the script re-runs itself with a tsconfig that maps
 * them), so no build is needed.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg, caseRounds, median, perSecond } from './case-rounds.js';
import { rerunFromSource } from './run-from-source.js';

const root = fileURLToPath(new URL('..', import.meta.url));

rerunFromSource(import.meta.url);

const { createClient } = await import('@tenure/client');
const { RetryPolicies } = await import('@tenure/client');
const { AtomicLong } = await import('@tenure/counters');

const SECONDS = Number(arg('seconds', '2'));
const ROUNDS = Number(arg('rounds', '5'));
const CLIENTS = Number(arg('clients', '4'));
const WARMUP = Number(arg('warmup', '2'));

type Target = 'zookeeper' | 'embedded';

/** One Tenure case in this process: prints the succeeded increments/s of each round as JSON. */
async function tenureCase(target: Target, clients: number, connectString: string, policy: string): Promise<void> {
  const { createEmbeddedServer } = await import('@tenure/server');
  const embedded = target === 'embedded' ? createEmbeddedServer({ tickMs: 2000 }) : undefined;
  const cs = Array.from({ length: clients }, () =>
    createClient(embedded ? { transport: embedded.transport(), sessionTimeoutMs: 30_000 } : { connectString, sessionTimeoutMs: 30_000 }),
  );
  await Promise.all(cs.map((c) => c.start()));
  const path = `/bench/tenure-${clients}-${policy}`;
  const retryPolicy = policy === 'default' ? undefined : RetryPolicies.nTimes(10, 1);
  const longs = cs.map((c) => new AtomicLong(c, path, retryPolicy ? { retryPolicy } : {}));
  const run = async (seconds: number): Promise<number> => {
    let done = 0;
    const start = performance.now();
    const end = start + seconds * 1000;
    await Promise.all(
      longs.map(async (n) => {
        while (performance.now() < end) if ((await n.increment()).succeeded) done++;
      }),
    );
    return done / ((performance.now() - start) / 1000);
  };
  await run(WARMUP);
  const rounds: number[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await run(SECONDS));
  await Promise.all(cs.map((c) => c.close()));
  await embedded?.close();
  process.stdout.write(JSON.stringify(rounds) + '\n');
}

async function main(): Promise<void> {
  const only = arg('case', '');
  if (only) return tenureCase(only as Target, Number(arg('n', '1')), arg('connect', ''), arg('policy', 'same'));

  const { TestingServer } = await import('@tenure/testing');
  const { compileJava, javaToolchain } = await import('../test/interop/java.js');
  const java = javaToolchain();
  if (!java.available) throw new Error(`Curator is needed for this benchmark: ${java.reason}`);
  const self = fileURLToPath(import.meta.url);
  const tenure = (target: Target, n: number, connect = '', policy = 'same'): Promise<number[]> =>
    caseRounds(process.execPath, [
      ...process.execArgv,
      self,
      '--case',
      target,
      '--n',
      String(n),
      '--connect',
      connect,
      '--policy',
      policy,
      '--seconds',
      String(SECONDS),
      '--rounds',
      String(ROUNDS),
      '--warmup',
      String(WARMUP),
    ]);

  process.stderr.write('compiling the Curator benchmark and starting ZooKeeper...\n');
  const [compiled, server] = await Promise.all([
    compileJava([join(root, 'bench/java/CuratorCounterBench.java')]),
    // A benchmark server gets the full JIT (TestingServer defaults to a quick-start C1 JVM).
    TestingServer.start({ jvmFlags: ['-XX:TieredStopAtLevel=4', '-Xmx1g'] }),
  ]);
  const curator = (n: number, path: string): Promise<number[]> =>
    caseRounds(java.toolchain.java, [
      '-Xmx512m',
      '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      '-cp',
      compiled.classpath,
      'CuratorCounterBench',
      server.connectString,
      path,
      String(n),
      String(SECONDS),
      String(ROUNDS),
      String(WARMUP),
    ]);
  const results: Array<{ name: string; tenure: number[]; curator?: number[] }> = [];
  try {
    // Warm ZooKeeper's JIT up before anything is measured.
    process.stderr.write('warming ZooKeeper up...\n');
    await caseRounds(process.execPath, [
      ...process.execArgv,
      self,
      '--case',
      'zookeeper',
      '--n',
      String(CLIENTS),
      '--connect',
      server.connectString,
      '--seconds',
      '1',
      '--rounds',
      '1',
      '--warmup',
      '2',
    ]);
    await curator(CLIENTS, '/bench/warmup');
    for (const n of [1, CLIENTS]) {
      const label = n === 1 ? 'uncontended (1 client)' : `contended (${n} clients)`;
      process.stderr.write(`ZooKeeper, ${label}: Curator...\n`);
      const c = await curator(n, `/bench/curator-${n}`);
      process.stderr.write(`ZooKeeper, ${label}: Tenure...\n`);
      const t = await tenure('zookeeper', n, server.connectString);
      results.push({ name: `ZooKeeper, ${label}`, tenure: t, curator: c });
    }
    process.stderr.write(`ZooKeeper, ${CLIENTS} contenders: Tenure with its default conflict policy...\n`);
    results.push({
      name: `ZooKeeper, contended (${CLIENTS} clients), Tenure default policy`,
      tenure: await tenure('zookeeper', CLIENTS, server.connectString, 'default'),
    });
    for (const n of [1, CLIENTS]) {
      const label = n === 1 ? 'uncontended (1 client)' : `contended (${n} clients)`;
      process.stderr.write(`embedded, ${label}: Tenure...\n`);
      results.push({ name: `embedded in-process, ${label}`, tenure: await tenure('embedded', n) });
    }
  } finally {
    await server.close();
    compiled.dispose();
  }

  const javaVersion = spawnSync(java.toolchain.java, ['-version'], { encoding: 'utf8' }).stderr.split('\n')[0];
  console.log(
    `AtomicLong increments (succeeded) per second, median of ${ROUNDS} x ${SECONDS} s (after ${WARMUP} s warm-up), each case in a fresh process`,
  );
  console.log(
    `ZooKeeper 3.8 standalone on loopback (forceSync=no); Curator 5.4.0 on ${javaVersion}; Tenure on node ${process.version}; ${CLIENTS}-client cases: one session per client`,
  );
  const rows = results.map((r) => {
    const t = median(r.tenure);
    const c = r.curator ? median(r.curator) : undefined;
    return [r.name, perSecond(t), perSecond(c), c ? `${(t / c).toFixed(2)}x` : '-'];
  });
  const head = ['case', 'Tenure', 'Curator', 'Tenure/Curator'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(head));
  for (const r of rows) console.log(line(r));
  for (const r of results)
    console.log(
      `  ${r.name}: Tenure rounds ${r.tenure.map((x) => Math.round(x)).join(', ')}${r.curator ? `; Curator rounds ${r.curator.map((x) => Math.round(x)).join(', ')}` : ''}`,
    );
}

await main();
