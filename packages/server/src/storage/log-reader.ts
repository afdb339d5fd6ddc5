/**
 * Reads txn log files back (FileTxnLog's FileTxnIterator), telling a torn tail from damage:
 * a record that fails (bad checksum, no 'B', a length past the end, a body that does not decode)
 * is a torn tail when nothing valid follows it, in its file or a later one; the caller drops it.
 * Anything else is corruption in the middle, reported with the file and the offset.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { adler32 } from './adler32.js';
import { ByteWindow } from './byte-window.js';
import { FILE_HEADER_BYTES, FORMAT_VERSION, LOG_MAGIC, type DataFile } from './file-names.js';
import { DataDirCorruptError } from './storage-errors.js';
import { decodeTxn, type Txn } from './txn-records.js';

export interface LogContents {
  file: DataFile;
  /** The records (empty when they were handed to an `onTxn` callback instead). */
  txns: Txn[];
  /** How many valid records the file holds. */
  count: number;
  /** Offset of the first bad record when the file ends in a torn tail. */
  tornAt?: number;
  /** Where the valid records end. */
  end: number;
  size: number;
}

/**
 * Whether a complete, checksummed record starts at `off` (its length, or undefined): the one test
 * of a clean record, for the readers and the scan after a bad one. The checksum is a long whose
 * high word is 0 (Adler-32 is 32 bits): compared as two words.
 */
function recordAt(buf: Buffer, off: number): number | undefined {
  if (off + 13 > buf.length) return undefined;
  if (buf.readUInt32BE(off) !== 0) return undefined; // adler32 fits in the low 32 bits
  const len = buf.readInt32BE(off + 8);
  if (len <= 0 || off + 12 + len >= buf.length || buf[off + 12 + len] !== 0x42) return undefined;
  if (adler32(buf, off + 12, off + 12 + len) !== buf.readUInt32BE(off + 4)) return undefined;
  return len;
}

/** Whether any valid record starts after `from` (a scan; only on the failure path). */
export function validRecordAfter(buf: Buffer, from: number): boolean {
  for (let off = from; off + 13 <= buf.length; off++) {
    if (buf[off] !== 0 || buf[off + 1] !== 0 || buf[off + 2] !== 0 || buf[off + 3] !== 0) continue;
    const len = recordAt(buf, off);
    if (len === undefined) continue;
    try {
      decodeTxn(buf.subarray(off + 12, off + 12 + len));
      return true;
    } catch {
      // not a record after all
    }
  }
  return false;
}

const ZEROS = Buffer.alloc(64 * 1024);

/** Whether every byte from `from` to the end is 0 (memcmp over chunks: the preallocated tail can be large). */
function zerosFrom(buf: Buffer, from: number): boolean {
  for (let o = from; o < buf.length; o += ZEROS.length) {
    const end = Math.min(buf.length, o + ZEROS.length);
    if (buf.compare(ZEROS, 0, end - o, o, end) !== 0) return false;
  }
  return true;
}

/**
 * The records of a log file's bytes, the torn tail and the damage. With `onTxn` each record goes
 * to it as soon as it is decoded (recovery applies them so: no record outlives its replay).
 */
export function readLogBuffer(
  file: DataFile,
  buf: Buffer,
  onTxn?: (txn: Txn) => void,
  /** Where to go on from (a record's offset), and how many records came before it: replayLogFile's hand-over. */
  resume?: { from: number; count: number },
): LogContents {
  const size = buf.length;
  const txns: Txn[] = [];
  let count = resume?.count ?? 0;
  let off = resume?.from ?? FILE_HEADER_BYTES;
  if (resume === undefined) {
    if (size < FILE_HEADER_BYTES) return { file, txns, count: 0, tornAt: 0, end: 0, size };
    if (buf.readInt32BE(0) !== LOG_MAGIC) {
      if (buf.subarray(0, FILE_HEADER_BYTES).every((b) => b === 0)) return { file, txns, count: 0, tornAt: 0, end: 0, size };
      throw new DataDirCorruptError(file.path, 0, 'bad magic (not "ZKLG")');
    }
    if (buf.readInt32BE(4) !== FORMAT_VERSION) throw new DataDirCorruptError(file.path, 4, `unsupported log version ${buf.readInt32BE(4)}`);
  }
  for (;;) {
    const bad = (): LogContents => ({ file, txns, count, tornAt: off, end: off, size });
    // The end: the end of the file, or a zero length in the preallocated zeros (ZooKeeper reads
    // an empty entry as EOF). But a length overwritten with 0 must not hide the records after it:
    // when a valid record follows, this is a damaged record (stray bytes in the zeros are not).
    if (off + 12 > size || buf.readInt32BE(off + 8) === 0) {
      if (!zerosFrom(buf, off) && validRecordAfter(buf, off + 1)) return bad();
      break;
    }
    const len = recordAt(buf, off);
    if (len === undefined) return bad();
    let txn: Txn;
    try {
      txn = decodeTxn(buf.subarray(off + 12, off + 12 + len));
    } catch (err) {
      throw new DataDirCorruptError(file.path, off, `a checksummed record does not decode: ${(err as Error).message}`);
    }
    if (onTxn === undefined) txns.push(txn);
    else onTxn(txn);
    count++;
    off += 13 + len;
  }
  return { file, txns, count, end: off, size };
}

/** Zero bytes kept after the last non-zero one: the reader then sees the zero length that ends the records. */
const TAIL_PAD = 4096;
const SCAN_CHUNK = 1 << 20;

/**
 * A log file's bytes up to its last non-zero byte, plus TAIL_PAD zeros (the whole file when it is
 * shorter). The rest of a preallocated log (64 MiB by default) is zeros, checked from the end in
 * chunks here, so it is neither held in memory nor scanned again: `readLogBuffer` gives the same
 * records, torn tail and damage over this prefix as over the whole file.
 */
export function readLogPrefix(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const keep = Math.min(fstatSync(fd).size, lastNonZero(fd) + TAIL_PAD);
    const buf = Buffer.alloc(keep);
    let off = 0;
    while (off < keep) {
      const n = readSync(fd, buf, off, keep - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf;
  } finally {
    closeSync(fd);
  }
}

const ZEROS_CHUNK = Buffer.alloc(SCAN_CHUNK);

/** The offset after a file's last non-zero byte (0 for a file of zeros), scanned from the end in chunks. */
function lastNonZero(fd: number): number {
  const size = fstatSync(fd).size;
  const chunk = Buffer.allocUnsafe(Math.max(1, Math.min(SCAN_CHUNK, size)));
  let end = size; // everything at or after `end` is zero
  while (end > 0) {
    const from = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - from, from);
    let last = n - 1;
    if (chunk.compare(ZEROS_CHUNK, 0, n, 0, n) !== 0) {
      while (chunk[last] === 0) last--;
      return from + last + 1;
    }
    end = from;
  }
  return 0;
}

/** The window a log is replayed through: a few thousand records at a time. */
const LOG_WINDOW = 1 << 20;

/**
 * A log file's records, each handed to `onTxn` as it is decoded, read through a window over the
 * file's used bytes (recovery's path): replaying a log holds no copy of it, only the window. The
 * first thing that is not a clean record (damage, a torn tail, a bad header, or a zero length
 * before the last non-zero byte) hands over to readLogBuffer over readLogPrefix's bytes, from that
 * record on: what is torn and what is damage has one definition.
 */
export function replayLogFile(file: DataFile, onTxn: (txn: Txn) => void): LogContents {
  const fd = openSync(file.path, 'r');
  let used: number;
  let keep: number;
  try {
    used = lastNonZero(fd);
    keep = Math.min(fstatSync(fd).size, used + TAIL_PAD);
  } finally {
    closeSync(fd);
  }
  const whole = (from: number, count: number): LogContents =>
    readLogBuffer(file, readLogPrefix(file.path), onTxn, from === 0 ? undefined : { from, count });
  if (keep < FILE_HEADER_BYTES) return whole(0, 0);
  const w = ByteWindow.open(file.path, LOG_WINDOW, { length: keep, sum: false });
  let handOver: number;
  let count = 0;
  try {
    if (w.buf.readInt32BE(0) !== LOG_MAGIC || w.buf.readInt32BE(4) !== FORMAT_VERSION) return whole(0, 0);
    let p = FILE_HEADER_BYTES;
    for (;;) {
      const at = w.have(p, 12);
      if (at < 0) {
        handOver = w.base + p;
        break;
      }
      p = at;
      const len = w.buf.readInt32BE(p + 8);
      if (len === 0 && w.base + p >= used) return { file, txns: [], count, end: w.base + p, size: keep };
      const rec = len > 0 ? w.have(p, 13 + len) : -1;
      if (rec < 0) {
        handOver = w.base + p;
        break;
      }
      p = rec;
      const buf = w.buf;
      // The record's bytes are in the window (have), so the buffer's own bounds hold it.
      if (recordAt(buf, p) === undefined) {
        handOver = w.base + p;
        break;
      }
      let txn: Txn;
      try {
        txn = decodeTxn(buf.subarray(p + 12, p + 12 + len));
      } catch {
        handOver = w.base + p;
        break;
      }
      // Applied before the window slides: the txn's data is a view of it (see txn-records.ts).
      onTxn(txn);
      count++;
      p += 13 + len;
    }
  } finally {
    w.close();
  }
  return whole(handOver, count);
}

export function readLogFile(file: DataFile): LogContents {
  return readLogBuffer(file, readFileSync(file.path));
}
