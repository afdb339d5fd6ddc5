import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('the README demo command (npm run demo) exits 0 within 60 s', async () => {
  const started = Date.now();
  const code = await new Promise<number>((resolve) => {
    const child = execFile('npm', ['run', 'demo'], { cwd: root, timeout: 60_000 }, (err) => {
      resolve(err ? (((err as NodeJS.ErrnoException & { code?: number }).code as unknown as number) ?? 1) : 0);
    });
    child.stdout?.resume();
  });
  expect(code).toBe(0);
  expect(Date.now() - started).toBeLessThan(60_000);
}, 70_000);
