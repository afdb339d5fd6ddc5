/**
 * A jute buffer (int32 length, -1 for null, then the bytes) written in place, for the encoders that
 * size their output exactly instead of going through a JuteWriter.
 */

/** The encoded size of `data`. */
export function bufferBytes(data: Buffer | null): number {
  return data === null ? 4 : 4 + data.length;
}

/** Writes `data` at `at` and returns the offset after it. */
export function writeBufferAt(out: Buffer, at: number, data: Buffer | null): number {
  if (data === null) {
    out.writeInt32BE(-1, at);
    return at + 4;
  }
  out.writeInt32BE(data.length, at);
  data.copy(out, at + 4);
  return at + 4 + data.length;
}
