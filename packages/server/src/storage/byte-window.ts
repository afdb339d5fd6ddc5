/**
 * A file read front to back through one window of bytes, for the snapshot decode and the log
 * replay: a snapshot of a million nodes is ~190 MB, and reading it whole would hold all of it
 * until the next full GC, long after the tree is built. The window holds the bytes from `base` (a
 * file offset) up to `end`; a decoder works in window offsets and calls `have` before each
 * record, which slides the window (and grows it for a record larger than it). The Adler-32 of
 * every byte the window lets go is kept, so the seal is checked without a second pass.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { Adler32 } from './adler32.js';

const WINDOW_BYTES = 4 << 20;

export class ByteWindow {
  buf: Buffer;
  dv: DataView;
  /** The file offset of buf[0]. */
  base = 0;
  /** Bytes of buf that hold file data. */
  end: number;
  /** The checksum of the file's bytes before base + `summed` (none for a window opened without). */
  private readonly adler: Adler32 | undefined;
  private summed = 0;

  private constructor(
    buf: Buffer,
    end: number,
    /** The file's size. */
    readonly size: number,
    private readonly fd: number | undefined,
    sum: boolean,
  ) {
    this.adler = sum ? new Adler32() : undefined;
    this.buf = buf;
    this.end = end;
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.length);
  }

  /** A window over bytes already in memory (nothing to read). */
  static of(bytes: Buffer): ByteWindow {
    return new ByteWindow(bytes, bytes.length, bytes.length, undefined, true);
  }

  /**
   * Opens a file; `close` when done. `windowBytes` is the starting window (tests make it small);
   * `length` reads only the file's first bytes, and `sum: false` keeps no checksum (`sumTo` is 1).
   */
  static open(path: string, windowBytes = WINDOW_BYTES, options: { length?: number; sum?: boolean } = {}): ByteWindow {
    const fd = openSync(path, 'r');
    try {
      const size = Math.min(fstatSync(fd).size, options.length ?? Infinity);
      const w = new ByteWindow(Buffer.allocUnsafe(Math.max(1, Math.min(size, windowBytes))), 0, size, fd, options.sum ?? true);
      w.fillFrom(0);
      return w;
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
  }

  /** The last `n` bytes of the file (at most the file), read apart from the window. */
  tail(n: number): Buffer {
    const len = Math.min(n, this.size);
    if (this.fd === undefined) return this.buf.subarray(this.size - len);
    const out = Buffer.alloc(len);
    readAll(this.fd, out, 0, len, this.size - len);
    return out;
  }

  /**
   * Makes the `n` bytes at window offset `p` present. Returns their window offset, which moves
   * when the window slides (everything before `p` is let go); -1 when the file ends first.
   */
  have(p: number, n: number): number {
    if (p + n <= this.end) return p;
    if (this.base + p + n > this.size) return -1;
    this.sumTo(p);
    const keep = this.end - p;
    if (n > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(n, this.buf.length * 2));
      this.buf.copy(bigger, 0, p, this.end);
      this.buf = bigger;
      this.dv = new DataView(bigger.buffer, bigger.byteOffset, bigger.length);
    } else this.buf.copyWithin(0, p, this.end);
    this.base += p;
    this.end = keep;
    this.summed = 0;
    this.fillFrom(keep);
    return 0;
  }

  /** Adds the bytes up to window offset `p` to the checksum; the checksum of the file before base + p. */
  sumTo(p: number): number {
    if (this.adler === undefined) return 1;
    if (p > this.summed) {
      this.adler.update(this.buf, this.summed, p);
      this.summed = p;
    }
    return this.adler.value;
  }

  private fillFrom(at: number): void {
    if (this.fd === undefined) return;
    const want = Math.min(this.buf.length, this.size - this.base) - at;
    this.end = at + readAll(this.fd, this.buf, at, want, this.base + at);
  }
}

function readAll(fd: number, buf: Buffer, at: number, n: number, position: number): number {
  let got = 0;
  while (got < n) {
    const r = readSync(fd, buf, at + got, n - got, position + got);
    if (r === 0) break;
    got += r;
  }
  return got;
}
