/**
 * Adler-32 (RFC 1950), the checksum ZooKeeper's FileTxnLog puts before every record and FileSnap
 * seals a snapshot with (java.util.zip.Adler32). Node's zlib does not expose it.
 */
const MOD = 65521;
/** The largest run of bytes whose sums cannot overflow 2^53 before a reduction (zlib's NMAX is for 32 bits). */
const RUN = 1 << 20;

/** A running Adler-32: `update` any number of times, then `value`. */
export class Adler32 {
  private a = 1;
  private b = 0;

  update(buf: Uint8Array, start = 0, end = buf.length): this {
    let { a, b } = this;
    let i = start;
    while (i < end) {
      const stop = Math.min(end, i + RUN);
      for (; i < stop; i++) {
        a += buf[i]!;
        b += a;
      }
      a %= MOD;
      b %= MOD;
    }
    this.a = a;
    this.b = b;
    return this;
  }

  /** The checksum so far, as the unsigned value Java's Checksum.getValue() gives. */
  get value(): number {
    return this.b * 65536 + this.a;
  }
}

export function adler32(buf: Uint8Array, start = 0, end = buf.length): number {
  return new Adler32().update(buf, start, end).value;
}
