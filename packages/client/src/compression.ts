/**
 * Compressed node data, as Curator's CompressionProvider: the client compresses what a call marks
 * `compressed` before it is sent and decompresses what a call marks `decompressed` after it is
 * read; the server stores the compressed bytes. `gzip()` is the built-in provider, byte for byte
 * Curator's GzipCompressionProvider.
 */
import { InvalidArgumentError, TenureError } from '@tenure/protocol';

/**
 * Turns node data into stored bytes and back (Curator's CompressionProvider). `path` is the node's
 * path as the call gave it (Curator passes it too), for providers that compress only some nodes.
 * Either method may answer at once or with a promise; what either throws reaches the caller as a
 * CompressionError or DecompressionError naming the path.
 */
export interface CompressionProvider {
  compress(data: Uint8Array, path: string): Uint8Array | Promise<Uint8Array>;
  decompress(data: Uint8Array, path: string): Uint8Array | Promise<Uint8Array>;
}

/**
 * `createClient({ compression })`: a provider, or `{ provider, byDefault }`. With `byDefault: true`
 * (Curator 5.8's `enableCompression()`) every create and setData compresses and every getData
 * decompresses unless the call says `compressed: false` / `decompressed: false` (Curator's
 * `uncompressed()` / `undecompressed()`). Default: `gzip()`, used only by calls that ask.
 */
export type CompressionOption = CompressionProvider | { provider: CompressionProvider; byDefault?: boolean };

/** The provider failed to compress data for a write, which was not sent. Code 'COMPRESSION_FAILED'. */
export class CompressionError extends TenureError {
  override name = 'CompressionError';
  /** The node, as the call named it. */
  readonly path: string | undefined;
  constructor(path?: string, reason = 'the compression provider failed', options?: { cause?: unknown }) {
    super('COMPRESSION_FAILED', path === undefined ? reason : `${path}: ${reason}`, options);
    this.path = path;
  }
}

/**
 * Data read with `decompressed` is not what the provider can decompress: not gzip, truncated,
 * a bad CRC, trailing bytes. Code 'BAD_COMPRESSED_DATA'; never retried (the node holds it).
 */
export class DecompressionError extends TenureError {
  override name = 'DecompressionError';
  /** The node, as the call named it. */
  readonly path: string | undefined;
  constructor(path?: string, reason = 'the data is not what the compression provider can decompress', options?: { cause?: unknown }) {
    super('BAD_COMPRESSED_DATA', path === undefined ? reason : `${path}: ${reason}`, options);
    this.path = path;
  }
}

const EMPTY = Buffer.alloc(0);

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The client's compression setting: which provider, and whether calls compress unless told not to. @internal */
export class Compression {
  readonly provider: CompressionProvider;
  readonly byDefault: boolean;

  constructor(option: CompressionOption | undefined, fallback: () => CompressionProvider) {
    const settings = option === undefined ? { provider: fallback() } : 'provider' in option ? option : { provider: option };
    const p = settings.provider as Partial<CompressionProvider> | undefined;
    if (typeof p?.compress !== 'function' || typeof p.decompress !== 'function') {
      throw new InvalidArgumentError('compression: a provider needs compress(data, path) and decompress(data, path)');
    }
    this.provider = settings.provider;
    this.byDefault = settings.byDefault ?? false;
  }

  /** Whether a call with this flag compresses (or decompresses). */
  applies(flag: boolean | undefined): boolean {
    return flag ?? this.byDefault;
  }

  async compress(path: string, data: Buffer): Promise<Buffer> {
    try {
      return asBuffer(await this.provider.compress(data, path));
    } catch (err) {
      throw new CompressionError(path, `the compression provider failed: ${String((err as Error)?.message ?? err)}`, { cause: err });
    }
  }

  /** A node with no data reads as no data: nothing was compressed into it (an empty parent, say). */
  async decompress(path: string, data: Buffer): Promise<Buffer> {
    if (data.length === 0) return EMPTY;
    try {
      return asBuffer(await this.provider.decompress(data, path));
    } catch (err) {
      if (err instanceof DecompressionError && err.path === path) throw err;
      throw new DecompressionError(path, `cannot decompress: ${String((err as Error)?.message ?? err)}`, { cause: err });
    }
  }
}
