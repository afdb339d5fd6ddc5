/**
 * ZooKeeper's own command-line client, zkCli.sh from Debian's `zookeeper` package, for the interop
 * suites: commands on its stdin (one per line, then EOF, which ends it), its stdout and stderr
 * together back (zkCli 3.8 prints results on both).
 */
import { spawn } from 'node:child_process';

export const ZKCLI = '/usr/share/zookeeper/bin/zkCli.sh';

/** Runs zkCli.sh against `server` (host:port) with `commands`; SIGKILLs it after `timeoutMs`. */
export async function zkCli(server: string, commands: string[], timeoutMs = 60_000): Promise<string> {
  return (await zkCliRun(server, commands, timeoutMs)).output;
}

/** zkCli's exit code as well as its output. */
export function zkCliRun(server: string, commands: string[], timeoutMs = 60_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [ZKCLI, '-server', server], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, JVMFLAGS: '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto -Xmx128m' },
    });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`zkCli.sh did not finish within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
    child.stdin.end(commands.join('\n') + '\n');
  });
}
