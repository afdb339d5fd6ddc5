import { randomBytes } from 'node:crypto';
import { expect, test } from 'vitest';
import { Adler32 } from '../src/storage/adler32.js';

/** The byte-by-byte definition (RFC 1950), to check the zlib-backed path against. */
function reference(buf: Uint8Array, start: number, end: number, a = 1, b = 0): number {
  for (let i = start; i < end; i++) {
    a = (a + buf[i]!) % 65521;
    b = (b + a) % 65521;
  }
  return b * 65536 + a;
}

test('long runs (summed by zlib in pieces) and short ones give the RFC 1950 value, alone and combined', () => {
  const buf = randomBytes((1 << 22) * 2 + 12_345);
  buf.fill(0xff, 0, 1 << 20); // all-0xff bytes stress the sums' reductions
  expect(new Adler32().update(buf).value).toBe(reference(buf, 0, buf.length));
  expect(new Adler32().update(buf, 7, 70_007).value).toBe(reference(buf, 7, 70_007));
  const split = new Adler32()
    .update(buf, 0, 100)
    .update(buf, 100, buf.length - 3)
    .update(buf, buf.length - 3);
  expect(split.value).toBe(reference(buf, 0, buf.length));
  expect(new Adler32().update(buf, 5, 5).value).toBe(1);
});

test('the small-integer loop holds its sums below 2^31 at every length around its run (all-0xff bytes, the worst case)', async () => {
  const { adler32 } = await import('../src/storage/adler32.js');
  const ff = Buffer.alloc(70_000, 0xff);
  const rnd = randomBytes(70_000);
  for (const n of [1, 2, 130, 2047, 2048, 2049, 4095, 4096, 4097, 6000, 65_535, 65_536]) {
    expect(adler32(ff, 0, n)).toBe(reference(ff, 0, n));
    expect(adler32(rnd, 3, 3 + n)).toBe(reference(rnd, 3, 3 + n));
    // A running sum whose a and b start near the modulus, then a run of 0xff.
    const running = new Adler32().update(ff, 0, 5551).update(ff, 0, n);
    expect(running.value).toBe(reference(ff, 0, n, ...split(reference(ff, 0, 5551))));
  }
});

function split(value: number): [number, number] {
  return [value % 65536, Math.floor(value / 65536)];
}
