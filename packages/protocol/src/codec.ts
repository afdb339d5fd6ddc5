/**
 * Encoders and decoders for every record of docs/zookeeper-wire-protocol.md. Payloads here exclude the int32 frame
 * length; see `frame()`, the `...Frame` encoders and `FrameReader`.
 *
 * Decoders never throw anything but ProtocolError on bad bytes (never RangeError) and copy buffers
 * (data, passwords, tokens) out of the frame, so a decoded record does not pin the socket chunk.
 */
export * from './connect-codec.js';
export * from './request-codec.js';
export * from './reply-codec.js';

/** Prefixes a payload with its int32 length. */
export function frame(payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(payload.length + 4);
  out.writeInt32BE(payload.length, 0);
  payload.copy(out, 4);
  return out;
}
