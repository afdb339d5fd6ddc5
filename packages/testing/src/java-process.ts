/**
 * A Java process that cannot outlive the test process.
 *
 * Java is started under a tiny `sh` watchdog that holds our end of a stdin pipe: when that pipe
 * closes, for whatever reason (we stop the server, the test process exits, crashes or is killed
 * with SIGKILL), the watchdog kills Java with SIGKILL. So no orphan JVM survives a test run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

// fd 3 keeps the pipe; java gets /dev/null as stdin and does not inherit fd 3.
const WATCHDOG = 'exec 3<&0; "$@" </dev/null 3<&- & j=$!; { cat <&3 >/dev/null; kill -9 $j 2>/dev/null; } & wait $j';

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Closing the pipe is what the watchdog waits for; the OS does it on any exit, this makes it prompt.
  process.on('exit', () => {
    for (const child of live) child.stdin?.destroy();
  });
}

export interface JavaProcessOptions {
  java: string;
  args: string[];
  cwd: string;
  /** stdout and stderr go to this file. */
  logFile: string;
}

export class JavaProcess {
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  private exitCode: number | null | undefined;

  constructor(private readonly options: JavaProcessOptions) {
    installExitHook();
    const log = openSync(options.logFile, 'a');
    try {
      this.child = spawn('sh', ['-c', WATCHDOG, 'tenure-zk', options.java, ...options.args], {
        cwd: options.cwd,
        stdio: ['pipe', log, log],
      });
    } finally {
      closeSync(log);
    }
    live.add(this.child);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code) => {
        this.exitCode = code;
        live.delete(this.child);
        this.child.stdin?.destroy(); // lets the watchdog's `cat` finish
        resolve(code);
      });
      this.child.once('error', () => {
        this.exitCode = null;
        live.delete(this.child);
        resolve(null);
      });
    });
    // Never keep the test process alive just because a server runs.
    this.child.unref();
    (this.child.stdin as unknown as { unref?(): void } | null)?.unref?.();
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** The last lines Java wrote, for error messages. */
  logTail(lines = 30): string {
    try {
      return readFileSync(this.options.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  /** Kills Java (SIGKILL, like a crash) and waits until it is gone. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.child.stdin?.destroy();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
