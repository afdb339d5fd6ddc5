/** The README's first example is this folder's first-example.ts, verbatim, and it runs. */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';

describe('README', () => {
  it('shows first-example.ts verbatim, and it runs to the end', async () => {
    const source = readFileSync(new URL('./first-example.ts', import.meta.url), 'utf8');
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain('```ts\n' + source + '```');
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      await import('./first-example.js');
      expect(log.mock.calls.map((c) => String(c[0])).sort()).toEqual(['a is working', 'all done', 'b is working', 'c is working']);
    } finally {
      log.mockRestore();
    }
  });
});
