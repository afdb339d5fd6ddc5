/**
 * tenure-server against Apache ZooKeeper 3.8, both durable, on the same disk, in the same run:
 * write rates with forceSync=yes and then forceSync=no, the time to restart with 1 million nodes
 * (snapshot plus log), and the memory (RSS) each process holds for them.
 *
 *   npx tsx bench/server-durable.ts [--quick] [--nodes 1000000] [--seconds 2] [--rounds 3]
 *        [--payload 100] [--dir <base dir>] [--restart-sync no|yes] [--no-build]
 *
 * `--quick`: 100,000 nodes, 1 s cases, 2 rounds. A full run takes 8-10 minutes on a shared 2-core
 * machine (the 1M-node fills and restarts take 5-6 of them; the run prints its own duration).
 *
 * - Servers: tenure-server as a child process (the built bin, `packages/tenure-server/bin/tenure-server.js`;
 *   `npx tsc -b packages/tenure-server` runs first so it is the code as it is, unless --no-build), and
 *   Debian's ZooKeeper 3.8 (TestingServer, with the optimising JIT, G1 and -Xmx2g; tenure-server
 *   gets --max-old-space-size=2048). Both data dirs sit under one base dir on the real disk (default
 *   os.tmpdir(); TestingServer's own default is /dev/shm, which would hide the fsyncs), checked
 *   with `df`; both with snapCount 100000 (the default of both) and tickTime 2000.
 * - Load generator: the same for both, Tenure's raw wire transport (@tenure/zookeeper, one TCP
 *   connection, no client-side retry or bookkeeping), so the server is what differs.
 * - Rates: pipelined create (a new node per request) and setData (one node), with 1, 10 and 200
 *   requests in flight, 100-byte payloads. Each case runs on both servers one after the other, in
 *   an order that alternates per round; the table shows the median of the rounds.
 * - Restart: a fresh server of each kind, one after the other (forceSync as --restart-sync, default no: it changes the write path, not
 *   recovery), `nodes` creates under /fill (1000 in flight), RSS read from /proc, SIGKILL, then the
 *   server is started on the same data dir and timed from the spawn to the first request answered
 *   (an exists of /fill that must report every child). tenure-server's `serving` log line is shown
 *   too; ZooKeeper loads its snapshot, replays its log and writes a new snapshot before it serves.
 *   "Empty start" is the same measure on an empty data dir: the process start-up alone.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Connection, Request } from '@tenure/protocol';
import { OPEN_ACL_UNSAFE, OpCode } from '@tenure/protocol';
import { TenureServerProcess, TestingServer } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { arg, median } from './case-rounds.js';
import { javaPidWithArgument, rssKb } from './proc-stats.js';

const QUICK = process.argv.includes('--quick');
const NODES = Number(arg('nodes', QUICK ? '100000' : '1000000'));
const SECONDS = Number(arg('seconds', QUICK ? '1' : '2'));
const ROUNDS = Number(arg('rounds', QUICK ? '2' : '3'));
const PAYLOAD = Number(arg('payload', '100'));
const RESTART_SYNC = arg('restart-sync', 'no');
const BASE = arg('dir', tmpdir());
const ONLY = arg('only', 'all'); // rates | restart | all
const CPU_PROF = arg('cpu-prof', ''); // a dir: V8 CPU profiles of the tenure-server processes (written at exit: a SIGKILLed one writes none)
const IN_FLIGHT = [1, 10, 200] as const;
const FILL_IN_FLIGHT = 1000;
const SNAP_COUNT = 100_000;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'packages/tenure-server/bin/tenure-server.js');
const data = Buffer.alloc(PAYLOAD, 0x61);
const acl = [...OPEN_ACL_UNSAFE];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const mb = (kb: number): string => `${(kb / 1024).toFixed(0)} MB`;
const secs = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const log = (s: string): void => void process.stderr.write(`${s}\n`);

type ServerName = 'tenure' | 'zookeeper';

/** One running server of the pair: how to reach it, its pid, how to crash and restart it. */
interface Durable {
  name: ServerName;
  connectString: string;
  pid(): number;
  /** SIGKILL; the data dir stays. */
  kill(): Promise<void>;
  /** Starts again on the same dir and port; resolves when the process says it serves (ms from the spawn). */
  restart(): Promise<{ serving: Promise<number> }>;
  close(): Promise<void>;
}

async function startTenure(dir: string, forceSync: string, port = 0): Promise<Durable & { servingMs: number }> {
  const args = [
    '--data-dir',
    dir,
    '--force-sync',
    forceSync,
    '--tick-time',
    '2000',
    '--max-client-cnxns',
    '0',
    '--snap-count',
    String(SNAP_COUNT),
    '--log-level',
    'info',
    '--port',
    String(port),
  ];
  const prof = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];
  const spawn = (p: number): TenureServerProcess =>
    TenureServerProcess.spawn({
      command: [process.execPath, '--max-old-space-size=2048', ...prof, BIN],
      args: args.map((a, i) => (args[i - 1] === '--port' ? String(p) : a)),
    });
  const t0 = performance.now();
  let proc = spawn(port);
  await proc.ready(600_000);
  const servingMs = performance.now() - t0;
  const fixedPort = proc.port;
  const self: Durable & { servingMs: number } = {
    name: 'tenure',
    servingMs,
    connectString: proc.connectString,
    pid: () => proc.child.pid!,
    // With --cpu-prof a SIGTERM, so that the profile is written (the close syncs, it takes no snapshot).
    kill: async () => void (CPU_PROF ? await proc.stop() : await proc.kill()),
    async restart() {
      const t = performance.now();
      proc = spawn(fixedPort);
      return { serving: proc.ready(600_000).then(() => performance.now() - t) };
    },
    // SIGTERM, so that a --cpu-prof profile is written.
    close: async () => void (await proc.stop()),
  };
  return self;
}

async function startZooKeeper(dir: string, forceSync: string): Promise<Durable> {
  const zk = await TestingServer.start({
    tickTime: 2000,
    startTimeoutMs: 600_000,
    config: { dataDir: dir, forceSync, snapCount: SNAP_COUNT, globalOutstandingLimit: 1000 },
    // A benchmark server: the optimising JIT and ZooKeeper's usual collector (TestingServer's defaults are C1 and serial GC).
    jvmFlags: ['-Xmx2g', '-XX:TieredStopAtLevel=4', '-XX:-UseSerialGC', '-XX:+UseG1GC'],
  });
  return {
    name: 'zookeeper',
    connectString: zk.connectString,
    pid: () => javaPidWithArgument(join(zk.directory, 'zoo.cfg')),
    kill: () => zk.stop(),
    async restart() {
      const t = performance.now();
      return { serving: zk.restart().then(() => performance.now() - t) };
    },
    close: () => zk.close(),
  };
}

async function connect(connectString: string, timeoutMs = 5000): Promise<Connection> {
  const t = zookeeper(connectString);
  const attempt = t.connect(
    t.hosts[0]!,
    { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 40_000, readOnly: false },
    { onEvent: () => undefined, onClose: () => undefined },
  );
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`no handshake from ${connectString} within ${timeoutMs} ms`)), timeoutMs)),
  );
  try {
    const r = await Promise.race([attempt, timeout]);
    if (r.kind !== 'connected') throw new Error(`${connectString}: session refused`);
    return r.connection;
  } catch (err) {
    void attempt.then(
      (r) => r.kind === 'connected' && r.connection.close(),
      () => undefined,
    );
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

async function must(c: Connection, req: Request): Promise<void> {
  const r = await c.send(req);
  if (r.err !== 0) throw new Error(`${c.server}: op ${req.type} on ${'path' in req ? req.path : ''} failed with ${r.err}`);
}

/** `window` loops each keeping one request in flight for `ms`; ops/s. */
async function pipelined(op: () => Promise<void>, ms: number, window: number): Promise<number> {
  let done = 0;
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: window }, async () => {
      while (performance.now() < end) {
        await op();
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

/** The rate cases on both servers, one forceSync setting: case → server → ops/s (median). */
async function rates(forceSync: string, base: string): Promise<Map<string, Record<ServerName, number>>> {
  log(`\nforceSync=${forceSync}: starting both servers`);
  const servers = [
    await startTenure(join(base, `tenure-${forceSync}`), forceSync),
    await startZooKeeper(join(base, `zk-${forceSync}`), forceSync),
  ];
  const samples = new Map<string, Record<ServerName, number[]>>();
  try {
    const conns = new Map<ServerName, Connection>();
    let seq = 0;
    for (const s of servers) {
      const c = await connect(s.connectString);
      conns.set(s.name, c);
      await must(c, { type: OpCode.create, path: '/rate', data, acl, flags: 0 });
      await must(c, { type: OpCode.create, path: '/rate-d', data, acl, flags: 0 });
    }
    const ops = (c: Connection): Record<string, () => Promise<void>> => ({
      create: () => must(c, { type: OpCode.create, path: `/rate/n${seq++}`, data, acl, flags: 0 }),
      setData: () => must(c, { type: OpCode.setData, path: '/rate-d', data, version: -1 }),
    });
    log('warm-up');
    for (const s of servers)
      for (const op of Object.values(ops(conns.get(s.name)!))) await pipelined(op, Math.min(1000, SECONDS * 500), 200);
    for (let round = 0; round < ROUNDS; round++) {
      for (const opName of ['create', 'setData']) {
        for (const window of IN_FLIGHT) {
          const key = `${opName} ${window} in flight`;
          const order = (round + window) % 2 === 0 ? servers : [...servers].reverse();
          for (const s of order) {
            const r = await pipelined(ops(conns.get(s.name)!)[opName]!, SECONDS * 1000, window);
            const entry = samples.get(key) ?? { tenure: [], zookeeper: [] };
            entry[s.name].push(r);
            samples.set(key, entry);
          }
        }
      }
      log(
        `round ${round + 1}/${ROUNDS}: ${[...samples].map(([k, v]) => `${k}: ${fmt(v.tenure.at(-1)!)} vs ${fmt(v.zookeeper.at(-1)!)}`).join('; ')}`,
      );
    }
    for (const c of conns.values()) c.close();
  } finally {
    for (const s of servers) await s.close();
    rmSync(join(base, `tenure-${forceSync}`), { recursive: true, force: true });
    rmSync(join(base, `zk-${forceSync}`), { recursive: true, force: true });
  }
  return new Map([...samples].map(([k, v]) => [k, { tenure: median(v.tenure), zookeeper: median(v.zookeeper) }]));
}

interface RestartFigures {
  emptyStartMs: number;
  fillPerSec: number;
  /** The slowest create of the fill: snapshots taken on the way show here. */
  maxLatencyMs: number;
  rssAfterFillKb: number;
  servingMs: number | undefined;
  firstRequestMs: number;
  /** Txns after the newest snapshot, replayed from the log. */
  logTxns: number;
  rssAfterRestartKb: number;
  dataDirBytes: number;
}

/** Spawned at t0: polls until an exists of /fill answers with every child; ms since t0. */
async function firstRequest(connectString: string, t0: number, expectChildren: number): Promise<{ ms: number; zxid: bigint }> {
  for (;;) {
    try {
      const c = await connect(connectString, 2000);
      try {
        const r = await c.send({ type: OpCode.exists, path: '/fill', watch: false });
        const ms = performance.now() - t0;
        if (r.err !== 0) throw new Error(`exists /fill failed with ${r.err}`);
        const n = (r.response as { stat: { numChildren: number } }).stat.numChildren;
        if (n !== expectChildren)
          throw new Error(`${connectString}: /fill has ${n} children after the restart, ${expectChildren} were acknowledged`);
        return { ms, zxid: r.zxid };
      } finally {
        c.close();
      }
    } catch (err) {
      if (/children after the restart|failed with/.test(String(err))) throw err;
      await sleep(10);
    }
  }
}

/** The zxid of the newest snapshot in `dir`/version-2. */
function newestSnapshotZxid(dir: string): bigint {
  let max = -1n;
  for (const name of readdirSync(join(dir, 'version-2'))) {
    const m = /^snapshot\.([0-9a-f]+)$/.exec(name);
    if (m && BigInt(`0x${m[1]}`) > max) max = BigInt(`0x${m[1]}`);
  }
  return max;
}

function duBytes(dir: string): number {
  let total = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else total += statSync(p).blocks * 512; // preallocated logs are sparse: count what is on disk
    }
  };
  walk(dir);
  return total;
}

async function restartCase(name: ServerName, base: string): Promise<RestartFigures> {
  const dir = join(base, `${name}-restart`);
  log(`\n${name}: empty start, ${fmt(NODES)} creates, SIGKILL, restart (forceSync=${RESTART_SYNC})`);
  const t0 = performance.now();
  const server = name === 'tenure' ? await startTenure(dir, RESTART_SYNC) : await startZooKeeper(dir, RESTART_SYNC);
  try {
    const c = await connect(server.connectString);
    const emptyStartMs = performance.now() - t0;
    await must(c, { type: OpCode.create, path: '/fill', data, acl, flags: 0 });
    let next = 0;
    let maxLatencyMs = 0;
    const f0 = performance.now();
    await Promise.all(
      Array.from({ length: FILL_IN_FLIGHT }, async () => {
        while (next < NODES) {
          const t = performance.now();
          await must(c, { type: OpCode.create, path: `/fill/n${String(next++).padStart(7, '0')}`, data, acl, flags: 0 });
          maxLatencyMs = Math.max(maxLatencyMs, performance.now() - t);
        }
      }),
    );
    const fillPerSec = NODES / ((performance.now() - f0) / 1000);
    log(`  filled at ${fmt(fillPerSec)} creates/s, slowest create ${fmt(maxLatencyMs)} ms`);
    c.close();
    await sleep(2000);
    const rssAfterFillKb = rssKb(server.pid());
    await server.kill();
    const dataDirBytes = duBytes(dir);
    const snapshotZxid = newestSnapshotZxid(dir);
    const t1 = performance.now();
    const { serving } = await server.restart();
    const [servingMs, first] = await Promise.all([serving, firstRequest(server.connectString, t1, NODES)]);
    const firstRequestMs = first.ms;
    // zxids count txns within an epoch (both servers here stay in epoch 0)
    const logTxns = Number(first.zxid - snapshotZxid);
    await sleep(2000);
    const rssAfterRestartKb = rssKb(server.pid());
    log(
      `  restart: snapshot at ${fmt(Number(snapshotZxid))} txns plus ${fmt(logTxns)} in the log; ${secs(firstRequestMs)} to the first request; RSS ${mb(rssAfterFillKb)} after the fill, ${mb(rssAfterRestartKb)} after the restart`,
    );
    return {
      emptyStartMs,
      fillPerSec,
      maxLatencyMs,
      rssAfterFillKb,
      servingMs: name === 'tenure' ? servingMs : undefined,
      firstRequestMs,
      logTxns,
      rssAfterRestartKb,
      dataDirBytes,
    };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  if (!process.argv.includes('--no-build')) {
    log('building @tenure/tenure-server (npx tsc -b packages/tenure-server) so the bin runs the current sources');
    execFileSync('npx', ['tsc', '-b', 'packages/tenure-server'], { cwd: ROOT, stdio: 'inherit' });
  }
  const base = mkdtempSync(join(BASE, 'tenure-bench-durable-'));
  const df = execFileSync('df', ['-P', base], { encoding: 'utf8' }).trim().split('\n').pop()!.split(/\s+/);
  if (df[0] === 'tmpfs') throw new Error(`${base} is on tmpfs: fsync would cost nothing; pass --dir on a real disk`);
  log(`data dirs under ${base} (${df[0]}, mounted on ${df[5]})`);
  const load0 = loadavg()[0]!;
  try {
    const rateResults = new Map<string, Map<string, Record<ServerName, number>>>();
    if (ONLY !== 'restart') for (const forceSync of ['yes', 'no']) rateResults.set(forceSync, await rates(forceSync, base));
    const restart =
      ONLY === 'rates' ? undefined : { tenure: await restartCase('tenure', base), zookeeper: await restartCase('zookeeper', base) };

    const rows: string[][] = [];
    for (const [forceSync, cases] of rateResults) {
      for (const [key, v] of cases)
        rows.push([`${key} (ops/s)`, forceSync, fmt(v.tenure), fmt(v.zookeeper), `${(v.tenure / v.zookeeper).toFixed(2)}×`]);
    }
    const t = restart?.tenure;
    const z = restart?.zookeeper;
    const r = RESTART_SYNC;
    const n = fmt(NODES);
    if (t && z)
      rows.push(
        [
          `fill: ${n} creates, ${FILL_IN_FLIGHT} in flight (creates/s)`,
          r,
          fmt(t.fillPerSec),
          fmt(z.fillPerSec),
          `${(t.fillPerSec / z.fillPerSec).toFixed(2)}×`,
        ],
        [
          `fill: the slowest create (1000 in flight)`,
          r,
          `${fmt(t.maxLatencyMs)} ms`,
          `${fmt(z.maxLatencyMs)} ms`,
          `${(t.maxLatencyMs / z.maxLatencyMs).toFixed(2)}×`,
        ],
        [
          `restart with ${n} nodes: to the first request`,
          r,
          secs(t.firstRequestMs),
          secs(z.firstRequestMs),
          `${(t.firstRequestMs / z.firstRequestMs).toFixed(2)}×`,
        ],
        [`restart with ${n} nodes: to the serving log line`, r, secs(t.servingMs!), '-', '-'],
        [`restart with ${n} nodes: txns replayed after the snapshot`, r, fmt(t.logTxns), fmt(z.logTxns), '-'],
        [
          'empty start: to the first request',
          r,
          secs(t.emptyStartMs),
          secs(z.emptyStartMs),
          `${(t.emptyStartMs / z.emptyStartMs).toFixed(2)}×`,
        ],
        [
          `RSS with ${n} nodes, after the fill`,
          r,
          mb(t.rssAfterFillKb),
          mb(z.rssAfterFillKb),
          `${(t.rssAfterFillKb / z.rssAfterFillKb).toFixed(2)}×`,
        ],
        [
          `RSS with ${n} nodes, after the restart`,
          r,
          mb(t.rssAfterRestartKb),
          mb(z.rssAfterRestartKb),
          `${(t.rssAfterRestartKb / z.rssAfterRestartKb).toFixed(2)}×`,
        ],
        [
          `disk used with ${n} nodes (snapshots + logs, no purge)`,
          r,
          mb(t.dataDirBytes / 1024),
          mb(z.dataDirBytes / 1024),
          `${(t.dataDirBytes / z.dataDirBytes).toFixed(2)}×`,
        ],
      );
    const header = ['measure', 'forceSync', 'tenure-server', 'ZooKeeper 3.8', 'Tenure / ZooKeeper'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: readonly string[]): string =>
      `| ${cells.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
    console.log(
      `\ntenure-server vs ZooKeeper 3.8, durable on ${df[0]} (node ${process.version}, ${cpus().length} cpus, ${new Date().toISOString()})`,
    );
    console.log(
      `${SECONDS} s per case, median of ${ROUNDS} rounds, ${PAYLOAD}-byte payloads, snapCount ${SNAP_COUNT}; load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}; took ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
    );
    console.log(line(header));
    console.log(`|${widths.map((w, i) => (i >= 2 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`);
    for (const row of rows) console.log(line(row));
    console.log('\nops/s: higher is better; restart times and memory: lower is better (a ratio below 1 favours tenure-server).');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
