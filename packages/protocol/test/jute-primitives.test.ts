/** JuteReader / JuteWriter primitives against Node's own encoders, at the edges of their fast paths. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JuteReader, JuteWriter, ProtocolError } from '@tenure/protocol';
import { statArb } from './fixtures.js';

describe('JuteWriter / JuteReader', () => {
  it('longs match Buffer.writeBigInt64BE over the whole range, and wrap past it', () => {
    const edge = [0n, 1n, -1n, (1n << 53n) - 1n, 1n << 53n, (1n << 63n) - 1n, -(1n << 63n), 0x0100_0000_0000_0001n];
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...edge), fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n })), (v) => {
        const ref = Buffer.alloc(8);
        ref.writeBigInt64BE(v);
        const mine = new JuteWriter(0).long(v).toBuffer();
        expect(mine.equals(ref)).toBe(true);
        expect(new JuteReader(mine).long()).toBe(v);
      }),
      { numRuns: 300 },
    );
    expect(new JuteReader(new JuteWriter().long(1n << 64n).toBuffer()).long()).toBe(0n);
    expect(new JuteReader(new JuteWriter().long(1n << 63n).toBuffer()).long()).toBe(-(1n << 63n));
  });

  it.each([
    ['empty', ''],
    ['63 ascii', 'a'.repeat(63)],
    ['64 ascii', '/'.repeat(64)],
    ['65 ascii', 'b'.repeat(65)],
    ['non-ascii at the end', 'a'.repeat(63) + 'é'],
    ['non-ascii first', 'ü' + 'a'.repeat(10)],
    ['CJK and emoji', '日本/😀'],
    ['DEL and controls', '\u007f\u0001'],
  ])('strings are standard UTF-8 (%s)', (_n, s) => {
    const bytes = new JuteWriter(1).ustring(s).toBuffer();
    const utf8 = Buffer.from(s, 'utf8');
    expect(bytes.readInt32BE(0)).toBe(utf8.length);
    expect(bytes.subarray(4).equals(utf8)).toBe(true);
    expect(new JuteReader(bytes).ustring()).toBe(s);
  });

  it('null vs empty for strings, buffers and vectors', () => {
    const w = new JuteWriter().ustring(null).ustring('').buffer(null).buffer(Buffer.alloc(0)).strings(null).strings([]);
    expect(w.toBuffer().toString('hex')).toBe('ffffffff00000000ffffffff00000000ffffffff00000000');
    const r = new JuteReader(w.toBuffer());
    expect([r.ustring(), r.ustring(), r.buffer(), r.buffer(), r.strings(), r.strings()]).toEqual([
      null,
      '',
      null,
      Buffer.alloc(0),
      null,
      [],
    ]);
    expect(r.remaining).toBe(0);
  });

  it('stats round-trip (times before the epoch and up to 2^53)', () => {
    fc.assert(
      fc.property(statArb, (s) => {
        const bytes = new JuteWriter(0).stat(s).toBuffer();
        expect(bytes.length).toBe(68);
        expect(new JuteReader(bytes).stat()).toEqual(s);
        // ctime/mtime written as numbers equal the long Java writes.
        expect(bytes.readBigInt64BE(16)).toBe(BigInt(s.ctime));
      }),
      { numRuns: 300 },
    );
  });

  it('a writer that starts empty still grows; reset reuses it', () => {
    const w = new JuteWriter(0);
    for (let i = 0; i < 100; i++) w.int(i);
    expect(w.length).toBe(400);
    expect(w.reset().length).toBe(0);
    expect(w.int(7).toBufferCopy()).toEqual(Buffer.from([0, 0, 0, 7]));
  });

  it('reads past the end throw ProtocolError', () => {
    const r = new JuteReader(Buffer.alloc(3));
    expect(() => r.int()).toThrow(ProtocolError);
    expect(() => new JuteReader(Buffer.alloc(7)).long()).toThrow(ProtocolError);
    expect(() => new JuteReader(Buffer.alloc(67)).stat()).toThrow(ProtocolError);
    expect(() => new JuteReader(Buffer.alloc(0)).bool()).toThrow(ProtocolError);
  });
});
