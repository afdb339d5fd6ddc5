/**
 * The client's CPU per getData against one Apache ZooKeeper 3.8: Tenure beside
 * node-zookeeper-client, pipelined, with the system calls behind each op.
 *
 *   npx tsx bench/client-cpu.ts [--seconds 3] [--rounds 5] [--in-flight 200] [--payload 100] [--warmup 3]
 *        [--baseline <checkout>]   (one more worker, "Tenure (baseline)": the Tenure client of another
 *                                   checkout, e.g. a worktree of main, for an A/B in the same run)
 *
 * - Server: Debian's ZooKeeper 3.8 (TestingServer: standalone, loopback, optimising JIT, -Xmx1g,
 *   forceSync=no), one for the whole run.
 * - Clients: bench/clients.ts's workers (`--role worker`), one long-lived process per client with one
 *   session, so that this measures exactly what that bench's "Client CPU per getData" row does; the
 *   Java client's throughput is in that bench (`--transports tcp`).
 * - A round runs every worker once, one at a time, in an order that alternates per round: pipelined
 *   getData of one node for `--seconds`. Per op: the client process's CPU (process.cpuUsage, user +
 *   system) and its read and write system calls (syscr/syscw of /proc/<pid>/io, which count the
 *   socket's reads and writes), so that a change can be told apart as fewer syscalls or less JS.
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg, median } from './case-rounds.js';
import { LineChild } from './line-child.js';
import { cpuTimes, syscalls } from './proc-stats.js';
import { BENCH_TSCONFIG, rerunFromSource } from './run-from-source.js';

rerunFromSource(import.meta.url);

const CLIENTS_BENCH = fileURLToPath(new URL('./clients.ts', import.meta.url));
const SECONDS = Number(arg('seconds', '3'));
const ROUNDS = Number(arg('rounds', '5'));
const IN_FLIGHT = Number(arg('in-flight', '200'));
const PAYLOAD = Number(arg('payload', '100'));
const WARMUP = Number(arg('warmup', '3'));
const PATH = '/bench-client-cpu';
const BASELINE = arg('baseline', '');

/** One of bench/clients.ts's workers, from this checkout or from `checkout`. */
function worker(name: string, kind: string, connectString: string, checkout?: string): LineChild {
  const bench = checkout === undefined ? CLIENTS_BENCH : join(checkout, 'bench/clients.ts');
  const tsconfig = checkout === undefined ? BENCH_TSCONFIG : join(checkout, 'bench/tsconfig.json');
  const args = ['--role', 'worker', '--client', kind, '--connect', connectString, '--path', PATH];
  args.push('--payload', String(PAYLOAD), '--in-flight', String(IN_FLIGHT));
  return new LineChild(
    name,
    spawn(process.execPath, [...process.execArgv, bench, ...args], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
    }),
  );
}

interface Sample {
  opsPerSec: number;
  cpuUsPerOp: number;
  /** The kernel's share of cpuUsPerOp (stime of /proc/<pid>/stat). */
  systemUsPerOp: number;
  readsPerOp: number;
  writesPerOp: number;
}

async function main(): Promise<void> {
  const { TestingServer } = await import('@tenure/testing');
  const loadBefore = loadavg();
  const zk = await TestingServer.start({ tickTime: 2000, jvmFlags: ['-XX:TieredStopAtLevel=4', '-Xmx1g'] });
  const workers: LineChild[] = [];
  try {
    for (const [name, kind, checkout] of [
      ['Tenure', 'tenure', undefined],
      ['node-zookeeper-client', 'nzc', undefined],
      ...(BASELINE ? [['Tenure (baseline)', 'tenure', BASELINE] as const] : []),
    ] as const) {
      const w = worker(name, kind, zk.connectString, checkout);
      workers.push(w);
      await w.ask();
    }
    for (const w of workers) await w.ask(`warmup ${WARMUP * 1000} 200`);
    const samples = new Map<string, Sample[]>(workers.map((w) => [w.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const w of workers.map((_, i) => workers[(i + round) % workers.length]!)) {
        const io0 = syscalls(w.child.pid!);
        const sys0 = cpuTimes(w.child.pid!).system;
        const [, ops, elapsed, cpu] = (await w.ask(`getdata ${SECONDS * 1000}`)).split(' ').map(Number) as [number, number, number, number];
        const io1 = syscalls(w.child.pid!);
        const sys1 = cpuTimes(w.child.pid!).system;
        const s = {
          opsPerSec: ops / (elapsed / 1000),
          cpuUsPerOp: cpu / ops,
          systemUsPerOp: ((sys1 - sys0) * 1e6) / ops,
          readsPerOp: (io1.reads - io0.reads) / ops,
          writesPerOp: (io1.writes - io0.writes) / ops,
        };
        samples.get(w.name)!.push(s);
        process.stderr.write(
          `round ${round + 1}/${ROUNDS} ${w.name}: ${Math.round(s.opsPerSec)} ops/s, ${s.cpuUsPerOp.toFixed(2)} µs/op (${s.systemUsPerOp.toFixed(2)} system), ` +
            `${s.readsPerOp.toFixed(3)} reads/op, ${s.writesPerOp.toFixed(3)} writes/op\n`,
        );
      }
    }
    const loadAfter = loadavg();
    const med = (name: string, f: keyof Sample): number => median(samples.get(name)!.map((s) => s[f]));
    const row = (name: string): string =>
      `| ${name.padEnd(22)} | ${Math.round(med(name, 'opsPerSec')).toLocaleString('en-US').padStart(9)} | ${med(name, 'cpuUsPerOp').toFixed(2).padStart(10)} | ${med(name, 'systemUsPerOp').toFixed(2).padStart(12)} | ${med(name, 'readsPerOp').toFixed(3).padStart(9)} | ${med(name, 'writesPerOp').toFixed(3).padStart(10)} |`;
    const ratio = (f: keyof Sample, other = 'node-zookeeper-client'): string => `${(med('Tenure', f) / med(other, f)).toFixed(2)}×`;
    const ratioRow = (label: string, other: string): string =>
      `| ${label.padEnd(22)} | ${(['opsPerSec', 'cpuUsPerOp', 'systemUsPerOp', 'readsPerOp', 'writesPerOp'] as const).map((f, i) => ratio(f, other).padStart([9, 10, 12, 9, 10][i]!)).join(' | ')} |`;
    console.log(
      [
        '',
        `bench/client-cpu.ts: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')} before, ${loadAfter.map((x) => x.toFixed(2)).join(' ')} after`,
        `ZooKeeper 3.8 (Debian), pipelined getData, ${IN_FLIGHT} in flight, ${PAYLOAD}-byte payload; median of ${ROUNDS} interleaved ${SECONDS} s rounds (order rotated per round)`,
        '',
        `| ${'client'.padEnd(22)} | ${'ops/s'.padStart(9)} | ${'CPU µs/op'.padStart(10)} | ${'of it system'.padStart(12)} | ${'reads/op'.padStart(9)} | ${'writes/op'.padStart(10)} |`,
        `|${'-'.repeat(24)}|${'-'.repeat(11)}|${'-'.repeat(12)}|${'-'.repeat(14)}|${'-'.repeat(11)}|${'-'.repeat(12)}|`,
        row('Tenure'),
        row('node-zookeeper-client'),
        ...(BASELINE ? [row('Tenure (baseline)')] : []),
        ratioRow('Tenure / nzc', 'node-zookeeper-client'),
        ...(BASELINE ? [ratioRow('Tenure / baseline', 'Tenure (baseline)')] : []),
        '',
        'Per round (CPU µs/op)',
        ...workers.map(
          (w) =>
            `  ${w.name.padEnd(22)} ${samples
              .get(w.name)!
              .map((s) => s.cpuUsPerOp.toFixed(2).padStart(7))
              .join(' ')}`,
        ),
        '',
        `${med('Tenure', 'cpuUsPerOp') / med('node-zookeeper-client', 'cpuUsPerOp') <= 0.3 ? '✓' : '✗'} Tenure / nzc CPU per op: ${ratio('cpuUsPerOp')} (target ≤ 0.3×)`,
        `${med('Tenure', 'opsPerSec') / med('node-zookeeper-client', 'opsPerSec') >= 0.95 ? '✓' : '✗'} Tenure / nzc throughput: ${ratio('opsPerSec')} (target ≥ 0.95×)`,
      ].join('\n'),
    );
  } finally {
    for (const w of workers) await w.close();
    await zk.close();
  }
}

await main();
