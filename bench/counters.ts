/**
 * AtomicLong increments per second (succeeded ones): Tenure's AtomicLong against Apache Curator's
 * DistributedAtomicLong (Debian's libcurator-recipes-java, compiled here from
 * bench/java/CuratorCounterBench.java) on one real ZooKeeper in one run, uncontended (1 client)
 * and with 4 contenders (each with its own session, on one counter; Curator's are 4 threads,
 * Tenure's 4 clients in one process). Both sides retry conflicts with the same policy, 10 retries
 * 1 ms apart (Curator's RetryNTimes(10, 1)); the contended row adds Tenure's default
 * conflictRetryPolicy() (and `--policies same,default,jitter<k>,dephase,first0` more), and 4
 * Tenure processes of one client each. Then Tenure on the embedded server, in-process.
 *
 *   npx tsx bench/counters.ts [--seconds 2] [--rounds 5] [--clients 4] [--warmup 2]
 *     [--before <dir>] [--contended-only 1] [--no-processes 1]
 *
 * Rounds are interleaved: round r runs every column once, in a rotated order, each in a fresh
 * process (a fresh JVM for Curator, a fresh Node for Tenure) after a warm-up; the median is shown.
 * `--before <dir>`: a checkout of the code before a change (e.g. `git archive <commit> | tar -x`,
 * node_modules linked), whose Tenure case runs as one more column. requests/inc: the requests
 * ZooKeeper received (mntr's zk_packets_received) over the counter's gain, per process; Tenure's
 * cases also count theirs on `tenure:client:request` during the warm-up (not the timed rounds).
 * @tenure/* are imported from source (the script re-runs itself with a tsconfig that maps them).
 */
import { spawn, spawnSync } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg, caseRounds, median, perSecond } from './case-rounds.js';
import { rerunFromSource } from './run-from-source.js';

const root = fileURLToPath(new URL('..', import.meta.url));

rerunFromSource(import.meta.url);

const { createClient } = await import('@tenure/client');
const { RetryPolicies } = await import('@tenure/client');
const { AtomicLong, conflictRetryPolicy } = await import('@tenure/counters');

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
  // 'same': Curator's RetryNTimes(10, 1); 'default': conflictRetryPolicy(); 'jitter<k>': conflictRetryPolicy(10, k).
  const jitter = /^jitter(\d+)$/.exec(policy);
  const retryPolicy =
    policy === 'default'
      ? undefined
      : jitter
        ? conflictRetryPolicy(10, Number(jitter[1]))
        : policy === 'dephase'
          ? { allowRetry: (c: number) => (c < 10 ? 1 + Math.round(Math.random()) : false) }
          : policy === 'first0'
            ? { allowRetry: (c: number) => (c < 10 ? (c === 0 ? 0 : 1) : false) }
            : RetryPolicies.nTimes(10, 1);
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
  // The warm-up counts this process's requests on `tenure:client:request` (not the timed rounds: tracing costs).
  const traced: Record<string, number> = {};
  const count = { start: (m: { op: string }): void => void (traced[m.op] = (traced[m.op] ?? 0) + 1) };
  const channel = diagnostics.tracingChannel<unknown, { op: string }>('tenure:client:request');
  channel.subscribe(count as never);
  let increments = 0;
  const counting = longs.map((n) => ({
    increment: async () => {
      const r = await n.increment();
      if (r.succeeded) increments++;
      return r;
    },
  }));
  const warm = longs.splice(0, longs.length, ...(counting as never[]));
  await run(WARMUP);
  longs.splice(0, longs.length, ...warm);
  channel.unsubscribe(count as never);
  traced.perIncrement = Number((Object.values(traced).reduce((a, b) => a + b, 0) / increments).toFixed(2));
  process.stdout.write(`traced ${JSON.stringify(traced)}\n`);
  const rounds: number[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await run(SECONDS));
  await Promise.all(cs.map((c) => c.close()));
  await embedded?.close();
  process.stdout.write(JSON.stringify(rounds) + '\n');
}

/** A case's rounds, and what the server and the counter saw while it ran. */
interface Measured {
  rounds: number[];
  /** Requests ZooKeeper received (mntr's zk_packets_received, pings and session set-up included). */
  packets: number;
  /** Succeeded increments, from the counter's value. */
  increments: number;
  /** Tenure's own count from `tenure:client:request` during the warm-up, by operation. */
  traced?: Record<string, number>;
}

async function main(): Promise<void> {
  const only = arg('case', '');
  if (only) return tenureCase(only as Target, Number(arg('n', '1')), arg('connect', ''), arg('policy', 'same'));

  const { TestingServer } = await import('@tenure/testing');
  const { compileJava, javaToolchain } = await import('../test/interop/java.js');
  const java = javaToolchain();
  if (!java.available) throw new Error(`Curator is needed for this benchmark: ${java.reason}`);
  const self = fileURLToPath(import.meta.url);
  // --before <dir>: a checkout of the code before a change; its Tenure case runs as one more column.
  const before = arg('before', '');
  const caseArgs = (
    script: string,
    target: Target,
    n: number,
    connect: string,
    policy: string,
    rounds: number,
    seconds = SECONDS,
    warmup = WARMUP,
  ): string[] => [
    ...process.execArgv,
    script,
    '--case',
    target,
    '--n',
    String(n),
    '--connect',
    connect,
    '--policy',
    policy,
    '--seconds',
    String(seconds),
    '--rounds',
    String(rounds),
    '--warmup',
    String(warmup),
  ];

  process.stderr.write('compiling the Curator benchmark and starting ZooKeeper...\n');
  const [compiled, server] = await Promise.all([
    compileJava([join(root, 'bench/java/CuratorCounterBench.java')]),
    // A benchmark server gets the full JIT (TestingServer defaults to a quick-start C1 JVM).
    TestingServer.start({ jvmFlags: ['-XX:TieredStopAtLevel=4', '-Xmx1g'] }),
  ]);
  const reader = createClient({ connectString: server.connectString });
  await reader.start();
  const packets = async (): Promise<number> => {
    const m = /zk_packets_received\s+(\d+)/.exec(await server.fourLetterWord('mntr'));
    return Number(m?.[1] ?? NaN);
  };
  const counterValue = async (path: string): Promise<number> => {
    const data = await reader.getData(path).then(
      (r) => r.data,
      () => Buffer.alloc(0),
    );
    return data.length >= 8 ? Number(data.readBigInt64BE(0)) : 0;
  };
  /** Runs `spawnCase` and measures the server's requests and the counter's increments around it. */
  const measured = async (
    path: string,
    spawnCase: () => Promise<{ rounds: number[]; traced?: Record<string, number> }>,
  ): Promise<Measured> => {
    const [p0, v0] = [await packets(), await counterValue(path)];
    const r = await spawnCase();
    const [p1, v1] = [await packets(), await counterValue(path)];
    return { ...r, packets: p1 - p0, increments: v1 - v0 };
  };
  const tenure = (n: number, policy = 'same', script = self): Promise<Measured> =>
    measured(`/bench/tenure-${n}-${policy}`, () => tenureRounds(caseArgs(script, 'zookeeper', n, server.connectString, policy, 1)));
  /** `n` processes of one client each, on one counter (their rounds summed). */
  const tenureProcesses = (n: number): Promise<Measured> =>
    measured('/bench/tenure-1-same', async () => {
      const each = await Promise.all(
        Array.from({ length: n }, () => tenureRounds(caseArgs(self, 'zookeeper', 1, server.connectString, 'same', 1))),
      );
      return { rounds: each[0]!.rounds.map((_, i) => each.reduce((sum, e) => sum + e.rounds[i]!, 0)) };
    });
  const curator = (n: number): Promise<Measured> =>
    measured(`/bench/curator-${n}`, async () => ({
      rounds: await caseRounds(java.toolchain.java, [
        '-Xmx512m',
        '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
        '-cp',
        compiled.classpath,
        'CuratorCounterBench',
        server.connectString,
        `/bench/curator-${n}`,
        String(n),
        String(SECONDS),
        '1',
        String(WARMUP),
      ]),
    }));

  type Column = { name: string; run: (n: number) => Promise<Measured> };
  const columns: Column[] = [
    { name: 'Curator', run: curator },
    { name: 'Tenure', run: (n) => tenure(n) },
    ...(before ? [{ name: 'Tenure before', run: (n: number) => tenure(n, 'same', join(before, 'bench/counters.ts')) }] : []),
  ];
  const results: Array<{ name: string; cells: Map<string, Measured[]> }> = [];
  try {
    process.stderr.write('warming ZooKeeper up...\n');
    await tenureRounds(caseArgs(self, 'zookeeper', CLIENTS, server.connectString, 'same', 1, 1, 2));
    await curator(CLIENTS);
    for (const n of arg('contended-only', '') ? [CLIENTS] : [1, CLIENTS]) {
      const label = n === 1 ? 'uncontended (1 client)' : `contended (${n} clients)`;
      const cells = new Map<string, Measured[]>();
      const row: Column[] = [
        ...columns,
        ...(n > 1
          ? [
              { name: 'Tenure default policy', run: (k: number) => tenure(k, 'default') },
              ...arg('policies', '')
                .split(',')
                .filter(Boolean)
                .map((p) => ({ name: `Tenure ${p}`, run: (k: number) => tenure(k, p) })),
              ...(arg('no-processes', '') ? [] : [{ name: `Tenure ${n} processes`, run: tenureProcesses }]),
            ]
          : []),
      ];
      // Interleaved: round r runs every column once, each round in a rotated order.
      for (let r = 0; r < ROUNDS; r++) {
        for (let k = 0; k < row.length; k++) {
          const col = row[(k + r) % row.length]!;
          process.stderr.write(`ZooKeeper, ${label}, round ${r + 1}/${ROUNDS}: ${col.name}...\n`);
          const m = await col.run(n);
          cells.set(col.name, [...(cells.get(col.name) ?? []), m]);
        }
      }
      results.push({ name: `ZooKeeper, ${label}`, cells });
    }
  } finally {
    await reader.close();
    await server.close();
    compiled.dispose();
  }
  const embedded: Array<{ name: string; rounds: number[] }> = [];
  for (const n of [1, CLIENTS]) {
    const label = n === 1 ? 'uncontended (1 client)' : `contended (${n} clients)`;
    process.stderr.write(`embedded, ${label}: Tenure...\n`);
    embedded.push({
      name: `embedded in-process, ${label}`,
      rounds: (await tenureRounds(caseArgs(self, 'embedded', n, '', 'same', ROUNDS))).rounds,
    });
  }

  const javaVersion = spawnSync(java.toolchain.java, ['-version'], { encoding: 'utf8' }).stderr.split('\n')[0];
  console.log(
    `AtomicLong increments (succeeded) per second: median of ${ROUNDS} interleaved rounds of ${SECONDS} s (each after ${WARMUP} s of warm-up in a fresh process)`,
  );
  console.log(
    `ZooKeeper 3.8 standalone on loopback (forceSync=no); Curator 5.4.0 on ${javaVersion}; Tenure on node ${process.version}; ${CLIENTS}-client cases: one session per client`,
  );
  console.log(
    'requests/inc: requests ZooKeeper received (mntr zk_packets_received) per succeeded increment, whole process (warm-up included)',
  );
  const rows: string[][] = [];
  for (const r of results) {
    const curatorMedian = median(r.cells.get('Curator')!.map((m) => m.rounds[0]!));
    for (const [name, ms] of r.cells) {
      const t = median(ms.map((m) => m.rounds[0]!));
      const perInc = median(ms.map((m) => m.packets / m.increments));
      rows.push([`${r.name}: ${name}`, perSecond(t), `${(t / curatorMedian).toFixed(2)}x`, perInc.toFixed(2)]);
    }
  }
  for (const e of embedded) rows.push([e.name, perSecond(median(e.rounds)), '-', '-']);
  const head = ['case', 'ops/s', 'x Curator', 'requests/inc'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(head));
  for (const r of rows) console.log(line(r));
  for (const r of results)
    for (const [name, ms] of r.cells) {
      const traced = ms.find((m) => m.traced)?.traced;
      console.log(
        `  ${r.name}: ${name} rounds ${ms.map((m) => Math.round(m.rounds[0]!)).join(', ')}${traced ? `; traced in warm-up ${JSON.stringify(traced)}` : ''}`,
      );
    }
  for (const e of embedded) console.log(`  ${e.name}: rounds ${e.rounds.map((x) => Math.round(x)).join(', ')}`);
}

/** Runs a Tenure case; its last stdout line is the rounds, an earlier `traced {...}` line its request counts. */
function tenureRounds(args: readonly string[]): Promise<{ rounds: number[]; traced?: Record<string, number> }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (b: Buffer) => (out += b.toString()));
    p.stderr.on('data', (b: Buffer) => (err += b.toString()));
    p.once('error', reject);
    p.once('exit', (code) => {
      const lines = out.trim().split('\n');
      const last = lines.pop() ?? '';
      if (code !== 0 || !last.startsWith('[')) return reject(new Error(`tenure case ${args.join(' ')} failed (${code}):\n${err}\n${out}`));
      const tracedLine = lines.find((l) => l.startsWith('traced '));
      resolve({
        rounds: JSON.parse(last) as number[],
        ...(tracedLine ? { traced: JSON.parse(tracedLine.slice(7)) as Record<string, number> } : {}),
      });
    });
  });
}

await main();
