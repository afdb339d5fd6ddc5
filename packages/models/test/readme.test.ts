/** The README's first example runs as written. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';

it("the README's first example runs and prints what its comments say", async () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const code = /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
  const dir = mkdtempSync(join(tmpdir(), 'models-readme-'));
  const logs: unknown[][] = [];
  const spy = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logs.push(args));
  try {
    writeFileSync(join(dir, 'first.ts'), code);
    await import(/* @vite-ignore */ join(dir, 'first.ts'));
  } finally {
    spy.mockRestore();
    rmSync(dir, { recursive: true, force: true });
  }
  expect(logs).toEqual([[{ name: 'Alice', age: 31, roles: [] }, 0], ['MODEL_VALIDATION', 2], [32]]);
});

it('the README lists every exported error code', async () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Errors'), readme.indexOf('## Tests'));
  const entry = (await import('@tenure/models')) as Record<string, unknown>;
  for (const [name, C] of Object.entries(entry)) {
    if (typeof C !== 'function' || !(C.prototype instanceof Error)) continue;
    const code = new (C as new () => { code: string })().code;
    expect(section, `${name} (${code})`).toContain(`'${code}'`);
  }
});
