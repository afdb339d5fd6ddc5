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
