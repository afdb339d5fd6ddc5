/** The README's first example runs as written. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';

it("the README's first example runs and prints what its comments say", async () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const code = /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
  const dir = mkdtempSync(join(tmpdir(), 'counters-readme-'));
  const logs: string[] = [];
  const spy = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(' ')));
  try {
    writeFileSync(join(dir, 'first.ts'), code);
    await import(/* @vite-ignore */ join(dir, 'first.ts'));
  } finally {
    spy.mockRestore();
    rmSync(dir, { recursive: true, force: true });
  }
  expect(logs).toEqual(['true 0 1', 'max-workers is now 4 at version 0', 'max-workers is now 5 at version 1']);
});
