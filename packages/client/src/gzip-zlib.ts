/**
 * gzip() on node:zlib (the Node entry's gzip): raw DEFLATE at Java's default level in the
 * member gzip-member.ts writes, so the bytes are Curator's GzipCompressionProvider's. zlib is
 * looked up at run time (node-builtins.ts), so this module too has no `node:` import; where there
 * is no zlib it is gzipStreams.
 */
import type { ZlibOptions } from 'node:zlib';
import type { CompressionProvider } from './compression.js';
import { DecompressionError } from './compression.js';
import { JAVA_OS_BYTE, checkTrailer, gzipMember, parseMember } from './gzip-member.js';
import { gzipStreams, type GzipOptions } from './gzip-streams.js';
import { nodeBuiltin } from './node-builtins.js';

export type { GzipOptions } from './gzip-streams.js';

/** Java's Deflater.DEFAULT_COMPRESSION is zlib's -1, level 6. */
const DEFLATE: ZlibOptions = { level: 6 };

/**
 * The built-in provider: gzip exactly as Curator's GzipCompressionProvider writes and reads it
 * (a fixed header with mtime 0, one member, CRC-32 and length checked). On node:zlib in Node, on
 * CompressionStream in the browser entry.
 */
export function gzip(options: GzipOptions = {}): CompressionProvider {
  const zlib = nodeBuiltin('node:zlib');
  if (zlib === undefined) return gzipStreams(options);
  const osByte = options.osByte ?? JAVA_OS_BYTE;
  return {
    compress(data) {
      return new Promise((resolve, reject) =>
        zlib.deflateRaw(data, DEFLATE, (err, deflated) => (err ? reject(err) : resolve(gzipMember(deflated, data, osByte)))),
      );
    },
    decompress(data, path) {
      const member = parseMember(data, path);
      return new Promise((resolve, reject) =>
        // `info` gives the engine, whose bytesWritten says how much input the stream used: the rest would be garbage.
        zlib.inflateRaw(member.body, { info: true } as ZlibOptions, (err, result) => {
          if (err) return reject(new DecompressionError(path, `corrupt gzip data: ${err.message}`, { cause: err }));
          const { buffer, engine } = result as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
          if (engine.bytesWritten !== member.body.length) {
            return reject(new DecompressionError(path, 'expected one gzip member, with no bytes after it'));
          }
          try {
            resolve(checkTrailer(member, buffer, path));
          } catch (e) {
            reject(e as Error);
          }
        }),
      );
    },
  };
}
