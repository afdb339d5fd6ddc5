/** A process that uses a server and a client exits on its own once both are closed. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

describe('process exit', () => {
  it('a child process that starts a server and a client, then closes both, exits on its own within 5 s', async () => {
    const started = performance.now();
    let closedAt = 0;
    let out = '';
    let err = '';
    const child = spawn(process.execPath, ['--import', 'tsx', `${fixtures}exit-child.ts`], {
      cwd: fixtures,
      env: { ...process.env, TSX_TSCONFIG_PATH: `${fixtures}tsconfig.json` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('closed') && closedAt === 0) closedAt = performance.now();
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.on('exit', (c) => {
        clearTimeout(killer);
        resolve(c);
      });
    });
    const exitedAt = performance.now();
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('closed');
    expect(exitedAt - started).toBeLessThan(5000);
    // Once closed, nothing keeps the process alive.
    expect(exitedAt - closedAt).toBeLessThan(1000);
  }, 20_000);
});
