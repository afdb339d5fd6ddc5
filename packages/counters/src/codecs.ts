/**
 * The byte formats, as Curator writes them: big-endian two's complement, 4 bytes for an int
 * (SharedCount, DistributedAtomicInteger), 8 for a long (DistributedAtomicLong). Readers decode the
 * first 4 or 8 bytes and ignore the rest; shorter data is corrupt, except that the atomic values
 * read a missing or empty node as 0.
 */
import { CorruptedValueError } from './errors.js';
import { InvalidArgumentError } from '@tenure/client';

/** How a recipe turns its values into node data and back. */
export interface Codec<T> {
  encode(value: T): Buffer;
  decode(bytes: Buffer, path: string): T;
}

export interface FixedCodec<T> extends Codec<T> {
  readonly zero: T;
  /** `a + b`, wrapping around as Java's int or long arithmetic does. */
  add(a: T, b: T): T;
  /** Throws RangeError unless `value` fits. */
  check(value: T, what: string): T;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function fixed<T>(
  size: number,
  zero: T,
  read: (b: Buffer) => T,
  write: (b: Buffer, v: T) => void,
  fits: (v: T) => boolean,
  add: (a: T, b: T) => T,
): FixedCodec<T> {
  const codec: FixedCodec<T> = {
    zero,
    add,
    check(value, what) {
      if (!fits(value)) throw new InvalidArgumentError(`${what} must be a ${size * 8}-bit signed integer, got ${String(value)}`);
      return value;
    },
    encode(value) {
      const b = Buffer.alloc(size);
      write(b, codec.check(value, 'the value'));
      return b;
    },
    decode(bytes, path) {
      if (bytes.length < size) throw new CorruptedValueError(path, bytes, `at least ${size} bytes`);
      return read(bytes);
    },
  };
  return codec;
}

/** Java's int: SharedCount and AtomicInteger. */
export const int32: FixedCodec<number> = fixed(
  4,
  0,
  (b) => b.readInt32BE(0),
  (b, v) => b.writeInt32BE(v, 0),
  (v) => Number.isInteger(v) && v >= -0x8000_0000 && v <= 0x7fff_ffff,
  (a, b) => (a + b) | 0,
);

/** Java's long: AtomicLong. */
export const int64: FixedCodec<bigint> = fixed(
  8,
  0n,
  (b) => b.readBigInt64BE(0),
  (b, v) => b.writeBigInt64BE(v, 0),
  (v) => typeof v === 'bigint' && v >= INT64_MIN && v <= INT64_MAX,
  (a, b) => BigInt.asIntN(64, a + b),
);

/** Raw bytes (SharedValue). */
export const bytes: Codec<Buffer> = {
  encode: (value) => Buffer.from(value),
  decode: (b) => b,
};

/** As DistributedAtomicValue reads: a missing or empty node is 0. */
export function decodeOrZero<T>(codec: FixedCodec<T>, data: Buffer | null, path: string): T {
  return data === null || data.length === 0 ? codec.zero : codec.decode(data, path);
}
