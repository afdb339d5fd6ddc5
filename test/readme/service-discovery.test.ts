/**
 * The discovery README's first example and examples/service-discovery.ts run (from source, through
 * tsx and bench/tsconfig.json's paths, so no build is needed), exit 0 and print what they say.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function run(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', file],
      { cwd: root, timeout: 60_000, env: { ...process.env, TSX_TSCONFIG_PATH: `${root}bench/tsconfig.json` } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as NodeJS.ErrnoException).code ?? 1) || 1 : 0, stdout, stderr }),
    );
  });
}

test('examples/service-discovery.ts registers, round-robins, skips a down instance, heals an expiry and leaves nothing', async () => {
  const { code, stdout } = await run('examples/service-discovery.ts');
  expect(code).toBe(0);
  expect(stdout).toContain("services: [ 'orders' ]");
  expect(stdout).toMatch(
    /call 0 -> http:\/\/10\.0\.0\.1:8080\/v1\ncall 1 -> http:\/\/10\.0\.0\.2:8080\/v1\ncall 2 -> http:\/\/10\.0\.0\.1:8080\/v1/,
  );
  expect(stdout).toContain('after two errors on orders-b: orders-a\n');
  expect(stdout).toContain('orders-a is back, payload {"@class":"org.springframework.cloud.zookeeper.discovery.ZookeeperInstance"');
  expect(stdout).toContain('nodes left under /services/orders: 0');
}, 70_000);

test("the discovery README's first example runs and prints the instance's URI", async () => {
  const readme = readFileSync(`${root}packages/discovery/README.md`, 'utf8');
  const first = /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
  const dir = mkdtempSync(join(tmpdir(), 'tenure-readme-'));
  try {
    writeFileSync(join(dir, 'first.mts'), first);
    const { code, stdout, stderr } = await run(join(dir, 'first.mts'));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^http:\/\/[\d.]*:8080\n$/); // no address on a host without a non-loopback IPv4
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 70_000);
