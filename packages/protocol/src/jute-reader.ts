/**
 * Jute binary-archive reader. Every read checks bounds and throws ProtocolError, never RangeError,
 * so a truncated or hostile frame cannot crash a server or a client.
 */
import { ProtocolError } from './errors.js';
import type { ACL, Id, Stat } from './records.js';
import { readInt64 } from './int64-bytes.js';
import { STAT_BYTES, readStatAt } from './stat-codec.js';

export class JuteReader {
  private pos: number;

  constructor(
    private readonly buf: Buffer,
    offset = 0,
    private readonly end = buf.length,
  ) {
    this.pos = offset;
  }

  get offset(): number {
    return this.pos;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  /** When the next bytes are exactly `bytes`, steps over them (a reader that reuses what it decoded last). */
  skipIfNext(bytes: Uint8Array): boolean {
    const n = bytes.length;
    if (this.pos + n > this.end || this.buf.compare(bytes, 0, n, this.pos, this.pos + n) !== 0) return false;
    this.pos += n;
    return true;
  }

  /** A copy of the bytes from `start` up to the current offset. */
  copyFrom(start: number): Buffer {
    return Buffer.from(this.buf.subarray(start, this.pos));
  }

  private need(n: number, what: string): void {
    if (this.pos + n > this.end) {
      throw new ProtocolError(`truncated record: ${what} needs ${n} bytes at offset ${this.pos}, ${this.end - this.pos} left`);
    }
  }

  int(what = 'int'): number {
    this.need(4, what);
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  long(what = 'long'): bigint {
    this.need(8, what);
    const v = readInt64(this.buf, this.pos);
    this.pos += 8;
    return v;
  }

  bool(what = 'boolean'): boolean {
    this.need(1, what);
    return this.buf[this.pos++] !== 0;
  }

  private length(what: string): number {
    const n = this.int(what);
    if (n < -1) throw new ProtocolError(`negative length ${n} for ${what}`);
    if (n > this.end - this.pos) {
      throw new ProtocolError(`length ${n} for ${what} exceeds the ${this.end - this.pos} bytes left`);
    }
    return n;
  }

  buffer(what = 'buffer'): Buffer | null {
    const view = this.bufferView(what);
    return view === null ? null : Buffer.from(view);
  }

  /**
   * `buffer` without the copy: a view of the reader's bytes, for a caller that copies what it keeps
   * (a log's replay: the tree holds node data as strings) and must not pin them otherwise.
   */
  bufferView(what = 'buffer'): Buffer | null {
    const n = this.length(what);
    if (n === -1) return null;
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  ustring(what = 'string'): string | null {
    const n = this.length(what);
    if (n === -1) return null;
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** A string that must not be null (paths, schemes). */
  string(what = 'string'): string {
    const s = this.ustring(what);
    if (s === null) throw new ProtocolError(`null ${what}`);
    return s;
  }

  vector<T>(read: (r: this) => T, what = 'vector', minElementBytes = 1): T[] | null {
    const n = this.int(what);
    if (n === -1) return null;
    if (n < -1) throw new ProtocolError(`negative count ${n} for ${what}`);
    // A hostile count cannot make us loop past the bytes we have.
    if (n * minElementBytes > this.end - this.pos) {
      throw new ProtocolError(`count ${n} for ${what} exceeds the ${this.end - this.pos} bytes left`);
    }
    const out = new Array<T>(n);
    for (let i = 0; i < n; i++) out[i] = read(this);
    return out;
  }

  id(): Id {
    return { scheme: this.string('id scheme'), id: this.string('id') };
  }

  acl(): ACL {
    const perms = this.int('acl perms');
    return { perms, id: this.id() };
  }

  acls(what = 'acl list'): ACL[] | null {
    return this.vector((r) => r.acl(), what, 12);
  }

  strings(what = 'string list'): string[] | null {
    return this.vector((r) => r.string(what), what, 4);
  }

  stat(): Stat {
    this.need(STAT_BYTES, 'stat');
    const s = readStatAt(this.buf, this.pos);
    this.pos += STAT_BYTES;
    return s;
  }
}
