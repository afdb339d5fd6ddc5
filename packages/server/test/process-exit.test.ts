import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

test('a process holding an embedded server with sessions, containers and TTL nodes exits without close()', async () => {
  const script = fileURLToPath(new URL('./fixtures/idle-server.ts', import.meta.url));
  const tsconfig = fileURLToPath(new URL('./fixtures/tsconfig.json', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const started = performance.now();
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(null);
    }, 20_000);
    child.on('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  expect(out).toContain('ready 1');
  expect(code).toBe(0);
  // It left as soon as its work was done, not when the session (60 s) or the TTL (60 s) ran out.
  expect(performance.now() - started).toBeLessThan(15_000);
});
