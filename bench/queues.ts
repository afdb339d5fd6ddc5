/**
 * DistributedQueue put + take items per second: Tenure's DistributedQueue against Apache Curator's
 * (Debian's libcurator-recipes-java, compiled here from bench/java/CuratorQueueBench.java) on one
 * real ZooKeeper in one run, with 1 producer and 1 consumer, and with 4 and 4 (each with its own
 * session, on one queue). Then Tenure on the embedded server, in-process.
 *
 *   npx tsx bench/queues.ts [--seconds 2] [--rounds 5] [--warmup 2]
 *
 * Each round uses a fresh queue path: consumers start, producers loop put() (each put
 * acknowledged before the next: Curator with putInBackground(false)) for `seconds`, and the rate is
 * the items consumed within that window. Median of `rounds` rounds after a warm-up, every case in
 * its own process (a fresh JVM for Curator, a fresh Node for Tenure). @tenure/* are imported from
 * source (the script re-runs itself with a tsconfig that maps them).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg, caseRounds, median, perSecond } from './case-rounds.js';
import { rerunFromSource } from './run-from-source.js';

const root = fileURLToPath(new URL('..', import.meta.url));

rerunFromSource(import.meta.url);

const { createClient } = await import('@tenure/client');
const { DistributedQueue } = await import('@tenure/queues');

const SECONDS = Number(arg('seconds', '2'));
const ROUNDS = Number(arg('rounds', '5'));
const WARMUP = Number(arg('warmup', '2'));

type Target = 'zookeeper' | 'embedded';

/** One Tenure case in this process: prints the items/s of each round as JSON. */
async function tenureCase(target: Target, pairs: number, connectString: string): Promise<void> {
  const { createEmbeddedServer } = await import('@tenure/server');
  const embedded = target === 'embedded' ? createEmbeddedServer({ tickMs: 2000 }) : undefined;
  const open = () =>
    createClient(embedded ? { transport: embedded.transport(), sessionTimeoutMs: 30_000 } : { connectString, sessionTimeoutMs: 30_000 });
  const producers = Array.from({ length: pairs }, open);
  const consumers = Array.from({ length: pairs }, open);
  await Promise.all([...producers, ...consumers].map((c) => c.start()));
  const item = Buffer.from('item-0123456789');
  const run = async (path: string, seconds: number): Promise<number> => {
    let consumed = 0;
    let windowEnd = Infinity;
    const cqs = consumers.map(
      (c) =>
        new DistributedQueue(c, path, {
          consumer: async () => {
            if (performance.now() <= windowEnd) consumed++;
          },
        }),
    );
    const pqs = producers.map((c) => new DistributedQueue(c, path));
    await Promise.all([...cqs, ...pqs].map((q) => q.start()));
    const start = performance.now();
    windowEnd = start + seconds * 1000;
    await Promise.all(
      pqs.map(async (q) => {
        while (performance.now() < windowEnd) await q.put(item);
      }),
    );
    const left = windowEnd - performance.now();
    if (left > 0) await new Promise((r) => setTimeout(r, left));
    const rate = consumed / seconds;
    await Promise.all([...pqs, ...cqs].map((q) => q.close()));
    return rate;
  };
  await run(`/bench/tenure-${pairs}/warmup`, WARMUP);
  const rounds: number[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await run(`/bench/tenure-${pairs}/round-${i}`, SECONDS));
  await Promise.all([...producers, ...consumers].map((c) => c.close()));
  await embedded?.close();
  process.stdout.write(JSON.stringify(rounds) + '\n');
}

async function main(): Promise<void> {
  const only = arg('case', '');
  if (only) return tenureCase(only as Target, Number(arg('n', '1')), arg('connect', ''));

  const { TestingServer } = await import('@tenure/testing');
  const { compileJava, javaToolchain } = await import('../test/interop/java.js');
  const java = javaToolchain();
  if (!java.available) throw new Error(`Curator is needed for this benchmark: ${java.reason}`);
  const self = fileURLToPath(import.meta.url);
  const tenure = (target: Target, n: number, connect = ''): Promise<number[]> =>
    caseRounds(process.execPath, [
      ...process.execArgv,
      self,
      '--case',
      target,
      '--n',
      String(n),
      '--connect',
      connect,
      '--seconds',
      String(SECONDS),
      '--rounds',
      String(ROUNDS),
      '--warmup',
      String(WARMUP),
    ]);

  process.stderr.write('compiling the Curator benchmark and starting ZooKeeper...\n');
  const [compiled, server] = await Promise.all([
    compileJava([join(root, 'bench/java/CuratorQueueBench.java')]),
    TestingServer.start({ jvmFlags: ['-XX:TieredStopAtLevel=4', '-Xmx1g'] }),
  ]);
  const curator = (n: number, path: string): Promise<number[]> =>
    caseRounds(java.toolchain.java, [
      '-Xmx512m',
      '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      '-cp',
      compiled.classpath,
      'CuratorQueueBench',
      server.connectString,
      path,
      String(n),
      String(n),
      String(SECONDS),
      String(ROUNDS),
      String(WARMUP),
    ]);
  const results: Array<{ name: string; tenure: number[]; curator?: number[] }> = [];
  try {
    process.stderr.write('warming ZooKeeper up...\n');
    await curator(4, '/bench/warmup');
    for (const n of [1, 4]) {
      const label = `${n} producer${n > 1 ? 's' : ''} + ${n} consumer${n > 1 ? 's' : ''}`;
      process.stderr.write(`ZooKeeper, ${label}: Curator...\n`);
      const c = await curator(n, `/bench/curator-${n}`);
      process.stderr.write(`ZooKeeper, ${label}: Tenure...\n`);
      const t = await tenure('zookeeper', n, server.connectString);
      results.push({ name: `ZooKeeper, ${label}`, tenure: t, curator: c });
    }
    for (const n of [1, 4]) {
      process.stderr.write(`embedded, ${n} + ${n}: Tenure...\n`);
      results.push({ name: `embedded in-process, ${n} + ${n}`, tenure: await tenure('embedded', n) });
    }
  } finally {
    await server.close();
    compiled.dispose();
  }

  const javaVersion = spawnSync(java.toolchain.java, ['-version'], { encoding: 'utf8' }).stderr.split('\n')[0];
  console.log(
    `DistributedQueue put + take items per second, median of ${ROUNDS} x ${SECONDS} s (after ${WARMUP} s warm-up), each case in a fresh process`,
  );
  console.log(
    `ZooKeeper 3.8 standalone on loopback (forceSync=no); Curator 5.4.0 on ${javaVersion}; Tenure on node ${process.version}; one session per producer and per consumer`,
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
