/**
 * How long a cache takes to see a change: from just before a writer (its own session) sends
 * setData until the cache emits `changed` with the new data, over 1,000 sequential changes spread
 * over the nodes of a small tree. p50 and p99.
 *
 * Tenure's TreeCache (persistent recursive watch, and the one-shot fallback) against Apache
 * Curator's CuratorCache (Debian's libcurator-recipes-java; the Java program is embedded below and
 * compiled at run time) on one real ZooKeeper 3.8 in one run; then Tenure on the embedded server.
 *
 *   npx tsx bench/cache.ts [--changes 1000] [--nodes 100] [--warmup 200]
 *
 * Each case runs in its own process (a fresh JVM for Curator, a fresh Node for Tenure). @tenure/*
 * are imported from source (the script re-runs itself with a tsconfig that maps them).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rerunFromSource } from './run-from-source.js';

rerunFromSource(import.meta.url);

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const CHANGES = Number(arg('changes', '1000'));
const NODES = Number(arg('nodes', '100'));
const WARMUP = Number(arg('warmup', '200'));

/** Latencies in ms, sorted → [p50, p99, mean]. */
function summary(ms: number[]): [number, number, number] {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return [at(0.5), at(0.99), s.reduce((a, b) => a + b, 0) / s.length];
}

type Case = 'zookeeper-persistent' | 'zookeeper-one-shot' | 'embedded-persistent' | 'embedded-one-shot';

/** One Tenure case in this process: prints [p50, p99, mean] in ms as JSON. */
async function tenureCase(which: Case, connectString: string): Promise<void> {
  const { createClient } = await import('@tenure/client');
  const { TreeCache } = await import('@tenure/cache');
  const { createEmbeddedServer } = await import('@tenure/server');
  const embedded = which.startsWith('embedded') ? createEmbeddedServer({ tickMs: 2000 }) : undefined;
  const open = () =>
    createClient(embedded ? { transport: embedded.transport(), sessionTimeoutMs: 30_000 } : { connectString, sessionTimeoutMs: 30_000 });
  const writer = open();
  const reader = open();
  await Promise.all([writer.start(), reader.start()]);
  const base = `/bench-cache/tenure-${which}`;
  await writer.create(base, null, { createParents: true });
  await Promise.all(Array.from({ length: NODES }, (_, i) => writer.create(`${base}/n${i}`, '0')));
  const cache = new TreeCache(reader, base, { persistentWatches: which.endsWith('persistent') });
  await cache.start({ timeoutMs: 30_000 });
  let expected = '';
  let seen: (() => void) | null = null;
  cache.on('changed', (node) => {
    if (seen && node.data.toString() === expected) seen();
  });
  const latencies: number[] = [];
  for (let k = 0; k < WARMUP + CHANGES; k++) {
    expected = `v${k}`;
    const arrived = new Promise<void>((resolve) => (seen = resolve));
    const t0 = performance.now();
    await writer.setData(`${base}/n${k % NODES}`, expected);
    await arrived;
    if (k >= WARMUP) latencies.push(performance.now() - t0);
  }
  await cache.close();
  await writer.delete(base, { deletingChildren: true });
  await Promise.all([writer.close(), reader.close()]);
  await embedded?.close();
  process.stdout.write(JSON.stringify(summary(latencies)) + '\n');
}

const CURATOR_SOURCE = `
import java.util.Arrays;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CountDownLatch;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.retry.ExponentialBackoffRetry;

// Curator's CuratorCache: change-to-cache latency. Args: connect base nodes changes warmup.
public class CuratorCacheBench {
  static volatile String expected = "";
  public static void main(String[] a) throws Exception {
    String connect = a[0], base = a[1];
    int nodes = Integer.parseInt(a[2]), changes = Integer.parseInt(a[3]), warmup = Integer.parseInt(a[4]);
    CuratorFramework writer = CuratorFrameworkFactory.newClient(connect, 30000, 10000, new ExponentialBackoffRetry(100, 3));
    CuratorFramework reader = CuratorFrameworkFactory.newClient(connect, 30000, 10000, new ExponentialBackoffRetry(100, 3));
    writer.start(); reader.start();
    writer.blockUntilConnected(20, TimeUnit.SECONDS); reader.blockUntilConnected(20, TimeUnit.SECONDS);
    for (int i = 0; i < nodes; i++) writer.create().orSetData().creatingParentsIfNeeded().forPath(base + "/n" + i, "0".getBytes());
    CuratorCache cache = CuratorCache.build(reader, base);
    CountDownLatch init = new CountDownLatch(1);
    Semaphore seen = new Semaphore(0);
    cache.listenable().addListener(CuratorCacheListener.builder()
      .forInitialized(init::countDown)
      .forChanges((before, after) -> { if (expected.equals(new String(after.getData()))) seen.release(); })
      .build());
    cache.start();
    if (!init.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("cache not initialized");
    double[] ms = new double[changes];
    for (int k = 0; k < warmup + changes; k++) {
      expected = "v" + k;
      long t0 = System.nanoTime();
      writer.setData().forPath(base + "/n" + (k % nodes), expected.getBytes());
      if (!seen.tryAcquire(10, TimeUnit.SECONDS)) throw new IllegalStateException("change not seen");
      if (k >= warmup) ms[k - warmup] = (System.nanoTime() - t0) / 1e6;
    }
    Arrays.sort(ms);
    double mean = 0; for (double x : ms) mean += x; mean /= ms.length;
    System.out.println("[" + ms[Math.min(ms.length - 1, (int) (0.5 * ms.length))] + "," + ms[Math.min(ms.length - 1, (int) (0.99 * ms.length))] + "," + mean + "]");
    cache.close();
    writer.delete().deletingChildrenIfNeeded().forPath(base);
    writer.close(); reader.close();
    System.exit(0);
  }
}
`;

/** Runs a command; returns its last stdout line parsed as JSON. */
function run(cmd: string, args: readonly string[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (b: Buffer) => (out += b.toString()));
    p.stderr.on('data', (b: Buffer) => (err += b.toString()));
    p.once('error', reject);
    p.once('exit', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('[')) return reject(new Error(`${cmd} ${args.join(' ')} failed (${code}):\n${err}\n${out}`));
      resolve(JSON.parse(last) as number[]);
    });
  });
}

async function main(): Promise<void> {
  const only = arg('case', '');
  if (only) return tenureCase(only as Case, arg('connect', ''));

  const { TestingServer } = await import('@tenure/testing');
  const { compileJava, javaToolchain } = await import('../test/interop/java.js');
  const java = javaToolchain();
  if (!java.available) throw new Error(`Curator is needed for this benchmark: ${java.reason}`);
  const self = fileURLToPath(import.meta.url);
  const flags = ['--changes', String(CHANGES), '--nodes', String(NODES), '--warmup', String(WARMUP)];
  const tenure = (which: Case, connect = ''): Promise<number[]> =>
    run(process.execPath, [...process.execArgv, self, '--case', which, '--connect', connect, ...flags]);

  process.stderr.write('compiling the Curator benchmark and starting ZooKeeper...\n');
  const srcDir = mkdtempSync(join(tmpdir(), 'tenure-cache-bench-'));
  const source = join(srcDir, 'CuratorCacheBench.java');
  writeFileSync(source, CURATOR_SOURCE);
  const [compiled, server] = await Promise.all([
    compileJava([source]),
    TestingServer.start({ jvmFlags: ['-XX:TieredStopAtLevel=4', '-Xmx1g'] }),
  ]);
  const curator = (): Promise<number[]> =>
    run(java.toolchain.java, [
      '-Xmx512m',
      '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      '-cp',
      compiled.classpath,
      'CuratorCacheBench',
      server.connectString,
      '/bench-cache/curator',
      String(NODES),
      String(CHANGES),
      String(WARMUP),
    ]);
  const rows: Array<{ name: string; tenure: number[]; curator?: number[] }> = [];
  try {
    process.stderr.write('warming ZooKeeper up...\n');
    await tenure('zookeeper-persistent', server.connectString);
    process.stderr.write('ZooKeeper: Curator CuratorCache...\n');
    const c = await curator();
    process.stderr.write('ZooKeeper: Tenure TreeCache (persistent watch)...\n');
    rows.push({
      name: 'ZooKeeper 3.8, persistent recursive watch',
      tenure: await tenure('zookeeper-persistent', server.connectString),
      curator: c,
    });
    process.stderr.write('ZooKeeper: Tenure TreeCache (one-shot watches)...\n');
    rows.push({ name: 'ZooKeeper 3.8, one-shot watches (3.5 fallback)', tenure: await tenure('zookeeper-one-shot', server.connectString) });
    process.stderr.write('embedded: Tenure TreeCache...\n');
    rows.push({ name: 'embedded in-process, persistent recursive watch', tenure: await tenure('embedded-persistent') });
    rows.push({ name: 'embedded in-process, one-shot watches', tenure: await tenure('embedded-one-shot') });
  } finally {
    await server.close();
    compiled.dispose();
    rmSync(srcDir, { recursive: true, force: true });
  }

  const javaVersion = spawnSync(java.toolchain.java, ['-version'], { encoding: 'utf8' }).stderr.split('\n')[0];
  console.log(
    `Change-to-cache latency (setData sent → cache emits the change), ${CHANGES} sequential changes over ${NODES} nodes after ${WARMUP} warm-up, each case in a fresh process`,
  );
  console.log(
    `ZooKeeper 3.8 standalone on loopback (forceSync=no); Curator 5.4.0 CuratorCache on ${javaVersion}; Tenure on node ${process.version}`,
  );
  const f = (x: number | undefined): string => (x === undefined ? '-' : `${x.toFixed(3)} ms`);
  const table = rows.map((r) => [
    r.name,
    f(r.tenure[0]),
    f(r.tenure[1]),
    f(r.curator?.[0]),
    f(r.curator?.[1]),
    r.curator ? `${(r.tenure[0]! / r.curator[0]!).toFixed(2)}x / ${(r.tenure[1]! / r.curator[1]!).toFixed(2)}x` : '-',
  ]);
  const head = ['case', 'Tenure p50', 'Tenure p99', 'Curator p50', 'Curator p99', 'Tenure/Curator p50 / p99'];
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(head));
  for (const r of table) console.log(line(r));
}

await main();
