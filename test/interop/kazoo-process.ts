/**
 * A child process that speaks one JSON object per stdout line (the kazoo workers under kazoo/ and
 * the Tenure member fixture), for the kazoo interop suites: its lines as events, the wait for a
 * line that matches, SIGKILL and a clean stop. Orphan-proof: the child is killed when this
 * process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { EventEmitter } from 'node:events';

export const PYTHON = '/usr/bin/python3';
export const KAZOO_DIR = fileURLToPath(new URL('./kazoo/', import.meta.url));

export function hasKazoo(): boolean {
  return existsSync(PYTHON) && existsSync('/usr/lib/python3/dist-packages/kazoo/__init__.py');
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export type Line = Record<string, unknown>;

export class LineProcess extends EventEmitter<{ line: [Line] }> {
  readonly lines: Line[] = [];
  readonly exited: Promise<number | null>;
  private stderr = '';

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    super();
    live.add(child);
    createInterface({ input: child.stdout! }).on('line', (l) => {
      let parsed: Line;
      try {
        parsed = JSON.parse(l) as Line;
      } catch {
        parsed = { text: l };
      }
      this.lines.push(parsed);
      this.emit('line', parsed);
    });
    child.stderr!.on('data', (b: Buffer) => (this.stderr += b.toString()));
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        live.delete(child);
        resolve(code);
      }),
    );
  }

  /** A kazoo worker: `python3 kazoo/<script> args…`. */
  static python(name: string, script: string, args: readonly string[]): LineProcess {
    return new LineProcess(name, spawn(PYTHON, ['-u', `${KAZOO_DIR}${script}`, ...args], { stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  /** A Tenure fixture: `node --import tsx kazoo/<script> args…`, with the fixtures' tsconfig paths to the sources. */
  static tenure(name: string, script: string, args: readonly string[]): LineProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', `${KAZOO_DIR}${script}`, ...args], {
      cwd: KAZOO_DIR,
      env: { ...process.env, TSX_TSCONFIG_PATH: `${KAZOO_DIR}tsconfig.json` },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new LineProcess(name, child);
  }

  /** The first line (already seen or to come) that `match` accepts. */
  next(match: (line: Line) => boolean, timeoutMs = 60_000, fromIndex = 0): Promise<Line> {
    const seen = this.lines.slice(fromIndex).find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('line', onLine);
        reject(
          new Error(
            `${this.name}: no matching line within ${timeoutMs} ms; lines:\n${this.lines.map((l) => JSON.stringify(l)).join('\n')}\nstderr:\n${this.stderr}`,
          ),
        );
      }, timeoutMs);
      const onLine = (l: Line): void => {
        if (!match(l)) return;
        clearTimeout(timer);
        this.off('line', onLine);
        resolve(l);
      };
      this.on('line', onLine);
      void this.exited.then(() => {
        if (!this.listeners('line').includes(onLine)) return;
        clearTimeout(timer);
        this.off('line', onLine);
        reject(new Error(`${this.name} exited; lines:\n${this.lines.map((x) => JSON.stringify(x)).join('\n')}\nstderr:\n${this.stderr}`));
      });
    });
  }

  /** Sends one command line and waits for the next line that `match` accepts. */
  ask(command: string, match: (line: Line) => boolean, timeoutMs = 60_000): Promise<Line> {
    const from = this.lines.length;
    this.child.stdin!.write(command + '\n');
    return this.next(match, timeoutMs, from);
  }

  send(command: string): void {
    this.child.stdin!.write(command + '\n');
  }

  /** SIGKILL: no close, no closeSession; the session expires on the server. */
  kill(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
    return this.exited;
  }

  /** Ends stdin and waits for the exit (SIGKILL after `timeoutMs`). */
  async stop(timeoutMs = 20_000): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
