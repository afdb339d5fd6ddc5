/**
 * Adler-32 (RFC 1950), the checksum ZooKeeper's FileTxnLog puts before every record and FileSnap
 * seals a snapshot with (java.util.zip.Adler32). Node's zlib does not expose it, but a zlib stream
 * ends with the Adler-32 of its input: a long run (a snapshot's tens of megabytes) is summed by
 * zlib's native code through a stored (level 0) deflate, piece by piece, the pieces joined with
 * `combine`; short runs (log records) stay in the JS loop, cheaper than a zlib call.
 */
import { deflateSync } from 'node:zlib';

const MOD = 65521;
/**
 * Bytes summed between two reductions: from sums below MOD, 2048 bytes keep b below 2^31 (at most
 * ~6.7e8), so the loop runs on small integers; with doubles it was ~2.7x slower per byte.
 */
const RUN = 2048;

/** Runs at least this long go to zlib; it sums them in pieces of NATIVE_PIECE bytes. */
const NATIVE_MIN = 1 << 16;
const NATIVE_PIECE = 1 << 22;

/**
 * The Adler-32 of `piece`: the last 4 bytes of its zlib stream (stored blocks, so no compression
 * work). The output is made one chunk (stored blocks add 5 bytes per 64 KiB): zlib's default
 * 16 KiB chunks were joined by a copy that cost as much as the summing.
 */
function nativeAdler32(piece: Uint8Array): number {
  const z = deflateSync(piece, { level: 0, memLevel: 1, windowBits: 9, chunkSize: piece.length + (piece.length >> 10) + 64 });
  return z.readUInt32BE(z.length - 4);
}

/** A running Adler-32: `update` any number of times, then `value`. */
export class Adler32 {
  private a = 1;
  private b = 0;

  /** Back to the sum of no bytes. */
  reset(): this {
    this.a = 1;
    this.b = 0;
    return this;
  }

  update(buf: Uint8Array, start = 0, end = buf.length): this {
    if (end - start >= NATIVE_MIN) {
      for (let i = start; i < end; i += NATIVE_PIECE) {
        const stop = Math.min(end, i + NATIVE_PIECE);
        this.combine(nativeAdler32(buf.subarray(i, stop)), stop - i);
      }
      return this;
    }
    let { a, b } = this;
    let i = start;
    while (i < end) {
      const stop = Math.min(end, i + RUN);
      for (; i < stop; i++) {
        a = (a + buf[i]!) | 0;
        b = (b + a) | 0;
      }
      a %= MOD;
      b %= MOD;
    }
    this.a = a;
    this.b = b;
    return this;
  }

  /**
   * Appends a run of `length` bytes whose own Adler-32 is `value` (zlib's adler32_combine), so a
   * checksum can be summed in pieces and the pieces put in any order of computation.
   */
  combine(value: number, length: number): this {
    const a2 = value % 65536;
    const b2 = Math.floor(value / 65536);
    const n = length % MOD;
    const a = this.a;
    this.a = (a + a2 + MOD - 1) % MOD;
    this.b = (this.b + b2 + ((n * ((a + MOD - 1) % MOD)) % MOD)) % MOD;
    return this;
  }

  /** The checksum so far, as the unsigned value Java's Checksum.getValue() gives. */
  get value(): number {
    return this.b * 65536 + this.a;
  }
}

/** One sum reused by `adler32` (synchronous, so never in use twice): no object made per log record. */
const scratch = new Adler32();

export function adler32(buf: Uint8Array, start = 0, end = buf.length): number {
  return scratch.reset().update(buf, start, end).value;
}
