/**
 * tenure-server as a child process, for tests: started with flags, ready once it logs `serving`
 * (its JSON log lines are kept), stopped with a signal or killed. By default it runs from the
 * repository's sources through tsx (no build needed, as the rest of the tests); `command` runs
 * something else, such as the installed `node_modules/.bin/tenure-server`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TenureError, TimeoutError } from '@tenure/protocol';

/** One JSON log line of tenure-server (pino). */
export interface TenureServerLogLine {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

export interface TenureServerProcessOptions {
  /** Flags; `--port 0` and `--host 127.0.0.1` are added unless given. */
  args?: readonly string[];
  /** The program and its first arguments; default: the sources through tsx. */
  command?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Default 20,000 ms. */
  readyTimeoutMs?: number;
}

const live = new Set<ChildProcess>();
let hooked = false;

/** The repository's source entry and the tsconfig mapping @tenure/* to sources. */
function sourceCommand(): { command: string[]; env: NodeJS.ProcessEnv } {
  const cli = fileURLToPath(new URL('../../tenure-server/src/cli.ts', import.meta.url));
  const tsconfig = fileURLToPath(new URL('../../server/test/fixtures/tsconfig.json', import.meta.url));
  if (!existsSync(cli)) return { command: ['tenure-server'], env: {} };
  return { command: [process.execPath, '--import', 'tsx', cli], env: { TSX_TSCONFIG_PATH: tsconfig } };
}

export class TenureServerProcess {
  /** Every log line so far (stdout); lines that are not JSON are kept as `{ level: -1, msg }`. */
  readonly logs: TenureServerLogLine[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: Array<() => void> = [];
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  private constructor(readonly child: ChildProcess) {
    let buf = '';
    child.stdout!.on('data', (b: Buffer) => {
      buf += b.toString();
      let i: number;
      while ((i = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          this.logs.push(JSON.parse(line) as TenureServerLogLine);
        } catch {
          this.logs.push({ level: -1, msg: line });
        }
        this.wake();
      }
    });
    child.stderr!.on('data', (b: Buffer) => {
      this.stderr += b.toString();
      this.wake();
    });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        live.delete(child);
        this.exitInfo = { code, signal };
        this.wake();
        resolve(this.exitInfo);
      }),
    );
  }

  /** Spawns the process; it is running but not necessarily serving yet (see ready()). */
  static spawn(options: TenureServerProcessOptions = {}): TenureServerProcess {
    if (!hooked) {
      hooked = true;
      process.on('exit', () => {
        for (const c of live) c.kill('SIGKILL');
      });
    }
    const args = [...(options.args ?? [])];
    if (!args.some((a) => a === '--port' || a.startsWith('--port=') || a === '--config' || a === '--help' || a === '--version'))
      args.push('--port', '0');
    if (!args.some((a) => a === '--host' || a.startsWith('--host=') || a === '--config')) args.push('--host', '127.0.0.1');
    const source = sourceCommand();
    const [program, ...first] = options.command ?? source.command;
    const child = spawn(program!, [...first, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...(options.command === undefined ? source.env : {}), ...options.env },
    });
    live.add(child);
    return new TenureServerProcess(child);
  }

  /** Spawns it and waits until it serves. */
  static async start(options: TenureServerProcessOptions = {}): Promise<TenureServerProcess> {
    const p = TenureServerProcess.spawn(options);
    try {
      await p.ready(options.readyTimeoutMs);
    } catch (err) {
      p.child.kill('SIGKILL');
      throw err;
    }
    return p;
  }

  /** The `serving` log line, once it is there. */
  get serving(): TenureServerLogLine | undefined {
    return this.logs.find((l) => l.msg === 'serving');
  }

  get port(): number {
    return this.serving!.port as number;
  }

  get connectString(): string {
    return `127.0.0.1:${this.port}`;
  }

  get metricsPort(): number | undefined {
    return this.serving?.metricsPort as number | undefined;
  }

  /** Waits for the `serving` line; rejects if the process exits first. */
  async ready(timeoutMs = 20_000): Promise<void> {
    await this.until(() => this.serving !== undefined, timeoutMs, 'serving');
  }

  /** Waits until a log line matches. */
  async logged(match: (l: TenureServerLogLine) => boolean, timeoutMs = 5000): Promise<TenureServerLogLine> {
    await this.until(() => this.logs.some(match), timeoutMs, 'the log line');
    return this.logs.find(match)!;
  }

  /** Sends `signal` (default SIGTERM) and resolves with the exit and how long it took, ms. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
    const t0 = performance.now();
    if (this.exitInfo === undefined) this.child.kill(signal);
    const r = await this.exited;
    return { ...r, ms: performance.now() - t0 };
  }

  /** SIGKILL, and waits for the exit. */
  async kill(): Promise<void> {
    if (this.exitInfo === undefined) this.child.kill('SIGKILL');
    await this.exited;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.kill();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new TimeoutError(
              `tenure-server: no ${what} within ${timeoutMs} ms\nstdout: ${JSON.stringify(this.logs)}\nstderr: ${this.stderr}`,
              timeoutMs,
            ),
          ),
        timeoutMs,
      );
      const check = (): void => {
        if (done()) {
          clearTimeout(timer);
          resolve();
        } else if (this.exitInfo !== undefined) {
          clearTimeout(timer);
          reject(
            new TenureError(
              'SERVER_EXITED',
              `tenure-server exited (${JSON.stringify(this.exitInfo)}) before ${what}\nstdout: ${JSON.stringify(this.logs)}\nstderr: ${this.stderr}`,
            ),
          );
        } else this.waiters.push(check);
      };
      check();
    });
  }
}
