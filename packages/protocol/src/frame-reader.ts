/**
 * Splits a byte stream into frames.
 * STUB: to be implemented.
 */
import { DEFAULT_MAX_BUFFER } from './constants.js';
import { ProtocolError } from './errors.js';

export class FrameReader {
  constructor(readonly maxFrameBytes = DEFAULT_MAX_BUFFER) {}
  /** Feeds a chunk; returns every complete frame payload. Throws ProtocolError on a negative or oversized length. */
  push(_chunk: Buffer): Buffer[] {
    throw new ProtocolError('not implemented');
  }
}
