/** Jute binary-archive writer (docs/zookeeper-wire-protocol.md §1): big-endian ints/longs, -1 for null buffers, strings and vectors. */
import type { ACL, Id, Stat } from './records.js';
import { writeInt64 } from './int64-bytes.js';
import { utf8Length, writeUtf8 } from './short-string-bytes.js';
import { STAT_BYTES, writeStatAt } from './stat-codec.js';

export class JuteWriter {
  protected buf: Buffer;
  protected pos = 0;
  /** Where the bytes this writer still owns begin (0 here; an output that hands out views moves it, frame-output.ts). */
  protected start = 0;

  constructor(initialSize = 256) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  protected ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = Math.max(this.buf.length * 2, 64); // a zero-sized start must still grow
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  int(v: number): this {
    this.ensure(4);
    this.buf.writeInt32BE(v | 0, this.pos);
    this.pos += 4;
    return this;
  }

  long(v: bigint): this {
    this.ensure(8);
    writeInt64(this.buf, this.pos, v);
    this.pos += 8;
    return this;
  }

  bool(v: boolean): this {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
    return this;
  }

  buffer(b: Buffer | null | undefined): this {
    if (b == null) return this.int(-1);
    this.int(b.length);
    this.ensure(b.length);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
    return this;
  }

  ustring(s: string | null | undefined): this {
    if (s == null) return this.int(-1);
    const n = utf8Length(s);
    this.int(n);
    this.ensure(n);
    writeUtf8(this.buf, this.pos, s, n);
    this.pos += n;
    return this;
  }

  vector<T>(items: readonly T[] | null | undefined, write: (w: this, item: T) => void): this {
    if (items == null) return this.int(-1);
    this.int(items.length);
    for (const item of items) write(this, item);
    return this;
  }

  id(id: Id): this {
    return this.ustring(id.scheme).ustring(id.id);
  }

  acl(a: ACL): this {
    return this.int(a.perms).id(a.id);
  }

  acls(list: readonly ACL[] | null | undefined): this {
    return this.vector(list, (w, a) => w.acl(a));
  }

  strings(list: readonly string[] | null | undefined): this {
    return this.vector(list, (w, s) => w.ustring(s));
  }

  stat(s: Stat): this {
    this.ensure(STAT_BYTES);
    writeStatAt(this.buf, this.pos, s);
    this.pos += STAT_BYTES;
    return this;
  }

  get length(): number {
    return this.pos - this.start;
  }

  /** Bytes this writer can hold before it grows. */
  get capacity(): number {
    return this.buf.length;
  }

  /** Forgets what was written, keeping the memory, so one writer can encode many records. */
  reset(): this {
    this.pos = this.start;
    return this;
  }

  /** The bytes written so far, as a copy of exactly that size. */
  toBufferCopy(): Buffer {
    const out = Buffer.allocUnsafe(this.pos - this.start);
    this.buf.copy(out, 0, this.start, this.pos);
    return out;
  }

  /** The bytes written so far (a view, not a copy). */
  toBuffer(): Buffer {
    return this.buf.subarray(this.start, this.pos);
  }

  /** The bytes written so far, preceded by their int32 length: one frame. */
  toFrame(): Buffer {
    const n = this.pos - this.start;
    const out = Buffer.allocUnsafe(n + 4);
    out.writeInt32BE(n, 0);
    this.buf.copy(out, 4, this.start, this.pos);
    return out;
  }
}
