/**
 * The client README's "TLS" section: its snippet is examples/tls.ts verbatim, and that file runs
 * as the comments in it say.
 */
import { readFileSync } from 'node:fs';
import { expect, test, vi } from 'vitest';

test('the TLS snippet of the client README is examples/tls.ts, and it runs as its comments say', async () => {
  const readme = readFileSync(new URL('../../packages/client/README.md', import.meta.url), 'utf8');
  const source = readFileSync(new URL('../../examples/tls.ts', import.meta.url), 'utf8');
  const body = source.slice(source.indexOf('import '));
  expect(readme).toContain('## TLS');
  expect(readme).toContain(body.trim());

  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args.join(' ')));
  try {
    await import('../../examples/tls.js');
  } finally {
    log.mockRestore();
  }
  expect(lines[0]).toMatch(/^refused: no-client-certificate by 127\.0\.0\.1:\d+$/);
  expect(lines.slice(1)).toEqual(['connected as x509:CN=tenure-client,OU=tests,O=tenure', 'secret']);
});
