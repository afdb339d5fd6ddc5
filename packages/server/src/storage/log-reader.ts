/**
 * Reads txn log files back (FileTxnLog's FileTxnIterator), telling a torn tail from damage:
 * a record that fails (bad checksum, no 'B', a length past the end, a body that does not decode)
 * is a torn tail when nothing valid follows it, in its file or a later one; the caller drops it.
 * Anything else is corruption in the middle, reported with the file and the offset.
 */
import { readFileSync } from 'node:fs';
import { adler32 } from './adler32.js';
import { FILE_HEADER_BYTES, FORMAT_VERSION, LOG_MAGIC, type DataFile } from './file-names.js';
import { DataDirCorruptError } from './storage-errors.js';
import { decodeTxn, type Txn } from './txn-records.js';

export interface LogContents {
  file: DataFile;
  txns: Txn[];
  /** Offset of the first bad record when the file ends in a torn tail. */
  tornAt?: number;
  /** Where the valid records end. */
  end: number;
  size: number;
}

/** Whether a complete, checksummed record starts at `off`. */
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

export function readLogBuffer(file: DataFile, buf: Buffer): LogContents {
  const size = buf.length;
  if (size < FILE_HEADER_BYTES) return { file, txns: [], tornAt: 0, end: 0, size };
  if (buf.readInt32BE(0) !== LOG_MAGIC) {
    if (buf.subarray(0, FILE_HEADER_BYTES).every((b) => b === 0)) return { file, txns: [], tornAt: 0, end: 0, size };
    throw new DataDirCorruptError(file.path, 0, 'bad magic (not "ZKLG")');
  }
  if (buf.readInt32BE(4) !== FORMAT_VERSION) throw new DataDirCorruptError(file.path, 4, `unsupported log version ${buf.readInt32BE(4)}`);
  const txns: Txn[] = [];
  let off = FILE_HEADER_BYTES;
  for (;;) {
    if (off + 12 > size) break; // the end of the file
    const len = buf.readInt32BE(off + 8);
    if (len === 0) break; // preallocated zeros: the end (ZooKeeper reads an empty entry as EOF)
    const bad = (): LogContents => ({ file, txns, tornAt: off, end: off, size });
    if (len < 0 || off + 12 + len >= size || buf[off + 12 + len] !== 0x42) return bad();
    const crc = buf.readBigInt64BE(off);
    if (crc !== BigInt(adler32(buf, off + 12, off + 12 + len))) return bad();
    let txn: Txn;
    try {
      txn = decodeTxn(buf.subarray(off + 12, off + 12 + len));
    } catch (err) {
      throw new DataDirCorruptError(file.path, off, `a checksummed record does not decode: ${(err as Error).message}`);
    }
    txns.push(txn);
    off += 13 + len;
  }
  return { file, txns, end: off, size };
}

export function readLogFile(file: DataFile): LogContents {
  return readLogBuffer(file, readFileSync(file.path));
}
