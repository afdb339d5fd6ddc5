/**
 * The embedded server, measured through its in-process transport with raw request records (no
 * client): operations per second, 100,000 idle sessions held and expired, and a watch fan-out to
 * 10,000 watchers. When a real ZooKeeper is installed, the same operation loops also run against
 * it (TestingServer over the @tenure/zookeeper TCP transport) in the same run, for a ratio.
 *
 *   npx tsx bench/server.ts [--seconds 2] [--window 1000] [--sessions 100000] [--watchers 10000] [--no-zk]
 *
 * Imports the packages from source, so it measures the code as it is (no build needed).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Connection, Request, Transport } from '@tenure/protocol';
import { OPEN_ACL_UNSAFE, OpCode } from '@tenure/protocol';
import { createEmbeddedServer } from '../packages/server/src/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS = arg('seconds', 2);
const WINDOW = arg('window', 1000);
const ROUNDS = arg('rounds', 3);
const SESSIONS = arg('sessions', 100_000);
const WATCHERS = arg('watchers', 10_000);
const WITH_ZK = !process.argv.includes('--no-zk');

const rows: Array<[string, string, string]> = [];
const row = (what: string, value: string, note = ''): void => {
  rows.push([what, value, note]);
  console.error(`  ${what}: ${value}${note ? `  (${note})` : ''}`);
};
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function connect(
  t: Transport,
  timeoutMs = 30_000,
  onEvent: () => void = () => undefined,
  onClose: () => void = () => undefined,
): Promise<Connection> {
  const r = await t.connect(
    t.hosts[0]!,
    { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs, readOnly: false },
    { onEvent, onClose },
  );
  if (r.kind !== 'connected') throw new Error('session expired at connect');
  return r.connection;
}

/** The process's CPU per op (µs) of the last `pipelined` run: in-process, the server's cost and the loop's. */
let lastCpuUsPerOp = 0;

/** `window` loops, each keeping one request in flight, for `ms`; returns ops/s. */
async function pipelined(op: (i: number) => Promise<unknown>, ms: number, window: number): Promise<number> {
  let done = 0;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: window }, async (_, w) => {
      for (let i = 0; performance.now() < end; i++) {
        await op(w * 1_000_000 + i);
        done++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  lastCpuUsPerOp = (cpu.user + cpu.system) / done;
  return done / ((performance.now() - start) / 1000);
}

const acl = [...OPEN_ACL_UNSAFE];
const data = Buffer.alloc(64, 0x61);

/** CPU per op (µs, median of ROUNDS) of each loop, by `label name`. */
const cpuUsPerOp: Record<string, number> = {};

/** getData, setData and create+delete loops on one connection; ops/s (median of ROUNDS). */
async function operationLoops(c: Connection, label: string, ms: number, window: number): Promise<Record<string, number>> {
  const base = `/bench-${label}-${Math.random().toString(36).slice(2, 8)}`;
  const must = async (req: Request): Promise<void> => {
    const r = await c.send(req);
    if (r.err !== 0) throw new Error(`${label}: op ${req.type} on ${'path' in req ? req.path : ''} failed with ${r.err}`);
  };
  await must({ type: OpCode.create, path: base, data, acl, flags: 0 });
  await must({ type: OpCode.create, path: `${base}/d`, data, acl, flags: 0 });
  const loops: Record<string, (i: number) => Promise<unknown>> = {
    getData: () => must({ type: OpCode.getData, path: `${base}/d`, watch: false }),
    setData: () => must({ type: OpCode.setData, path: `${base}/d`, data, version: -1 }),
    'create+delete': async (i) => {
      await must({ type: OpCode.create, path: `${base}/n${i}`, data, acl, flags: 0 });
      await must({ type: OpCode.delete, path: `${base}/n${i}`, version: -1 });
    },
  };
  const out: Record<string, number> = {};
  for (const [name, op] of Object.entries(loops)) {
    await pipelined(op, Math.min(300, ms), window); // warm-up
    const runs: number[] = [];
    const cpu: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      runs.push(await pipelined(op, ms, window));
      cpu.push(lastCpuUsPerOp);
    }
    out[name] = median(runs);
    cpuUsPerOp[`${label} ${name}`] = median(cpu);
  }
  return out;
}

async function operations(): Promise<Record<string, number>> {
  console.error(`operations: ${SECONDS} s x ${ROUNDS} rounds, ${WINDOW} requests in flight, then 1 in flight`);
  const server = createEmbeddedServer();
  const c = await connect(server.transport());
  const piped = await operationLoops(c, 'piped', SECONDS * 1000, WINDOW);
  for (const [k, v] of Object.entries(piped))
    row(`in-process ${k}`, `${fmt(v)} ops/s`, `${WINDOW} in flight, ${cpuUsPerOp[`piped ${k}`]!.toFixed(2)} µs CPU/op`);
  const serial = await operationLoops(c, 'serial', SECONDS * 1000, 1);
  for (const [k, v] of Object.entries(serial)) row(`in-process ${k}`, `${fmt(v)} ops/s`, '1 in flight');
  await server.close();
  return piped;
}

async function idleSessions(): Promise<void> {
  const tickMs = 200;
  const timeoutMs = 4000;
  console.error(`idle sessions: ${fmt(SESSIONS)} sessions, timeout ${timeoutMs} ms, tick ${tickMs} ms`);
  const server = createEmbeddedServer({ tickMs });
  const t = server.transport();
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const rss0 = process.memoryUsage().rss;
  let closed = 0;
  const onClose = (): void => {
    closed++;
  };
  const t0 = performance.now();
  const conns: Connection[] = [];
  for (let i = 0; i < SESSIONS; i += 1000) {
    const batch = await Promise.all(Array.from({ length: Math.min(1000, SESSIONS - i) }, () => connect(t, timeoutMs, undefined, onClose)));
    conns.push(...batch);
  }
  const opened = performance.now() - t0;
  const lastTouch = performance.now();
  gc();
  const mem = process.memoryUsage();
  row('open idle sessions', `${fmt(SESSIONS)} in ${fmt(opened)} ms`, `${fmt(SESSIONS / (opened / 1000))} sessions/s`);
  row(
    'memory holding them',
    `${mb(mem.heapUsed - heap0)} heap`,
    `${fmt((mem.heapUsed - heap0) / SESSIONS)} B/session, rss +${mb(mem.rss - rss0)}`,
  );
  // Idle cost: how busy the event loop is while all of them sit on the wheel.
  const elu0 = performance.eventLoopUtilization();
  await sleep(1000);
  const elu = performance.eventLoopUtilization(elu0);
  row('event loop while they sit idle', `${(elu.utilization * 100).toFixed(2)} % busy`, 'over 1 s, before any is due');
  // Expiry: every session goes at the first tick boundary after its timeout.
  const sinceLastTouch = performance.now() - lastTouch;
  while (closed < SESSIONS) await sleep(10);
  const allGone = performance.now() - lastTouch;
  if (server.sessions().length !== 0) throw new Error('sessions left after expiry');
  row(
    'expire all of them',
    `last gone ${fmt(allGone - timeoutMs)} ms after its deadline`,
    `${fmt(allGone)} ms after the last open (waited ${fmt(sinceLastTouch)} ms idle first)`,
  );
  conns.length = 0;
  await server.close();
}

async function fanOut(): Promise<void> {
  console.error(`fan-out: ${fmt(WATCHERS)} watchers`);
  const server = createEmbeddedServer();
  const t = server.transport();
  let events = 0;
  let target = 0;
  let reached: (() => void) | undefined;
  const onEvent = (): void => {
    if (++events === target) reached?.();
  };
  const writer = await connect(t);
  await writer.send({ type: OpCode.create, path: '/fan', data, acl, flags: 0 });
  const watchers: Connection[] = [];
  for (let i = 0; i < WATCHERS; i += 1000) {
    watchers.push(...(await Promise.all(Array.from({ length: Math.min(1000, WATCHERS - i) }, () => connect(t, 30_000, onEvent)))));
  }
  const until = (n: number): Promise<void> => {
    target = n;
    return events >= n ? Promise.resolve() : new Promise((r) => (reached = r));
  };
  // One-shot data watches: one setData notifies all of them.
  const oneShot: number[] = [];
  for (let round = 0; round < 3; round++) {
    await Promise.all(watchers.map((c) => c.send({ type: OpCode.getData, path: '/fan', watch: true })));
    const start = performance.now();
    const reply = writer.send({ type: OpCode.setData, path: '/fan', data, version: -1 });
    await until(events + WATCHERS);
    await reply;
    oneShot.push(performance.now() - start);
  }
  const ms = median(oneShot);
  row(`one setData to ${fmt(WATCHERS)} one-shot watchers`, `${ms.toFixed(1)} ms`, `${fmt(WATCHERS / (ms / 1000))} notifications/s`);
  // Persistent watches: many writes, every one notifying every watcher.
  await Promise.all(watchers.map((c) => c.send({ type: OpCode.addWatch, path: '/fan', mode: 0 })));
  const writes = 20;
  const start = performance.now();
  const goal = events + writes * WATCHERS;
  const sent: Promise<unknown>[] = [];
  for (let i = 0; i < writes; i++) sent.push(writer.send({ type: OpCode.setData, path: '/fan', data, version: -1 }));
  await until(goal);
  const took = performance.now() - start;
  await Promise.all(sent);
  row(
    `${writes} setData to ${fmt(WATCHERS)} persistent watchers`,
    `${took.toFixed(0)} ms`,
    `${fmt((writes * WATCHERS) / (took / 1000))} notifications/s`,
  );
  await server.close();
}

async function againstZooKeeper(embedded: Record<string, number>): Promise<void> {
  const { realZooKeeper, TestingServer } = await import('../packages/testing/src/index.js');
  const { zookeeper } = await import('../packages/zookeeper/src/index.js');
  const zk = realZooKeeper();
  if (!zk.available) {
    row('Apache ZooKeeper comparison', 'skipped', 'no ZooKeeper installation found');
    return;
  }
  console.error('the same loops against Apache ZooKeeper 3.8 (TestingServer, @tenure/zookeeper over TCP)');
  await using server = await TestingServer.start();
  const c = await connect(zookeeper(server.connectString));
  const real = await operationLoops(c, 'zk', SECONDS * 1000, WINDOW);
  // TestingServer's JVM favours start-up time (C1 only, serial GC, 256 MB): not a peak figure.
  for (const [k, v] of Object.entries(real)) {
    row(`ZooKeeper 3.8 over TCP ${k}`, `${fmt(v)} ops/s`, `${WINDOW} in flight; embedded in-process is ${(embedded[k]! / v).toFixed(1)}x`);
  }
  c.close();
}

const embedded = await operations();
await fanOut();
await idleSessions();
if (WITH_ZK) await againstZooKeeper(embedded);

const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length), ['measure', 'value', 'note'][i]!.length));
const line = (r: readonly string[]): string => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(`\n@tenure/server benchmark (node ${process.version}, ${new Date().toISOString()})\n`);
console.log(line(['measure', 'value', 'note']));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows) console.log(line(r));
