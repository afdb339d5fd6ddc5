/**
 * A connection's output: frames (int32 length + payload) encoded straight into one growing buffer,
 * handed out whole per flush with `take()` as a view, so that a flush of 200 replies is one
 * buffer with no per-reply allocation and no copy into a write buffer.
 *
 * The memory is a slab used like a bump allocator: a view handed out is never written over (the
 * socket may still hold it); the next frames follow it in the same slab, and a full slab is
 * replaced by a fresh one. Only the frames not yet taken move when a slab is replaced mid-flush,
 * and a take that leaves less room than the last flush needed starts the next on a fresh slab, so
 * steady traffic copies nothing. Slabs are sized from the recent flushes (a few of them per slab),
 * so an idle connection holds a few KB and a busy one a few hundred.
 */
import { JuteWriter } from './jute-writer.js';

/**
 * Frames one burst (a turn's replies, a pipeline's refill) queues before they are written without
 * waiting for the burst's end: the peer starts on them on its own core while the rest are made.
 * The server's wire session, the TCP connection and the WebSocket client's sends all use it.
 */
export const EARLY_FLUSH_FRAMES = 48;

const MIN_SLAB = 4096;
/** Above this, a slab holds one flush and no more (a 1 MB reply is not kept eight times). */
const MAX_SLAB = 1 << 20;
/** Flushes of the recent size that one slab holds. */
const FLUSHES_PER_SLAB = 8;

export class FrameOutput extends JuteWriter {
  /** Frames written since the last take. */
  frames = 0;
  /** The largest recent flush, decaying, in bytes: what a fresh slab is sized for. */
  private peak = 0;

  constructor() {
    super(0); // no memory until the first frame
  }

  /** Starts a frame (its length is filled in by `endFrame`); returns its mark. */
  beginFrame(): number {
    const mark = this.pos - this.start;
    this.int(0);
    return mark;
  }

  /** Ends the frame begun at `mark`: writes its length. */
  endFrame(mark: number): void {
    const at = this.start + mark;
    this.buf.writeInt32BE(this.pos - at - 4, at);
    this.frames++;
  }

  /**
   * A frame of `payloadBytes` known up front, for encoders that write in place: writes its length and
   * returns where its payload starts in `target` (valid until the next write).
   */
  claimFrame(payloadBytes: number): number {
    this.ensure(4 + payloadBytes);
    const at = this.pos;
    this.buf.writeInt32BE(payloadBytes, at);
    this.pos = at + 4 + payloadBytes;
    this.frames++;
    return at + 4;
  }

  /** The memory `claimFrame`'s offsets point into. */
  get target(): Buffer {
    return this.buf;
  }

  /** Forgets a frame begun at `mark` that could not be completed (an encoder threw). */
  dropFrame(mark: number): void {
    this.pos = this.start + mark;
  }

  /** The frames written since the last take, as one view; the output goes on after them. */
  take(): Buffer {
    const out = this.buf.subarray(this.start, this.pos);
    const n = out.length;
    this.peak = Math.max(n, this.peak - (this.peak >> 3));
    this.start = this.pos;
    this.frames = 0;
    // Not room for another flush like the last ones: the next starts on a fresh slab, copying nothing.
    if (this.buf.length - this.pos < this.peak) this.release();
    return out;
  }

  /** Drops the frames not taken, and the slab. */
  override reset(): this {
    this.frames = 0;
    this.release();
    return this;
  }

  private release(): void {
    this.buf = EMPTY;
    this.pos = this.start = 0;
  }

  protected override ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const live = this.pos - this.start;
    let size = Math.min(MAX_SLAB, Math.max(MIN_SLAB, this.peak * FLUSHES_PER_SLAB));
    while (size < 2 * (live + n)) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, this.start, this.pos);
    this.buf = next;
    this.start = 0;
    this.pos = live;
  }
}

const EMPTY = Buffer.alloc(0);
