/**
 * Curator's ItemSerializer frame, the bytes of every DistributedQueue item node (and of its
 * priority, delay and id variants), so that Java and Node read each other's items:
 *
 *   int32 BE version 0x00010001
 *   per item: 0x01, int32 BE length N, N bytes (the user serializer's output)
 *   0x02
 *
 * `put` writes one record; `putMulti` (Curator's MultiItem) writes several into one node. Reading
 * stops at 0x02; trailing bytes are not checked, as in Curator.
 */
import { TenureError } from '@tenure/client';

const VERSION = 0x00010001;
const ITEM = 0x01;
const EOF = 0x02;

/** An item node whose bytes are not an ItemSerializer frame. */
export class CorruptItemError extends TenureError {
  override name = 'CorruptItemError';
  constructor(
    readonly path = '/',
    why = 'not an item frame',
  ) {
    super('CORRUPT_ITEM', `corrupted queue item ${path}: ${why}`);
  }
}

/** One frame holding `items`, in order. */
export function encodeFrame(items: readonly Buffer[]): Buffer {
  let size = 5;
  for (const item of items) size += 5 + item.length;
  const out = Buffer.allocUnsafe(size);
  let at = out.writeInt32BE(VERSION, 0);
  for (const item of items) {
    at = out.writeUInt8(ITEM, at);
    at = out.writeInt32BE(item.length, at);
    at += item.copy(out, at);
  }
  out.writeUInt8(EOF, at);
  return out;
}

/** The records of a frame; throws CorruptItemError (naming `path`) on a bad version, opcode, size or truncation. */
export function decodeFrame(bytes: Buffer, path: string): Buffer[] {
  const need = (at: number, n: number): void => {
    if (at + n > bytes.length) throw new CorruptItemError(path, `truncated at byte ${at}`);
  };
  need(0, 4);
  const version = bytes.readInt32BE(0);
  if (version !== VERSION) throw new CorruptItemError(path, `incorrect version ${version}`);
  const items: Buffer[] = [];
  for (let at = 4; ;) {
    need(at, 1);
    const op = bytes[at++]!;
    if (op === EOF) return items;
    if (op !== ITEM) throw new CorruptItemError(path, `incorrect opcode ${op}`);
    need(at, 4);
    const n = bytes.readInt32BE(at);
    at += 4;
    if (n < 0) throw new CorruptItemError(path, `bad size ${n}`);
    need(at, n);
    items.push(bytes.subarray(at, at + n));
    at += n;
  }
}
