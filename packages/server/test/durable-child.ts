/** Starts and kills the durable server child (fixtures/durable-server.ts) for the fault tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./fixtures/durable-server.ts', import.meta.url));
const tsconfig = fileURLToPath(new URL('./fixtures/tsconfig.json', import.meta.url));

export interface DurableChild {
  port: number;
  connectString: string;
  /** What it printed so far. */
  output(): string;
  /** The `recovered` line's stats. */
  recovered: {
    durableZxid: string;
    commits: number;
    txns: number;
    snapshots: number;
    recovered: { replayed: number; snapshotZxid?: string };
  };
  kill(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
  child: ChildProcess;
}

/** Spawns the child; resolves once it listens, rejects with its output if it exits first. */
export async function startDurable(args: string[], timeoutMs = 60_000): Promise<DurableChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`durable server did not start:\n${out}`)), timeoutMs);
    const check = (): void => {
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`durable server exited:\n${out}`));
    });
  });
  const rec = /recovered (.*)/.exec(out)?.[1];
  return {
    port,
    connectString: `127.0.0.1:${port}`,
    output: () => out,
    recovered: rec ? JSON.parse(rec) : undefined,
    kill: (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    exited,
    child,
  };
}

/** Runs the child on a dir expected to be refused; resolves with its output and exit code. */
export async function runDurable(
  args: string[],
  timeoutMs = 60_000,
): Promise<{ code: number | null; output: string; child?: DurableChild }> {
  try {
    const child = await startDurable(args, timeoutMs);
    return { code: null, output: child.output(), child };
  } catch (err) {
    return { code: 2, output: (err as Error).message };
  }
}
