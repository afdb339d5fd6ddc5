/**
 * Splits a byte stream into frames: int32 length + payload (docs/zookeeper-wire-protocol.md §2.1).
 *
 * Frames that lie whole inside one chunk are returned as views of that chunk (no copy), so a chunk must
 * not be modified after it is pushed (socket chunks never are). A frame that spans chunks is assembled
 * into one buffer allocated once at its announced length; the length itself may be split too.
 */
import { DEFAULT_MAX_BUFFER } from './constants.js';
import { FrameLengthError, ProtocolError } from './errors.js';

export class FrameReader {
  /** The length prefix of the next frame while it arrives in pieces. */
  private readonly prefix = Buffer.alloc(4);
  private prefixFill = 0;
  /** The frame being assembled across chunks, and how much of it has arrived. */
  private body: Buffer | null = null;
  private bodyFill = 0;
  /** Once the stream is corrupt every later push fails the same way: frame boundaries are lost. */
  private failure: ProtocolError | undefined;

  constructor(readonly maxFrameBytes = DEFAULT_MAX_BUFFER) {}

  /** Bytes received that belong to a frame not yet complete, its length prefix included. */
  get buffered(): number {
    return this.body === null ? this.prefixFill : 4 + this.bodyFill;
  }

  /** Feeds a chunk; returns every complete frame payload. Throws ProtocolError on a negative or oversized length. */
  push(chunk: Buffer): Buffer[] {
    if (this.failure) throw this.failure;
    const frames: Buffer[] = [];
    const end = chunk.length;
    let at = 0;
    while (at < end) {
      if (this.body !== null) {
        // Continue the frame in progress.
        const n = Math.min(this.body.length - this.bodyFill, end - at);
        chunk.copy(this.body, this.bodyFill, at, at + n);
        this.bodyFill += n;
        at += n;
        if (this.bodyFill === this.body.length) {
          frames.push(this.body);
          this.body = null;
        }
        continue;
      }
      let length: number;
      if (this.prefixFill > 0 || end - at < 4) {
        // The length prefix straddles chunks.
        const n = Math.min(4 - this.prefixFill, end - at);
        chunk.copy(this.prefix, this.prefixFill, at, at + n);
        this.prefixFill += n;
        at += n;
        if (this.prefixFill < 4) break;
        this.prefixFill = 0;
        length = this.checkLength(this.prefix.readInt32BE(0), this.prefix);
      } else {
        length = this.checkLength(chunk.readInt32BE(at), chunk.subarray(at, at + 4));
        at += 4;
      }
      if (end - at >= length) {
        frames.push(chunk.subarray(at, at + length));
        at += length;
      } else {
        this.body = Buffer.allocUnsafe(length);
        this.bodyFill = 0;
      }
    }
    return frames;
  }

  private checkLength(length: number, raw: Buffer): number {
    if (length >= 0 && length <= this.maxFrameBytes) return length;
    this.failure = new FrameLengthError(length, this.maxFrameBytes, Buffer.from(raw));
    throw this.failure;
  }
}

/** Four-letter admin words a server recognises on a fresh connection (docs/zookeeper-wire-protocol.md §6.10). */
export const FOUR_LETTER_WORDS: ReadonlySet<string> = new Set([
  'conf',
  'cons',
  'crst',
  'dirs',
  'dump',
  'envi',
  'gtmk',
  'ruok',
  'stmk',
  'srst',
  'srvr',
  'stat',
  'wchc',
  'wchp',
  'wchs',
  'mntr',
  'isro',
  'hash',
]);

/**
 * The four-letter word spelled by the first 4 bytes of a new connection, or undefined when they are
 * an ordinary frame length. Every word's int32 value is far above any frame limit, so a server may
 * equally catch the `FrameLengthError` of the first push and pass its `prefix` here.
 */
export function fourLetterWord(first4: Buffer): string | undefined {
  if (first4.length < 4) return undefined;
  const word = first4.toString('latin1', 0, 4);
  return FOUR_LETTER_WORDS.has(word) ? word : undefined;
}
