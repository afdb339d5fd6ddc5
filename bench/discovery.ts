/**
 * Service discovery: Tenure's @tenure/discovery against Apache Curator's curator-x-discovery
 * (Debian's libcurator-discovery-java 5.4, compiled here from bench/java/CuratorDiscoveryBench.java)
 * on one real ZooKeeper in one run.
 *
 * 1. `provider.getInstance()` calls per second from a warm cache (10 instances, round robin).
 * 2. Registration to appearance in another process's cache: one process registers 200 DYNAMIC
 *    instances one after the other (after 20 for warm-up, 10 ms apart), another process's cache
 *    sees each; p50 / p99 of the time from just before registerService to the cache showing it.
 *    The two processes share a clock (CLOCK_MONOTONIC: Node's process.hrtime, Java's
 *    System.nanoTime); each instance carries its start time as its payload. Tenure against
 *    Tenure, and Curator against Curator.
 *
 *   npx tsx bench/discovery.ts [--seconds 2] [--rounds 5] [--warmup 2] [--registrations 200]
 *
 * Every case runs in fresh processes (a fresh JVM for Curator, a fresh Node for Tenure).
 * @tenure/* are imported from source (the script re-runs itself with a tsconfig that maps them).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { arg, caseRounds, median, perSecond } from './case-rounds.js';
import { rerunFromSource } from './run-from-source.js';

const root = fileURLToPath(new URL('..', import.meta.url));

rerunFromSource(import.meta.url);

const SECONDS = Number(arg('seconds', '2'));
const ROUNDS = Number(arg('rounds', '5'));
const WARMUP = Number(arg('warmup', '2'));
const REGISTRATIONS = Number(arg('registrations', '200'));
const SKIP = 20;
const GAP_MS = 10;
const INSTANCES = 10;
const BASE = '/bench-services';

const monotonicNs = (): bigint => process.hrtime.bigint();

async function registry(connect: string) {
  const { createClient } = await import('@tenure/client');
  const { ServiceDiscovery } = await import('@tenure/discovery');
  const client = createClient({ connectString: connect, sessionTimeoutMs: 30_000 });
  await client.start();
  const discovery = new ServiceDiscovery(client, { basePath: BASE });
  await discovery.start();
  return { client, discovery };
}

/** getInstance() calls/s of each round, from a warm cache. */
async function tenureGetInstance(connect: string): Promise<void> {
  const { client, discovery } = await registry(connect);
  for (let i = 0; i < INSTANCES; i++)
    await discovery.registerService({ name: 'bench-get-t', id: `t${i}`, address: `10.0.0.${i}`, port: 8000 + i });
  const provider = discovery.serviceProvider('bench-get-t');
  await provider.start();
  if (provider.getAllInstances().length !== INSTANCES) throw new Error(`the provider sees ${provider.getAllInstances().length}`);
  let sink = 0;
  const loop = (seconds: number): number => {
    const start = performance.now();
    const end = start + seconds * 1000;
    let calls = 0;
    let now: number;
    do {
      for (let i = 0; i < 1000; i++) sink += provider.getInstance()!.port!;
      calls += 1000;
    } while ((now = performance.now()) < end);
    return calls / ((now - start) / 1000);
  };
  loop(WARMUP);
  const rounds: number[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(loop(SECONDS));
  if (sink === 0) throw new Error('unreachable');
  await discovery.close();
  await client.close();
  process.stdout.write(JSON.stringify(rounds) + '\n');
}

/** A cache of `name`: prints "ready", then the registration→appearance ms of each instance after the warm-up. */
async function tenureWatch(connect: string, name: string, count: number): Promise<void> {
  const { client, discovery } = await registry(connect);
  const cache = discovery.serviceCache<string>(name);
  const seen = new Set<string>();
  const ms: number[] = [];
  const done = new Promise<void>((resolve) => {
    cache.on('change', (set) => {
      const now = monotonicNs();
      for (const i of set) {
        if (seen.has(i.id)) continue;
        seen.add(i.id);
        if (seen.size > SKIP) ms.push(Number(now - BigInt(i.payload!)) / 1e6);
      }
      if (seen.size >= count) resolve();
    });
  });
  await cache.start();
  process.stdout.write('ready\n');
  await done;
  process.stdout.write(JSON.stringify(ms) + '\n');
  await discovery.close();
  await client.close();
}

/** Registers `count` instances one after the other, each carrying its start time; waits for stdin EOF. */
async function tenureRegister(connect: string, name: string, count: number): Promise<void> {
  const { client, discovery } = await registry(connect);
  for (let i = 0; i < count; i++) {
    await discovery.registerService({ name, id: `r${i}`, address: '10.0.0.1', port: 9000, payload: String(monotonicNs()) });
    await new Promise((r) => setTimeout(r, GAP_MS));
  }
  process.stdout.write('[]\n');
  process.stdin.resume();
  await new Promise((r) => process.stdin.once('end', r));
  await discovery.close();
  await client.close();
}

/** Starts a watcher, waits for its "ready", runs the registrar, returns the watcher's latencies. */
async function latencyCase(watcher: [string, string[]], registrar: [string, string[]]): Promise<number[]> {
  const w = spawn(watcher[0], watcher[1], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  const lines = createInterface({ input: w.stdout! });
  let r: ChildProcess | undefined;
  try {
    const result = await new Promise<number[]>((resolve, reject) => {
      w.once('exit', (code) => reject(new Error(`the watcher exited (${code})`)));
      lines.on('line', (line) => {
        if (line === 'ready') {
          r = spawn(registrar[0], registrar[1], { stdio: ['pipe', 'ignore', 'inherit'], env: process.env });
          r.once('exit', (code) => code !== 0 && code !== null && reject(new Error(`the registrar exited (${code})`)));
        } else if (line.startsWith('[')) resolve(JSON.parse(line) as number[]);
      });
    });
    return result;
  } finally {
    r?.stdin?.end();
    if (r && r.exitCode === null) await new Promise((res) => r!.once('exit', res));
    if (w.exitCode === null) await new Promise((res) => w.once('exit', res));
  }
}

const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!;
};

async function main(): Promise<void> {
  const only = arg('case', '');
  const connect = arg('connect', '');
  if (only === 'getinstance') return tenureGetInstance(connect);
  if (only === 'watch') return tenureWatch(connect, arg('name', ''), Number(arg('count', '0')));
  if (only === 'register') return tenureRegister(connect, arg('name', ''), Number(arg('count', '0')));

  const { TestingServer } = await import('@tenure/testing');
  const { compileJava, javaToolchain } = await import('../test/interop/java.js');
  const jars = ['/usr/share/java/curator-x-discovery.jar', '/usr/share/java/curator-recipes.jar', '/usr/share/java/slf4j-simple.jar'];
  const java = javaToolchain(jars);
  if (!java.available) throw new Error(`Curator is needed for this benchmark: ${java.reason}`);
  const self = fileURLToPath(import.meta.url);
  const node = (...a: string[]): [string, string[]] => [process.execPath, [...process.execArgv, self, ...a]];

  process.stderr.write('compiling the Curator benchmark and starting ZooKeeper...\n');
  const [compiled, server] = await Promise.all([
    compileJava([join(root, 'bench/java/CuratorDiscoveryBench.java')], jars),
    // A benchmark server gets the full JIT (TestingServer defaults to a quick-start C1 JVM).
    TestingServer.start({ jvmFlags: ['-XX:TieredStopAtLevel=4', '-Xmx1g'] }),
  ]);
  const jvm = (...a: string[]): [string, string[]] => [
    java.toolchain.java,
    ['-Xmx512m', '-Dorg.slf4j.simpleLogger.defaultLogLevel=error', '-cp', compiled.classpath, 'CuratorDiscoveryBench', ...a],
  ];
  const cs = server.connectString;
  const count = String(REGISTRATIONS + SKIP);
  let get: { tenure: number[]; curator: number[] };
  let lat: { tenure: number[]; curator: number[] };
  try {
    process.stderr.write('getInstance(): Curator...\n');
    const gc = await caseRounds(...jvm('getinstance', cs, BASE, String(INSTANCES), String(SECONDS), String(ROUNDS), String(WARMUP)));
    process.stderr.write('getInstance(): Tenure...\n');
    const gt = await caseRounds(
      ...node(
        '--case',
        'getinstance',
        '--connect',
        cs,
        '--seconds',
        String(SECONDS),
        '--rounds',
        String(ROUNDS),
        '--warmup',
        String(WARMUP),
      ),
    );
    get = { tenure: gt, curator: gc };
    process.stderr.write(`registration to appearance, ${REGISTRATIONS} registrations: Curator...\n`);
    const lc = await latencyCase(
      jvm('watch', cs, BASE, 'lat-curator', count, String(SKIP)),
      jvm('register', cs, BASE, 'lat-curator', count, String(GAP_MS)),
    );
    process.stderr.write(`registration to appearance, ${REGISTRATIONS} registrations: Tenure...\n`);
    const lt = await latencyCase(
      node('--case', 'watch', '--connect', cs, '--name', 'lat-tenure', '--count', count),
      node('--case', 'register', '--connect', cs, '--name', 'lat-tenure', '--count', count),
    );
    lat = { tenure: lt, curator: lc };
  } finally {
    await server.close();
    compiled.dispose();
  }

  const javaVersion = spawnSync(java.toolchain.java, ['-version'], { encoding: 'utf8' }).stderr.split('\n')[0];
  console.log(
    `ZooKeeper 3.8 standalone on loopback (forceSync=no); Curator 5.4.0 on ${javaVersion}; Tenure on node ${process.version}; each case in fresh processes`,
  );
  const ms = (x: number): string => `${x.toFixed(2)} ms`;
  const rows = [
    [
      `getInstance() from a warm cache (${INSTANCES} instances, round robin), median of ${ROUNDS} x ${SECONDS} s`,
      perSecond(median(get.tenure)),
      perSecond(median(get.curator)),
      `${(median(get.tenure) / median(get.curator)).toFixed(2)}x`,
    ],
    [
      `registration -> another process's cache, p50 (${lat.tenure.length} / ${lat.curator.length})`,
      ms(percentile(lat.tenure, 0.5)),
      ms(percentile(lat.curator, 0.5)),
      `${(percentile(lat.tenure, 0.5) / percentile(lat.curator, 0.5)).toFixed(2)}x`,
    ],
    [
      `registration -> another process's cache, p99`,
      ms(percentile(lat.tenure, 0.99)),
      ms(percentile(lat.curator, 0.99)),
      `${(percentile(lat.tenure, 0.99) / percentile(lat.curator, 0.99)).toFixed(2)}x`,
    ],
  ];
  const head = ['case', 'Tenure', 'Curator', 'Tenure/Curator'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(head));
  for (const r of rows) console.log(line(r));
  console.log(
    `  getInstance rounds: Tenure ${get.tenure.map((x) => Math.round(x)).join(', ')}; Curator ${get.curator.map((x) => Math.round(x)).join(', ')}`,
  );
  console.log('  (for latency, lower is better: a ratio below 1 means Tenure is faster)');
}

await main();
