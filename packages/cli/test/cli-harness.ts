/** Runs `tenure` in-process (main() from source) with captured output, and spawns the installed bin. */
import { spawn } from 'node:child_process';
import { existsSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { main } from '../src/main.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

function collect(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** `tenure ...args` in this process; `signal` ends long-running commands (watch). */
export async function tenure(
  args: readonly string[],
  options: { signal?: AbortSignal; env?: NodeJS.ProcessEnv; stdin?: string; onStdout?: (text: string) => void } = {},
): Promise<RunResult> {
  const out = collect();
  const err = collect();
  if (options.onStdout) out.stream.on('data', () => options.onStdout!(out.text()));
  const code = await main(args, {
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    stdout: out.stream,
    stderr: err.stream,
    env: { TENURE_HISTORY: '', ...options.env },
    signal: options.signal ?? new AbortController().signal,
  });
  return { code, stdout: out.text(), stderr: err.text() };
}

/** The whole stdout as one JSON document (throws if it is not exactly one). */
// Tests read the CLI's JSON field by field, as the config lets tests read JSON: `any` unless they name a type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function json<T = any>(r: RunResult): T {
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

export const REPO = fileURLToPath(new URL('../../..', import.meta.url));
/** node_modules/.bin/tenure of the repository, as `npm ci` links it. */
export const BIN = join(REPO, 'node_modules', '.bin', 'tenure');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Whether dist/ is older than src/ (a spawned bin would run stale code): say so rather than test it. */
export function distIsStale(): string | null {
  const dist = join(REPO, 'packages/cli/dist/main.js');
  if (!existsSync(dist)) return 'packages/cli/dist is not built: run `npm run build`';
  return newestMtime(join(REPO, 'packages/cli/src')) > statSync(dist).mtimeMs
    ? 'packages/cli/dist is older than src: run `npm run build`'
    : null;
}

export interface Spawned {
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
  write(text: string): void;
  end(): void;
  kill(signal: NodeJS.Signals): void;
  /** Resolves once stdout matches. */
  waitFor(re: RegExp, timeoutMs?: number, stream?: 'stdout' | 'stderr'): Promise<void>;
}

/** Spawns `command args` (the bin, or `script` around it) with pipes. */
export function spawnProcess(command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Spawned {
  const child = spawn(command, [...args], { env: { ...process.env, TENURE_HISTORY: '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const text = (b: Buffer[]): string => Buffer.concat(b).toString('utf8');
  return {
    stdout: () => text(out),
    stderr: () => text(err),
    exited,
    write: (t) => void child.stdin.write(t),
    end: () => void child.stdin.end(),
    kill: (s) => void child.kill(s),
    async waitFor(re, timeoutMs = 15_000, stream = 'stdout') {
      const until = Date.now() + timeoutMs;
      while (!re.test(text(stream === 'stdout' ? out : err))) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${re} on ${stream}; stdout: ${text(out)}\nstderr: ${text(err)}`);
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode} before ${re}; stdout: ${text(out)}\nstderr: ${text(err)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}
