/**
 * The client README's WebSocket snippet runs as it stands: it is cut out of the README, written
 * beside this file (so the @tenure/* aliases apply) and imported.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test, vi } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));

function snippet(readme: string, marker: string): string {
  const text = readFileSync(readme, 'utf8');
  const at = text.indexOf(marker);
  expect(at).toBeGreaterThan(0);
  const m = /```ts\n([\s\S]*?)```/.exec(text.slice(at));
  return m![1]!;
}

test("the client README's WebSocket snippet runs and prints what it wrote", async () => {
  const code = snippet(join(here, '../../client/README.md'), '<!-- websocket-snippet -->');
  const file = join(here, `.readme-snippet-${process.pid}.ts`);
  writeFileSync(file, code);
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    await import(/* @vite-ignore */ file);
    expect(log).toHaveBeenCalledWith('over WebSocket', 'from', expect.stringMatching(/^ws:\/\/127\.0\.0\.1:\d+\/zookeeper$/));
  } finally {
    log.mockRestore();
    rmSync(file, { force: true });
  }
});
