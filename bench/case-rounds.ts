/**
 * What the peer benchmarks (locks, counters, queues) share: their flags, running one case in a
 * fresh process that prints its rounds as a JSON array, and the median and ops/s they report.
 */
import { spawn } from 'node:child_process';

/** The value of `--name`, or `fallback`. */
export const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};

/** Runs a command, returns the last stdout line parsed as JSON rounds. */
export function caseRounds(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
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

export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const perSecond = (n: number | undefined): string => (n === undefined ? '-' : `${Math.round(n).toLocaleString('en')}/s`);
