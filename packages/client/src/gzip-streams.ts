/**
 * gzip() on the web platform's CompressionStream / DecompressionStream ('deflate-raw'), for
 * browsers and edge runtimes (the browser entry's gzip). The member around the DEFLATE stream is
 * gzip-member.ts's, so the bytes are Curator's. The web streams take no level: zlib's default (6),
 * which is Java's Deflater.DEFAULT_COMPRESSION.
 */
import type { CompressionProvider } from './compression.js';
import { DecompressionError } from './compression.js';
import { JAVA_OS_BYTE, checkTrailer, gzipMember, parseMember } from './gzip-member.js';

export interface GzipOptions {
  /**
   * The header's OS byte: 255 (the default) as JDK 16+ and Curator 5.5+ write it; 0 as Curator up
   * to 5.4 and JDK 8 write it. Readers ignore it; it matters only for byte-equal output.
   */
  osByte?: number;
}

/** Pipes `bytes` through a transform stream and collects what comes out. */
async function through(bytes: Uint8Array, stream: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  const writer = stream.writable.getWriter();
  // Failures surface on the readable side, where they are awaited.
  writer.write(bytes).catch(() => {});
  writer.close().catch(() => {});
  const reader = stream.readable.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    length += value.length;
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Curator's GzipCompressionProvider on CompressionStream. */
export function gzipStreams(options: GzipOptions = {}): CompressionProvider {
  const osByte = options.osByte ?? JAVA_OS_BYTE;
  return {
    async compress(data) {
      return gzipMember(await through(data, new CompressionStream('deflate-raw')), data, osByte);
    },
    async decompress(data, path) {
      const member = parseMember(data, path);
      let inflated: Uint8Array;
      try {
        inflated = await through(member.body, new DecompressionStream('deflate-raw'));
      } catch (err) {
        throw new DecompressionError(path, `corrupt gzip data: ${String((err as Error)?.message ?? err)}`, { cause: err });
      }
      return checkTrailer(member, inflated, path);
    },
  };
}
