/**
 * The maxBufferBytes check of the in-process transport. ZooKeeper closes a connection whose frame
 * payload (header + record) is larger than jute.maxbuffer; the in-process transport measures the
 * same payload with @tenure/protocol's encoder. Encoding every request would cost more than
 * serving it, so a cheap upper bound is computed first and only requests that might be too large
 * are encoded.
 */
import type { Request } from '@tenure/protocol';
import { OpCode, encodedRequestSize } from '@tenure/protocol';

/** A UTF-8 string takes at most 3 bytes per UTF-16 unit, plus its length prefix. */
const str = (s: unknown): number => (typeof s === 'string' ? 4 + 3 * s.length : 4);
const buf = (b: unknown): number => (b instanceof Uint8Array ? 4 + b.length : 4);
const strList = (l: unknown): number => {
  if (!Array.isArray(l)) return 4;
  let n = 4;
  for (const s of l) n += str(s);
  return n;
};
const aclList = (l: unknown): number => {
  if (!Array.isArray(l)) return 4;
  let n = 4;
  for (const a of l) n += 4 + str(a?.id?.scheme) + str(a?.id?.id);
  return n;
};

/** An upper bound of the encoded payload (8-byte header + record). */
export function requestSizeBound(req: Request): number {
  const r = req as unknown as Record<string, unknown>;
  // The common reads carry nothing but a path and fixed-size fields.
  switch (req.type) {
    case OpCode.getData:
    case OpCode.exists:
    case OpCode.getChildren:
    case OpCode.getChildren2:
    case OpCode.delete:
    case OpCode.sync:
    case OpCode.getACL:
    case OpCode.ping:
      return 81 + str(r.path);
    case OpCode.setData:
      return 81 + str(r.path) + buf(r.data);
    case OpCode.create:
    case OpCode.create2:
    case OpCode.createContainer:
    case OpCode.createTTL:
      return 81 + str(r.path) + buf(r.data) + aclList(r.acl);
  }
  let n = 8;
  // Every fixed-size field is at most 8 bytes; 64 covers the fixed part of any record.
  n += 64;
  if ('path' in r) n += str(r.path);
  if ('prefixPath' in r) n += str(r.prefixPath);
  if ('data' in r) n += buf(r.data);
  if ('acl' in r) n += aclList(r.acl);
  if ('scheme' in r) n += str(r.scheme);
  if ('auth' in r) n += buf(r.auth);
  if ('token' in r) n += buf(r.token);
  for (const k of ['joiningServers', 'leavingServers', 'newMembers'] as const) if (k in r) n += str(r[k]);
  for (const k of ['dataWatches', 'existWatches', 'childWatches', 'persistentWatches', 'persistentRecursiveWatches'] as const)
    if (k in r) n += strList(r[k]);
  if (Array.isArray(r.ops)) for (const op of r.ops) n += 9 + requestSizeBound(op as Request);
  return n + 9;
}

/**
 * Whether the encoded payload of `req` is larger than `maxBytes`. When the encoder cannot measure
 * the request (a record it cannot encode), the upper bound decides.
 */
export function exceedsMaxBuffer(req: Request, maxBytes: number): boolean {
  const bound = requestSizeBound(req);
  if (bound <= maxBytes) return false;
  try {
    return encodedRequestSize(1, req) > maxBytes;
  } catch {
    return true;
  }
}
