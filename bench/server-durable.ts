/**
 * The durable server against ZooKeeper 3.8, both as processes on the same disk (os.tmpdir()), in
 * the same run, driven by the same raw @tenure/zookeeper sessions over TCP:
 *   - create and setData ops/s with 1, 10 and 200 requests in flight, forceSync=yes then no;
 *   - the time to restart (SIGKILL, start, first answer) with 1,000,000 nodes in snapshot + log
 *     (filled with forceSync=no, multis of 1,000 creates, snapCount 600);
 *   - the memory (RSS) of each process holding those 1,000,000 nodes.
 *
 *   npx tsx bench/server-durable.ts [--seconds 2] [--rounds 3] [--nodes 1000000] [--no-million] [--no-ops]
 *
 * tenure-server here is the test child launcher (packages/server/test/fixtures/durable-server.ts);
 * ZooKeeper is TestingServer with the optimising JIT and a 3 GB heap.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arg, median, perSecond } from './case-rounds.js';
import { rerunFromSource } from './run-from-source.js';

rerunFromSource(import.meta.url);

const { OPEN_ACL_UNSAFE, OpCode } = await import('@tenure/protocol');
const { zookeeper } = await import('@tenure/zookeeper');
const { TestingServer } = await import('@tenure/testing');
const { startDurable } = await import('../packages/server/test/durable-child.js');
type Connection = import('@tenure/protocol').Connection;

const SECONDS = Number(arg('seconds', '2'));
const ROUNDS = Number(arg('rounds', '3'));
const NODES = Number(arg('nodes', '1000000'));
const MILLION = !process.argv.includes('--no-million');
const OPS = !process.argv.includes('--no-ops');
const acl = [...OPEN_ACL_UNSAFE];
const root = mkdtempSync(join(tmpdir(), 'tenure-bench-durable-'));
const ZK_JVM = ['-XX:TieredStopAtLevel=4', '-Xmx3g'];

interface Peer {
  name: string;
  connectString: string;
  pid(): number | undefined;
  kill(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

async function tenure(dir: string, forceSync: boolean, snapCount = 100_000): Promise<Peer> {
  const args = ['--data-dir', dir, '--force-sync', forceSync ? 'yes' : 'no', '--tick-ms', '2000', '--max-buffer', String(4 << 20), '--snap-count', String(snapCount)];
  let child = await startDurable(args, 600_000);
  let port = child.port;
  return {
    name: 'tenure-server',
    get connectString() {
      return `127.0.0.1:${port}`;
    },
    pid: () => child.child.pid,
    kill: async () => void (await child.kill('SIGKILL')),
    restart: async () => {
      await child.kill('SIGKILL');
      child = await startDurable([...args, '--port', String(port)], 600_000);
      port = child.port;
    },
    close: async () => void (await child.kill('SIGTERM')),
  };
}

function zkPid(dir: string): number | undefined {
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (cmd.includes(dir) && cmd.split('\0')[0]!.endsWith('java')) return Number(p);
    } catch {
      // gone
    }
  }
  return undefined;
}

async function zk(dir: string, forceSync: boolean, snapCount = 100_000): Promise<Peer> {
  const s = await TestingServer.start({
    config: { dataDir: dir, forceSync: forceSync ? 'yes' : 'no', snapCount },
    systemProperties: { 'jute.maxbuffer': 4 << 20 },
    jvmFlags: ZK_JVM,
    tickTime: 2000,
    startTimeoutMs: 600_000,
  });
  return {
    name: 'ZooKeeper 3.8',
    connectString: s.connectString,
    pid: () => zkPid(s.directory),
    kill: () => s.stop(),
    restart: () => s.restart(),
    close: () => s.close(),
  };
}

async function connect(connectString: string): Promise<Connection> {
  const t = zookeeper(connectString, { maxFrameBytes: 64 << 20 });
  const r = await t.connect(t.hosts[0]!, { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 40_000, readOnly: false }, { onEvent() {}, onClose() {} });
  if (r.kind !== 'connected') throw new Error('expired');
  return r.connection;
}

/** Ops/s with `depth` requests in flight for SECONDS. */
async function rate(conn: Connection, depth: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let done = 0;
  let i = 0;
  const until = performance.now() + SECONDS * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: depth }, async () => {
      while (performance.now() < until) {
        await op(i++);
        done++;
      }
    }),
  );
  void conn;
  return done / ((performance.now() - start) / 1000);
}

const results = new Map<string, Map<string, number>>();
const put = (row: string, peer: string, v: number): void => {
  if (!results.has(row)) results.set(row, new Map());
  results.get(row)!.set(peer, v);
};

let run = 0;
for (const forceSync of OPS ? [true, false] : []) {
  // Both peers run at once and take turns, round by round, so both see the same disk and load.
  const peers = [];
  for (const make of [tenure, zk]) {
    const dir = join(root, `ops-${run++}`);
    const peer = await make(dir, forceSync);
    const conn = await connect(peer.connectString);
    await conn.send({ type: OpCode.create, path: '/b', data: null, acl, flags: 0 });
    await conn.send({ type: OpCode.create, path: '/k', data: Buffer.alloc(100), acl, flags: 0 });
    peers.push({ peer, conn, dir });
  }
  const data = Buffer.alloc(100, 1);
  const fs = forceSync ? 'yes' : 'no';
  for (const depth of [1, 10, 200]) {
    const creates = peers.map(() => [] as number[]);
    const sets = peers.map(() => [] as number[]);
    for (let r = 0; r < ROUNDS; r++) {
      for (const [k, { conn }] of peers.entries()) {
        const prefix = `/b/r${depth}-${r}-`;
        creates[k]!.push(await rate(conn, depth, (i) => conn.send({ type: OpCode.create, path: `${prefix}${i}`, data, acl, flags: 0 })));
        sets[k]!.push(await rate(conn, depth, () => conn.send({ type: OpCode.setData, path: '/k', data, version: -1 })));
      }
    }
    for (const [k, { peer }] of peers.entries()) {
      put(`create, ${depth} in flight, forceSync=${fs}`, peer.name, median(creates[k]!));
      put(`setData, ${depth} in flight, forceSync=${fs}`, peer.name, median(sets[k]!));
      console.error(`  ${peer.name} forceSync=${fs} depth ${depth}: create ${perSecond(median(creates[k]!))}, setData ${perSecond(median(sets[k]!))}`);
    }
  }
  for (const { peer, conn, dir } of peers) {
    conn.close();
    await peer.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const extra: string[] = [];
if (MILLION) {
  for (const make of [tenure, zk]) {
    const dir = join(root, `million-${run++}`);
    // Snapshots every ~300-600 txns (a txn is a multi of 1,000 creates), so the restart reads a
    // large snapshot and a log after it.
    const peer = await make(dir, false, 600);
    let conn = await connect(peer.connectString);
    const t0 = performance.now();
    const BATCH = 1000;
    for (let d = 0; d < NODES / 10_000; d++) await conn.send({ type: OpCode.create, path: `/d${d}`, data: null, acl, flags: 0 });
    const batches = Math.ceil(NODES / BATCH);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let b = next++; b < batches; b = next++) {
          const ops = Array.from({ length: BATCH }, (_, j) => {
            const n = b * BATCH + j;
            return { type: OpCode.create, path: `/d${Math.floor(n / 10_000)}/n${n}`, data: Buffer.from(`node-${n}`), acl, flags: 0 } as const;
          });
          const r = await conn.send({ type: OpCode.multi, ops });
          if (r.err !== 0) throw new Error(`multi failed ${r.err}`);
        }
      }),
    );
    const fill = (performance.now() - t0) / 1000;
    // A little more in the log after the last snapshot.
    for (let i = 0; i < 5000; i++) await conn.send({ type: OpCode.setData, path: '/d0/n0', data: Buffer.from(`v${i}`), version: -1 });
    const pid = peer.pid();
    const rss = pid === undefined ? NaN : Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
    conn.close();
    const k0 = performance.now();
    await peer.restart();
    conn = await connect(peer.connectString);
    const r = await conn.send({ type: OpCode.getData, path: `/d0/n0`, watch: false });
    const restartS = (performance.now() - k0) / 1000;
    if (r.err !== 0) throw new Error('node missing after restart');
    const files = readdirSync(join(dir, 'version-2'));
    put(`restart with ${NODES.toLocaleString('en')} nodes (s)`, peer.name, restartS);
    put(`RSS with ${NODES.toLocaleString('en')} nodes (MB)`, peer.name, rss / 1024 / 1024);
    extra.push(`${peer.name}: filled ${NODES.toLocaleString('en')} nodes in ${fill.toFixed(1)} s; files ${files.filter((f) => f.startsWith('snapshot')).length} snapshots, ${files.filter((f) => f.startsWith('log')).length} logs`);
    console.error(`  ${peer.name}: restart ${restartS.toFixed(2)} s, RSS ${(rss / 1024 / 1024).toFixed(0)} MB`);
    conn.close();
    await peer.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
rmSync(root, { recursive: true, force: true });

console.log('| case | tenure-server | ZooKeeper 3.8 | ratio |');
console.log('|---|---|---|---|');
for (const [row, m] of results) {
  const a = m.get('tenure-server');
  const b = m.get('ZooKeeper 3.8');
  const unit = row.includes('(s)') || row.includes('(MB)');
  const f = (v: number | undefined): string => (v === undefined ? '-' : unit ? v.toFixed(row.includes('(s)') ? 2 : 0) : perSecond(v));
  console.log(`| ${row} | ${f(a)} | ${f(b)} | ${a !== undefined && b !== undefined ? (a / b).toFixed(2) : '-'} |`);
}
for (const e of extra) console.log(`- ${e}`);
