/**
 * One gzip member (RFC 1952) around a raw DEFLATE stream, written as Curator's
 * GzipCompressionProvider writes it and read as it reads it, whatever does the DEFLATE (node:zlib
 * or CompressionStream). The header is fixed: no flags, mtime 0, XFL 0, and the OS byte Java
 * writes (255 since JDK 16, JDK-8244706; 0 before, and in Curator up to 5.4); so for equal DEFLATE
 * bytes the members are equal. Reading takes any header flags, exactly one member and no trailing
 * bytes, and checks the CRC-32 and the length, as Curator does.
 */
import { DecompressionError } from './compression.js';

/** Curator ≥ 5.5 on JDK ≥ 16, and java.util.zip.GZIPOutputStream on JDK ≥ 16. */
export const JAVA_OS_BYTE = 255;

const HEADER_SIZE = 10;
const TRAILER_SIZE = 8;
const FHCRC = 1 << 1;
const FEXTRA = 1 << 2;
const FNAME = 1 << 3;
const FCOMMENT = 1 << 4;
/** DEFLATE never produces less (an empty final block is 2 bytes). */
const MIN_DEFLATE_SIZE = 2;

const CRC_TABLE = ((): Uint32Array => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (ISO-HDLC, gzip's), of `bytes[from, to)`. */
export function crc32(bytes: Uint8Array, from = 0, to = bytes.length): number {
  let c = 0xffffffff;
  for (let i = from; i < to; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The member for `data`, given its raw DEFLATE stream. */
export function gzipMember(deflated: Uint8Array, data: Uint8Array, osByte: number): Uint8Array {
  const out = new Uint8Array(HEADER_SIZE + deflated.length + TRAILER_SIZE);
  out.set([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, osByte & 0xff]);
  out.set(deflated, HEADER_SIZE);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setUint32(HEADER_SIZE + deflated.length, crc32(data), true);
  view.setUint32(HEADER_SIZE + deflated.length + 4, data.length >>> 0, true);
  return out;
}

/** Where a member's DEFLATE stream lies, and what its trailer promises. */
export interface ParsedMember {
  /** The raw DEFLATE stream (a view of the input). */
  body: Uint8Array;
  crc: number;
  /** The uncompressed length, mod 2^32. */
  size: number;
}

/** Parses a member's header and trailer; DecompressionError when it is not one. */
export function parseMember(bytes: Uint8Array, path?: string): ParsedMember {
  const bad = (why: string): DecompressionError => new DecompressionError(path, why);
  if (bytes.length < HEADER_SIZE) throw bad('too short for gzip data');
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) throw bad('not in gzip format');
  if (bytes[2] !== 8) throw bad('unsupported compression method');
  const flags = bytes[3]!;
  let at = HEADER_SIZE;
  const need = (n: number): void => {
    if (at + n > bytes.length) throw bad('truncated gzip header');
  };
  if (flags & FEXTRA) {
    need(2);
    at += 2 + (bytes[at]! | (bytes[at + 1]! << 8));
  }
  const skipString = (): void => {
    while (true) {
      need(1);
      if (bytes[at++] === 0) return;
    }
  };
  if (flags & FNAME) skipString();
  if (flags & FCOMMENT) skipString();
  if (flags & FHCRC) {
    need(2);
    if ((bytes[at]! | (bytes[at + 1]! << 8)) !== (crc32(bytes, 0, at) & 0xffff)) throw bad('corrupt gzip header');
    at += 2;
  }
  if (bytes.length < at + MIN_DEFLATE_SIZE + TRAILER_SIZE) throw bad('too short for gzip data');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    body: bytes.subarray(at, bytes.length - TRAILER_SIZE),
    crc: view.getUint32(bytes.length - TRAILER_SIZE, true),
    size: view.getUint32(bytes.length - 4, true),
  };
}

/** Checks the inflated bytes against the trailer; DecompressionError when they differ. */
export function checkTrailer(member: ParsedMember, inflated: Uint8Array, path?: string): Uint8Array {
  if (member.size !== inflated.length >>> 0 || member.crc !== crc32(inflated)) {
    throw new DecompressionError(path, 'corrupt gzip trailer (CRC-32 or length)');
  }
  return inflated;
}
