/**
 * The 68-byte Stat record (docs/zookeeper-wire-protocol.md §4.2), read and written in place. Shared by JuteReader/JuteWriter
 * and by the codec's hot paths, so every path decodes a Stat the same way.
 */
import { readInt64, writeInt64 } from './int64-bytes.js';
import type { Stat } from './records.js';

export const STAT_BYTES = 68;

const TWO_32 = 4294967296;

/** A long holding ms since the epoch, as a number. Two int reads avoid a BigInt allocation; exact below 2^53. */
function readTime(buf: Buffer, at: number): number {
  return buf.readInt32BE(at) * TWO_32 + buf.readUInt32BE(at + 4);
}

function writeTime(buf: Buffer, at: number, ms: number): void {
  const hi = Math.floor(ms / TWO_32);
  buf.writeInt32BE(hi | 0, at);
  buf.writeUInt32BE((ms - hi * TWO_32) >>> 0, at + 4);
}

/** Reads a Stat at `at`. The caller has checked that 68 bytes are there. */
export function readStatAt(buf: Buffer, at: number): Stat {
  return {
    czxid: readInt64(buf, at),
    mzxid: readInt64(buf, at + 8),
    ctime: readTime(buf, at + 16),
    mtime: readTime(buf, at + 24),
    version: buf.readInt32BE(at + 32),
    cversion: buf.readInt32BE(at + 36),
    aversion: buf.readInt32BE(at + 40),
    ephemeralOwner: readInt64(buf, at + 44),
    dataLength: buf.readInt32BE(at + 52),
    numChildren: buf.readInt32BE(at + 56),
    pzxid: readInt64(buf, at + 60),
  };
}

/** Writes a Stat at `at`. The caller has made room for 68 bytes. Out-of-range values wrap to their width. */
export function writeStatAt(buf: Buffer, at: number, s: Stat): void {
  writeInt64(buf, at, s.czxid);
  writeInt64(buf, at + 8, s.mzxid);
  writeTime(buf, at + 16, s.ctime);
  writeTime(buf, at + 24, s.mtime);
  buf.writeInt32BE(s.version | 0, at + 32);
  buf.writeInt32BE(s.cversion | 0, at + 36);
  buf.writeInt32BE(s.aversion | 0, at + 40);
  writeInt64(buf, at + 44, s.ephemeralOwner);
  buf.writeInt32BE(s.dataLength | 0, at + 52);
  buf.writeInt32BE(s.numChildren | 0, at + 56);
  writeInt64(buf, at + 60, s.pzxid);
}
