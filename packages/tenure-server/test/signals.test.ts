/**
 * tenure-server's signal handling has no window: a SIGTERM sent the moment the `serving` line is
 * read (from the same stdout chunk, without waiting a tick) stops the process with exit 0, every time.
 */
import { expect, test } from 'vitest';
import { TenureServerProcess } from '@tenure/testing';

async function sigtermOnServing(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const p = TenureServerProcess.spawn({ args: [] });
  let sent = false;
  p.child.stdout!.on('data', (b: Buffer) => {
    if (!sent && b.toString().includes('"msg":"serving"')) {
      sent = true;
      p.child.kill('SIGTERM');
    }
  });
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 30_000);
  const r = await p.exited;
  clearTimeout(timer);
  expect(sent).toBe(true);
  return r;
}

test('SIGTERM right on the `serving` line exits 0, ten times out of ten', async () => {
  const results: Array<{ code: number | null; signal: NodeJS.Signals | null }> = [];
  // Two at a time: each start through tsx takes a second or two on a busy machine.
  for (let i = 0; i < 10; i += 2) results.push(...(await Promise.all([sigtermOnServing(), sigtermOnServing()])));
  expect(results).toEqual(Array.from({ length: 10 }, () => ({ code: 0, signal: null })));
}, 180_000);
