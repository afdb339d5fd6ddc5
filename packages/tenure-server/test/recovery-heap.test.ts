import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { beginRecovery, endRecovery } from '../src/recovery-heap.js';

/** The young generation's capacity (both semispaces), in bytes. */
const youngCapacity = (): number => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;

/** Allocates objects that all survive, as recovery does, and returns them (kept alive by the caller). */
function survivors(n: number): Array<{ id: number; name: string }> {
  const out: Array<{ id: number; name: string }> = [];
  for (let i = 0; i < n; i++) out.push({ id: i, name: `n${i}` });
  return out;
}

describe('recovery-heap', () => {
  it('holds the young generation at its size through a recovery-like load, then lets V8 grow it again', () => {
    beginRecovery();
    const before = youngCapacity();
    const held = survivors(1_500_000);
    // Held: what survives cannot grow it (V8 would double it on each high-survival scavenge).
    expect(youngCapacity()).toBe(before);
    endRecovery(true);
    const more = survivors(1_500_000);
    // V8's policy again: the same load grows it (unless it was already at its maximum).
    expect(youngCapacity() > before || before >= 32 * 1024 * 1024).toBe(true);
    expect(held.length + more.length).toBe(3_000_000);
  });
});
