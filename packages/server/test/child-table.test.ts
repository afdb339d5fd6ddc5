import { expect, test } from 'vitest';
import { ChildTable } from '../src/semantics/child-table.js';

/** A seeded xorshift, so that a failing sequence repeats. */
function rng(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

test('sets, gets and deletes as a Map does, in creation order, across the scanned and indexed sizes', () => {
  for (const [seed, names] of [
    [1, 6],
    [2, 20],
    [3, 300],
    [4, 5000],
  ] as const) {
    const random = rng(seed);
    const table = new ChildTable<number>();
    const model = new Map<string, number>();
    for (let step = 0; step < 20_000; step++) {
      const name = `c${Math.floor(random() * names)}`;
      const r = random();
      if (r < 0.5) expect(table.set(name, step)).toBe(!model.has(name));
      else if (r < 0.8) expect(table.delete(name)).toBe(model.delete(name));
      else expect(table.get(name)).toBe(model.get(name));
      if (r < 0.5) model.set(name, step);
      expect(table.size).toBe(model.size);
    }
    expect([...table.entries()]).toEqual([...model.entries()]);
    expect([...table.keys()]).toEqual([...model.keys()]);
    expect(table.names()).toEqual([...model.keys()]);
    for (const name of model.keys()) expect(table.get(name)).toBe(model.get(name));
  }
});

test('an iteration is live: it sees later entries, skips deleted ones, and survives compaction', () => {
  const random = rng(7);
  for (let round = 0; round < 200; round++) {
    const table = new ChildTable<number>();
    const model = new Map<string, number>();
    const start = Math.floor(random() * 60);
    for (let i = 0; i < start; i++) {
      table.set(`n${i}`, i);
      model.set(`n${i}`, i);
    }
    const ours = table.entries();
    const theirs = model.entries();
    let next = start;
    for (;;) {
      const a = ours.next();
      const b = theirs.next();
      expect(a).toEqual(b);
      if (b.done === true) break;
      // Between two steps: deletes (enough to compact the arrays) and creates.
      for (let k = Math.floor(random() * 12); k > 0; k--) {
        const victim = `n${Math.floor(random() * next)}`;
        expect(table.delete(victim)).toBe(model.delete(victim));
      }
      if (random() < 0.4) {
        table.set(`n${next}`, next);
        model.set(`n${next}`, next);
        next++;
      }
    }
  }
});

test('deleting every entry while walking, then adding again', () => {
  const table = new ChildTable<string>();
  for (let i = 0; i < 100; i++) table.set(`k${i}`, `v${i}`);
  const seen: string[] = [];
  for (const [name] of table.entries()) {
    seen.push(name);
    table.delete(name);
  }
  expect(seen).toHaveLength(100);
  expect(table.size).toBe(0);
  expect(table.get('k5')).toBeUndefined();
  table.set('k5', 'again');
  expect([...table.entries()]).toEqual([['k5', 'again']]);
});
