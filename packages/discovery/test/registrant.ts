/** Runs fixtures/tenure-registrant.ts in a child process: a Tenure service that registers one instance. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ServiceInstanceInit } from '../src/index.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

export class Registrant {
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (l) => void this.lines.push(l));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Starts the child and waits for its "registered" line. */
  static async start(
    connectString: string,
    sessionTimeoutMs: number,
    basePath: string,
    instance: ServiceInstanceInit,
    timeoutMs = 30_000,
  ): Promise<Registrant> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', `${FIXTURES}tenure-registrant.ts`, connectString, String(sessionTimeoutMs), basePath, JSON.stringify(instance)],
      {
        cwd: FIXTURES,
        env: { ...process.env, TSX_TSCONFIG_PATH: `${FIXTURES}tsconfig.json` },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const r = new Registrant(child);
    const deadline = Date.now() + timeoutMs;
    while (!r.lines.some((l) => l.startsWith('registered '))) {
      if (r.child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`the registrant did not register (exit ${r.child.exitCode}): ${r.lines.join('\n')}`);
      }
      await new Promise((res) => setTimeout(res, 20));
    }
    return r;
  }

  /** SIGKILL: no close, no closeSession; the session expires on the server. */
  kill(): Promise<number | null> {
    this.child.kill('SIGKILL');
    return this.exited;
  }

  /** Ends stdin: the child closes its registry and client and exits. */
  async close(): Promise<number | null> {
    this.child.stdin!.end();
    return this.exited;
  }
}
