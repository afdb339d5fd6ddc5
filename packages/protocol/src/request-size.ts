/**
 * The cheap upper bound of a request's encoded payload (8-byte header + record), from the op table,
 * and the jute.maxbuffer rule built on it. A client refuses an oversized request before sending it
 * and an in-process transport enforces the server's limit; exact sizes cost an encode, so both look
 * at the bound first and measure only requests that might be too large.
 */
import { opSpec, opSpecs, type Field } from './op-table.js';
import type { Request } from './records.js';
import { encodedRequestSize } from './request-codec.js';

/** The header, 64 bytes that cover any record's fixed-size fields, and 9 for a multi's terminator. */
const FIXED_BOUND = 8 + 64 + 9;

/** Every variable-size field of any op, for a record whose op is unknown: it is bounded by what it holds. */
const ANY_OP_FIELDS: readonly Field[] = (() => {
  const byName = new Map<string, Field>();
  for (const spec of opSpecs()) for (const f of spec.sizedFields) byName.set(f.name, f);
  return [...byName.values()];
})();

/**
 * An upper bound of the encoded payload of `req`. Safe on records of any shape (it runs before the
 * shape check) but throws, like any property read, when `req` is not an object.
 */
export function requestSizeBound(req: Request): number {
  const rec = req as unknown as Record<string, unknown>;
  const spec = opSpec(req.type);
  let n = FIXED_BOUND;
  if (spec !== undefined) {
    const fields = spec.sizedFields;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      n += f.kind.bound(rec[f.name]);
    }
    if (!spec.isMulti) return n;
  } else {
    for (const f of ANY_OP_FIELDS) if (f.name in rec) n += f.kind.bound(rec[f.name]);
  }
  // Each op of a multi adds its MultiHeader and its own record.
  const ops = rec.ops;
  if (Array.isArray(ops)) for (const op of ops) n += 9 + requestSizeBound(op as Request);
  return n;
}

/**
 * Whether the encoded payload of `req` is larger than `maxBytes`. When the encoder cannot measure
 * the request (a record it cannot encode), the upper bound decides.
 */
export function exceedsMaxBuffer(req: Request, maxBytes: number): boolean {
  if (requestSizeBound(req) <= maxBytes) return false;
  try {
    return encodedRequestSize(1, req) > maxBytes;
  } catch {
    return true;
  }
}
