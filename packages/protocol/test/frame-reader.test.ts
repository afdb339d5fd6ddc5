/** FrameReader: frames out of a byte stream cut anywhere; bad lengths are typed errors. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FOUR_LETTER_WORDS, FrameLengthError, FrameReader, ProtocolError, fourLetterWord, frame } from '@tenure/protocol';

/** Runs of the random-chunking property; reported in the package README. */
export const CHUNKING_RUNS = 300;

const payloads = [Buffer.from('hello'), Buffer.alloc(0), Buffer.alloc(300, 1), Buffer.from([0, 0, 0, 4]), Buffer.from('z')];
const stream = Buffer.concat(payloads.map(frame));

function readAll(reader: FrameReader, chunks: Buffer[]): Buffer[] {
  return chunks.flatMap((c) => reader.push(c));
}

function expectThrows(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError);
    return e as ProtocolError;
  }
  throw new Error('expected a ProtocolError');
}

describe('FrameReader', () => {
  it('returns every frame of one chunk, as views of it', () => {
    const frames = new FrameReader().push(stream);
    expect(frames).toEqual(payloads);
    expect(frames[0]!.buffer).toBe(stream.buffer);
  });

  it('handles a split at every position, including inside the length prefix', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const reader = new FrameReader();
      expect(readAll(reader, [stream.subarray(0, cut), stream.subarray(cut)])).toEqual(payloads);
      expect(reader.buffered).toBe(0);
    }
  });

  it('handles one byte at a time', () => {
    const reader = new FrameReader();
    const bytes = Array.from(stream, (b) => Buffer.from([b]));
    expect(readAll(reader, bytes)).toEqual(payloads);
  });

  it('holds an incomplete frame without returning it (no hang, no partial frame)', () => {
    const reader = new FrameReader();
    expect(reader.push(stream.subarray(0, 7))).toEqual([]);
    expect(reader.buffered).toBe(7);
    expect(reader.push(Buffer.alloc(0))).toEqual([]);
    expect(reader.push(stream.subarray(7, 9))).toEqual([payloads[0]]);
  });

  it('a frame assembled across chunks is not changed by later chunks', () => {
    const reader = new FrameReader();
    const [first] = readAll(reader, [stream.subarray(0, 6), stream.subarray(6, 9)]);
    reader.push(stream.subarray(9));
    expect(first).toEqual(payloads[0]);
  });

  it('accepts a frame of exactly maxFrameBytes (1,048,575 by default)', () => {
    const big = Buffer.alloc(0xfffff, 9);
    const whole = frame(big);
    const reader = new FrameReader();
    const chunks: Buffer[] = [];
    for (let i = 0; i < whole.length; i += 65536) chunks.push(whole.subarray(i, i + 65536));
    const out = readAll(reader, chunks);
    expect(out).toHaveLength(1);
    expect(out[0]!.equals(big)).toBe(true);
  });

  it.each([
    ['1,048,576', '00100000', 0x100000],
    ['-1', 'ffffffff', -1],
    ['-2147483648', '80000000', -2147483648],
    ['2147483647', '7fffffff', 2147483647],
  ])('rejects length %s with FrameLengthError, also when the prefix is split', (_n, hexLen, length) => {
    const prefix = Buffer.from(hexLen, 'hex');
    const err = expectThrows(() => new FrameReader().push(Buffer.concat([prefix, Buffer.alloc(8)])));
    expect(err).toBeInstanceOf(FrameLengthError);
    expect((err as FrameLengthError).length).toBe(length);
    expect((err as FrameLengthError).prefix.equals(prefix)).toBe(true);

    const split = new FrameReader();
    expect(split.push(prefix.subarray(0, 1))).toEqual([]);
    expectThrows(() => split.push(prefix.subarray(1)));
    // The stream has lost its boundaries: later pushes fail too rather than yield garbage.
    expectThrows(() => split.push(frame(Buffer.from('ok'))));
  });

  it('honours a custom limit', () => {
    const reader = new FrameReader(10);
    expect(reader.push(frame(Buffer.alloc(10)))).toHaveLength(1);
    expectThrows(() => reader.push(frame(Buffer.alloc(11))));
  });

  it('frames good data after bad length only in a fresh reader', () => {
    expect(new FrameReader().push(frame(Buffer.from('ok')))).toEqual([Buffer.from('ok')]);
  });

  it('yields the same frames for any chunking (property)', () => {
    const frames = fc.array(
      fc.uint8Array({ maxLength: 200 }).map((u) => Buffer.from(u)),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(frames, fc.array(fc.nat(), { maxLength: 20 }), (list, cutsRaw) => {
        const bytes = Buffer.concat(list.map(frame));
        const cuts = [...new Set(cutsRaw.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks: Buffer[] = [];
        let last = 0;
        for (const c of [...cuts, bytes.length]) {
          chunks.push(bytes.subarray(last, c));
          last = c;
        }
        const reader = new FrameReader();
        expect(readAll(reader, chunks)).toEqual(list);
        expect(reader.buffered).toBe(0);
      }),
      { numRuns: CHUNKING_RUNS },
    );
  });
});

describe('four-letter words', () => {
  it.each([...FOUR_LETTER_WORDS])('%s is recognised', (word) => {
    expect(fourLetterWord(Buffer.from(word, 'latin1'))).toBe(word);
  });

  it('ordinary frame lengths and junk are not words', () => {
    expect(fourLetterWord(Buffer.from('0000002d', 'hex'))).toBeUndefined();
    expect(fourLetterWord(Buffer.from('ruo'))).toBeUndefined();
    expect(fourLetterWord(Buffer.from('RUOK'))).toBeUndefined();
    expect(fourLetterWord(Buffer.from('abcd'))).toBeUndefined();
  });

  it('a word sent to a FrameReader surfaces in FrameLengthError.prefix', () => {
    const err = expectThrows(() => new FrameReader().push(Buffer.from('ruok'))) as FrameLengthError;
    expect(fourLetterWord(err.prefix)).toBe('ruok');
    // stmk is followed by an 8-byte trace mask; the prefix is still the word.
    const stmk = expectThrows(() => new FrameReader().push(Buffer.concat([Buffer.from('stmk'), Buffer.alloc(8)]))) as FrameLengthError;
    expect(fourLetterWord(stmk.prefix)).toBe('stmk');
  });
});
