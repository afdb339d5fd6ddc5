/**
 * A bench's child process that answers one stdout line per stdin command line: the drivers of
 * bench/sessions.ts and the workers of bench/clients.ts as bench/client-cpu.ts runs them.
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export class LineChild {
  private readonly lines: AsyncIterator<string>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    this.lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  }

  /** Sends `command` (none: only waits for the next line) and resolves the answer; an `error …` line rejects. */
  async ask(command?: string): Promise<string> {
    if (command !== undefined) this.child.stdin!.write(`${command}\n`);
    const { value, done } = await this.lines.next();
    if (done) throw new Error(`${this.name} exited`);
    if ((value as string).startsWith('error')) throw new Error(`${this.name}: ${value as string}`);
    return value as string;
  }

  /** Ends its stdin (the child exits when its commands end) and waits for the exit. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin!.end();
    await exited;
  }
}
