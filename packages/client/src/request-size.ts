/**
 * Client-side size checks. A request larger than the server's jute.maxbuffer makes the server close
 * the connection, which a client would otherwise see as an endless ConnectionLoss; we refuse it first.
 */
import type { ACL } from '@tenure/protocol';
import { DataTooLargeError } from './errors.js';

/** Accepted node data: bytes or a string (UTF-8). */
export type NodeData = Buffer | Uint8Array | string;

const EMPTY = Buffer.alloc(0);

export function toBuffer(data: NodeData | null | undefined, what: string): Buffer {
  if (data === undefined || data === null) return EMPTY;
  if (Buffer.isBuffer(data)) return data;
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError(`${what}: data must be a Buffer, Uint8Array or string`);
}

function aclBytes(acl: readonly ACL[]): number {
  let n = 4;
  for (const a of acl) n += 12 + Buffer.byteLength(a.id.scheme) + Buffer.byteLength(a.id.id);
  return n;
}

/**
 * Throws DataTooLargeError when a create/setData payload (header, path, data, ACL, flags) cannot
 * fit in `maxBufferBytes`. Cheap in the common case: the exact size is computed only near the limit.
 */
export function checkRequestSize(
  path: string,
  data: Buffer,
  acl: readonly ACL[] | null,
  maxBufferBytes: number,
  extra = 0,
): void {
  const rough = data.length + path.length * 3 + 64 + extra + (acl ? acl.length * 256 : 0);
  if (rough <= maxBufferBytes) return;
  const exact = 8 + 4 + Buffer.byteLength(path) + 4 + data.length + (acl ? aclBytes(acl) : 0) + 8 + extra;
  if (exact > maxBufferBytes) throw new DataTooLargeError(path, exact, maxBufferBytes);
}

/** Exact-enough size of one op inside a multi (header 9 bytes + request). */
export function opSize(path: string, data: Buffer | null, acl: readonly ACL[] | null): number {
  return 9 + 4 + Buffer.byteLength(path) + (data ? 4 + data.length : 0) + (acl ? aclBytes(acl) : 0) + 12;
}
