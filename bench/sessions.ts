/**
 * Many idle sessions: tenure-server against Apache ZooKeeper 3.8 holding the same number of
 * connected, pinging sessions, driven by the same driver. What each server costs to keep them:
 * CPU per second while nothing but pings arrives (from /proc/<pid>/stat), and RSS.
 *
 *   npx tsx bench/sessions.ts [--sessions 2000] [--timeout-ms 6000] [--rounds 3] [--seconds 10]
 *        [--settle 3] [--drivers 1] [--no-build] [--dir <base dir>] [--cpu-prof <dir>]
 *
 * - Servers, started once and both up for the whole run: tenure-server as a child process (the
 *   built bin; `npx tsc -b packages/tenure-server` runs first unless --no-build), and Debian's
 *   ZooKeeper 3.8 (TestingServer: optimising JIT, G1, -Xmx1g). Both durable with forceSync=no,
 *   data dirs under one base dir (default /dev/shm where present), tickTime 2000, no per-IP
 *   connection limit.
 * - Driver: `--drivers` Node processes (default 1) sharing the sessions, each speaking the raw wire
 *   transport (@tenure/zookeeper: one TCP connection a session, no client bookkeeping). Every
 *   session pings every third of its negotiated timeout (as ZooKeeper's Java client does when
 *   idle), each at its own phase, so the pings arrive spread evenly: with 2,000 sessions and 6 s,
 *   1,000 pings/s.
 * - A round, per server in an order that alternates per round: open the sessions, let them settle,
 *   read the server's CPU time, wait `--seconds`, read it again, read RSS, close every session
 *   (closeSession, so none lingers into the other server's turn). Before the first round, each
 *   server's CPU per second and RSS with no session ("empty") is taken the same way.
 * - The table: the medians of the rounds and tenure-server / ZooKeeper. The driver's own counts
 *   (pings answered, slowest answer, sessions lost) show both servers got the same load.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { arg, median } from './case-rounds.js';
import { LineChild } from './line-child.js';
import { cpuSeconds, javaPidWithArgument, rssKb } from './proc-stats.js';
import { rerunFromSource } from './run-from-source.js';

rerunFromSource(import.meta.url);

const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'packages/tenure-server/bin/tenure-server.js');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const log = (s: string): void => void process.stderr.write(`${s}\n`);

// ---------------------------------------------------------------------------------------------
// A driver process: holds its share of the sessions and pings them.

interface Held {
  close(): Promise<void>;
}

async function drive(): Promise<void> {
  const { zookeeper } = await import('@tenure/zookeeper');
  const { OpCode } = await import('@tenure/protocol');
  type Connection = import('@tenure/protocol').Connection;
  let sessions: Array<{ conn: Connection; timer: NodeJS.Timeout }> = [];
  let answered = 0;
  let sent = 0;
  let slowestMs = 0;
  let lost = 0;

  const open = async (connectString: string, n: number, timeoutMs: number): Promise<number> => {
    const transport = zookeeper(connectString);
    const host = transport.hosts[0]!;
    let negotiated = 0;
    let next = 0;
    const one = async (): Promise<void> => {
      const r = await transport.connect(
        host,
        { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs, readOnly: false },
        {
          onEvent: () => undefined,
          onClose: (reason) => {
            if (reason.kind !== 'client') lost++;
          },
        },
      );
      if (r.kind !== 'connected') throw new Error(`${connectString}: session refused`);
      const conn = r.connection;
      negotiated = conn.negotiatedTimeoutMs;
      const every = conn.negotiatedTimeoutMs / 3;
      const ping = (): void => {
        if (conn.closed) return;
        const t0 = performance.now();
        sent++;
        conn.send({ type: OpCode.ping }).then(
          () => {
            answered++;
            slowestMs = Math.max(slowestMs, performance.now() - t0);
          },
          () => undefined,
        );
      };
      // Each session at its own phase, so that the pings arrive evenly spread.
      const entry = { conn, timer: setTimeout(() => (ping(), (entry.timer = setInterval(ping, every))), Math.random() * every) };
      sessions.push(entry);
    };
    // 50 handshakes at a time.
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < n) {
          next++;
          await one();
        }
      }),
    );
    return negotiated;
  };

  const closeAll = async (): Promise<void> => {
    const all = sessions;
    sessions = [];
    for (const s of all) clearTimeout(s.timer);
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < all.length) {
          const { conn } = all[next++]!;
          await conn.send({ type: OpCode.closeSession }).catch(() => undefined);
          conn.close();
        }
      }),
    );
  };

  console.log('ready');
  for await (const line of createInterface({ input: process.stdin })) {
    const [cmd, a, b, c] = line.trim().split(' ');
    try {
      if (cmd === 'open') {
        const t0 = performance.now();
        const negotiated = await open(a!, Number(b), Number(c));
        console.log(`opened ${Math.round(performance.now() - t0)} ${negotiated}`);
      } else if (cmd === 'stats') {
        console.log(`stats ${sent} ${answered} ${slowestMs.toFixed(1)} ${lost} ${sessions.length}`);
        sent = answered = slowestMs = lost = 0;
      } else if (cmd === 'close') {
        await closeAll();
        console.log('closed');
      } else console.log(`error unknown command ${cmd}`);
    } catch (err) {
      console.log(`error ${String(err).replace(/\n/g, ' ')}`);
    }
  }
  await closeAll();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// The orchestrator

interface Measured {
  cpuPerSecond: number;
  rssKb: number;
}

interface ServerUnderTest {
  name: 'tenure-server' | 'ZooKeeper 3.8';
  connectString: string;
  pid: number;
}

async function orchestrate(): Promise<void> {
  const SESSIONS = Number(arg('sessions', '2000'));
  const TIMEOUT_MS = Number(arg('timeout-ms', '6000'));
  const ROUNDS = Number(arg('rounds', '3'));
  const SECONDS = Number(arg('seconds', '10'));
  const SETTLE = Number(arg('settle', '3'));
  const DRIVERS = Number(arg('drivers', '1'));
  const CPU_PROF = arg('cpu-prof', '');
  const base = mkdtempSync(join(arg('dir', existsSync('/dev/shm') ? '/dev/shm' : tmpdir()), 'tenure-bench-sessions-'));
  if (!process.argv.includes('--no-build')) {
    log('building tenure-server (npx tsc -b packages/tenure-server)');
    execFileSync('npx', ['tsc', '-b', 'packages/tenure-server'], { cwd: ROOT, stdio: 'inherit' });
  }
  const { TenureServerProcess, TestingServer } = await import('@tenure/testing');
  const loadBefore = loadavg();
  const held: Held[] = [];
  try {
    log('starting tenure-server and ZooKeeper 3.8');
    const tenure = TenureServerProcess.spawn({
      command: [process.execPath, ...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : []), BIN],
      args: ['--data-dir', join(base, 'tenure'), '--force-sync', 'no', '--tick-time', '2000', '--max-client-cnxns', '0'],
      env: process.env,
    });
    await tenure.ready(60_000);
    held.push({ close: async () => void (await tenure.stop()) });
    const zk = await TestingServer.start({
      tickTime: 2000,
      config: { dataDir: join(base, 'zk'), forceSync: 'no', maxClientCnxns: 0 },
      jvmFlags: ['-Xmx1g', '-XX:TieredStopAtLevel=4', '-XX:-UseSerialGC', '-XX:+UseG1GC'],
    });
    held.push(zk);
    const servers: ServerUnderTest[] = [
      { name: 'tenure-server', connectString: tenure.connectString, pid: tenure.child.pid! },
      { name: 'ZooKeeper 3.8', connectString: zk.connectString, pid: javaPidWithArgument(join(zk.directory, 'zoo.cfg')) },
    ];

    const drivers: LineChild[] = [];
    for (let i = 0; i < DRIVERS; i++) {
      const d = new LineChild(
        `driver ${i + 1}`,
        spawn(process.execPath, [...process.execArgv, SELF, '--role', 'driver'], { stdio: ['pipe', 'pipe', 'inherit'] }),
      );
      held.push(d);
      await d.ask();
      drivers.push(d);
    }
    const share = (i: number): number => Math.floor(SESSIONS / DRIVERS) + (i < SESSIONS % DRIVERS ? 1 : 0);

    const sample = async (s: ServerUnderTest): Promise<Measured> => {
      const c0 = cpuSeconds(s.pid);
      const t0 = performance.now();
      await sleep(SECONDS * 1000);
      const cpu = cpuSeconds(s.pid) - c0;
      return { cpuPerSecond: cpu / ((performance.now() - t0) / 1000), rssKb: rssKb(s.pid) };
    };

    const empty = new Map<string, Measured>();
    for (const s of servers) {
      log(`${s.name}: empty, ${SECONDS} s`);
      await sleep(SETTLE * 1000);
      empty.set(s.name, await sample(s));
    }

    const rounds = new Map<string, Measured[]>(servers.map((s) => [s.name, []]));
    const load: Record<string, string[]> = Object.fromEntries(servers.map((s) => [s.name, []]));
    let negotiatedMs = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const s of order) {
        const opened = await Promise.all(drivers.map((d, i) => d.ask(`open ${s.connectString} ${share(i)} ${TIMEOUT_MS}`)));
        negotiatedMs = Number(opened[0]!.split(' ')[2]);
        await sleep(SETTLE * 1000);
        await Promise.all(drivers.map((d) => d.ask('stats')));
        const m = await sample(s);
        const stats = (await Promise.all(drivers.map((d) => d.ask('stats')))).map((l) => l.split(' ').slice(1).map(Number));
        const sum = (k: number): number => stats.reduce((acc, x) => acc + x[k]!, 0);
        const slowest = Math.max(...stats.map((x) => x[2]!));
        await Promise.all(drivers.map((d) => d.ask('close')));
        rounds.get(s.name)!.push(m);
        load[s.name]!.push(
          `${sum(1)} pings answered (${(sum(1) / SECONDS).toFixed(0)}/s), slowest ${slowest.toFixed(1)} ms, ${sum(3)} lost, ${sum(4)} open`,
        );
        log(
          `round ${round + 1}/${ROUNDS} ${s.name}: ${(m.cpuPerSecond * 1000).toFixed(1)} ms CPU/s, RSS ${(m.rssKb / 1024).toFixed(0)} MB; ` +
            `opened in ${opened.map((o) => o.split(' ')[1]).join('+')} ms; ${load[s.name]!.at(-1)!}`,
        );
      }
    }

    const loadAfter = loadavg();
    const med = (name: string, f: keyof Measured): number => median(rounds.get(name)!.map((m) => m[f]));
    const ms = (x: number): string => `${(x * 1000).toFixed(1)} ms`;
    const mb = (kb: number): string => `${(kb / 1024).toFixed(0)} MB`;
    const ratio = (f: keyof Measured, xs: (name: string) => number = (n) => med(n, f)): string =>
      `${(xs('tenure-server') / xs('ZooKeeper 3.8')).toFixed(2)}×`;
    const out = [
      '',
      `bench/sessions.ts: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')} before, ${loadAfter.map((x) => x.toFixed(2)).join(' ')} after`,
      `${SESSIONS} sessions from ${DRIVERS} driver process(es), timeout ${TIMEOUT_MS} ms asked, ${negotiatedMs} ms negotiated, a ping each ${(negotiatedMs / 3).toFixed(0)} ms per session;`,
      `median of ${ROUNDS} interleaved rounds, ${SECONDS} s measured after ${SETTLE} s settling; both servers durable, forceSync=no, tickTime 2000`,
      '',
      `| ${'server'.padEnd(16)} | ${'CPU/s, empty'.padStart(14)} | ${'RSS, empty'.padStart(12)} | ${`CPU/s, ${SESSIONS} sessions`.padStart(24)} | ${`RSS, ${SESSIONS} sessions`.padStart(22)} |`,
      `|${'-'.repeat(18)}|${'-'.repeat(16)}|${'-'.repeat(14)}|${'-'.repeat(26)}|${'-'.repeat(24)}|`,
      ...servers.map(
        (s) =>
          `| ${s.name.padEnd(16)} | ${ms(empty.get(s.name)!.cpuPerSecond).padStart(14)} | ${mb(empty.get(s.name)!.rssKb).padStart(12)} | ${ms(med(s.name, 'cpuPerSecond')).padStart(24)} | ${mb(med(s.name, 'rssKb')).padStart(22)} |`,
      ),
      `| ${'tenure / ZK'.padEnd(16)} | ${ratio('cpuPerSecond', (n) => empty.get(n)!.cpuPerSecond).padStart(14)} | ${ratio('rssKb', (n) => empty.get(n)!.rssKb).padStart(12)} | ${ratio('cpuPerSecond').padStart(24)} | ${ratio('rssKb').padStart(22)} |`,
      '',
      'Per round (CPU per second of wall time, RSS at the end of the window; the driver’s counts)',
      ...servers.flatMap((s) =>
        rounds
          .get(s.name)!
          .map(
            (m, i) =>
              `  ${s.name.padEnd(14)} round ${i + 1}: ${ms(m.cpuPerSecond).padStart(9)}, ${mb(m.rssKb).padStart(6)}; ${load[s.name]![i]!}`,
          ),
      ),
      '',
      `${med('tenure-server', 'cpuPerSecond') <= med('ZooKeeper 3.8', 'cpuPerSecond') ? '✓' : '✗'} CPU/s with ${SESSIONS} sessions: ${ratio('cpuPerSecond')} (target ≤ 1.0×)`,
      `${med('tenure-server', 'rssKb') <= med('ZooKeeper 3.8', 'rssKb') ? '✓' : '✗'} RSS with ${SESSIONS} sessions: ${ratio('rssKb')} (target ≤ 1.0×)`,
    ];
    console.log(out.join('\n'));
  } finally {
    for (const h of held.reverse()) await h.close();
    rmSync(base, { recursive: true, force: true });
  }
}

if (arg('role', 'orchestrator') === 'driver') await drive();
else await orchestrate();
