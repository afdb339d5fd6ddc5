/**
 * examples/service-discovery.ts, the discovery README's first example, runs (from source, through
 * tsx and bench/tsconfig.json's paths, so no build is needed), exits 0 and prints what it says.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('examples/service-discovery.ts registers, round-robins, skips a down instance, heals an expiry and leaves nothing', async () => {
  const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'examples/service-discovery.ts'],
      { cwd: root, timeout: 60_000, env: { ...process.env, TSX_TSCONFIG_PATH: `${root}bench/tsconfig.json` } },
      (err, out) => resolve({ code: err ? Number((err as NodeJS.ErrnoException).code ?? 1) || 1 : 0, stdout: out }),
    );
  });
  expect(code).toBe(0);
  expect(stdout).toContain("services: [ 'orders' ]");
  expect(stdout).toMatch(/call 0 -> http:\/\/10\.0\.0\.1:8080\/v1\ncall 1 -> http:\/\/10\.0\.0\.2:8080\/v1\ncall 2 -> http:\/\/10\.0\.0\.1:8080\/v1/);
  expect(stdout).toContain('after two errors on orders-b: orders-a\n');
  expect(stdout).toContain('orders-a is back, payload {"@class":"org.springframework.cloud.zookeeper.discovery.ZookeeperInstance"');
  expect(stdout).toContain('nodes left under /services/orders: 0');
}, 70_000);
