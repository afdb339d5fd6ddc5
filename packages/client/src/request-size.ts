/**
 * Client-side size checks. A request larger than the server's jute.maxbuffer makes the server close
 * the connection, which a client would otherwise see as an endless ConnectionLoss; we refuse it first.
 */
import { OpCode, encodedRequestSize, requestSizeBound, type ACL, type Request, InvalidArgumentError } from '@tenure/protocol';
import { DataTooLargeError } from './errors.js';

/** Accepted node data: bytes or a string (UTF-8). */
export type NodeData = Buffer | Uint8Array | string;

const EMPTY = Buffer.alloc(0);

export function toBuffer(data: NodeData | null | undefined, what: string): Buffer {
  if (data === undefined || data === null) return EMPTY;
  if (Buffer.isBuffer(data)) return data;
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  throw new InvalidArgumentError(`${what}: data must be a Buffer, Uint8Array or string`);
}

function aclBytes(acl: readonly ACL[]): number {
  let n = 4;
  for (const a of acl) n += 12 + Buffer.byteLength(a.id.scheme) + Buffer.byteLength(a.id.id);
  return n;
}

/**
 * Throws DataTooLargeError when a create/setData payload (header, path, data, ACL, flags) cannot
 * fit in `maxBufferBytes`; `extra` is what the path may still grow by (a protected create's prefix).
 * Cheap in the common case: the protocol's upper bound decides, and only near the limit is the
 * request measured. The size counts 4 bytes more than the encoded payload, as this check always has.
 */
export function checkRequestSize(path: string, data: Buffer, acl: readonly ACL[] | null, maxBufferBytes: number, extra = 0): void {
  const req: Request =
    acl === null ? { type: OpCode.setData, path, data, version: -1 } : { type: OpCode.create, path, data, acl: acl as ACL[], flags: 0 };
  if (requestSizeBound(req) + extra <= maxBufferBytes) return;
  const size = encodedRequestSize(0, req) + 4 + extra;
  if (size > maxBufferBytes) throw new DataTooLargeError(path, size, maxBufferBytes);
}

/** Exact-enough size of one op inside a multi (header 9 bytes + request). */
export function opSize(path: string, data: Buffer | null, acl: readonly ACL[] | null): number {
  return 9 + 4 + Buffer.byteLength(path) + (data ? 4 + data.length : 0) + (acl ? aclBytes(acl) : 0) + 12;
}
