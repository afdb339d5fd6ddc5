/**
 * The cheap upper bound of a request's encoded payload (8-byte header + record), from the op table,
 * and the jute.maxbuffer rule built on it. A client refuses an oversized request before sending it
 * and an in-process transport enforces the server's limit; exact sizes cost an encode, so both look
 * at the bound first and measure only requests that might be too large.
 */
import { opSpecs, type Field, type OpSpec } from './op-table.js';
import type { Request } from './records.js';
import { encodedRequestSize } from './request-codec.js';

/** The header, 64 bytes that cover any record's fixed-size fields, and 9 for a multi's terminator. */
const FIXED_BOUND = 8 + 64 + 9;

type Bound = (rec: Record<string, unknown>) => number;
type FieldBound = (v: unknown) => number;

/**
 * The bound of each op, as one closure per layout of its variable-size fields rather than one walk:
 * a closure reads its fields by name at its own site, which V8 keeps fast, while a walk's keyed reads
 * across every op are megamorphic. The hot ops (reads, create, setData) all have one of these layouts.
 */
function boundOf(spec: OpSpec): Bound {
  const sized = spec.sizedFields;
  const names = sized.map((f) => f.name).join(',');
  if (spec.isMulti) return (rec) => FIXED_BOUND + opsBound(rec.ops);
  if (names === '') return () => FIXED_BOUND;
  if (names === 'path') {
    const path = sized[0]!.kind.bound;
    return (rec) => FIXED_BOUND + path(rec.path);
  }
  if (names === 'path,data') {
    const [path, data] = sized.map((f) => f.kind.bound) as [FieldBound, FieldBound];
    return (rec) => FIXED_BOUND + path(rec.path) + data(rec.data);
  }
  if (names === 'path,data,acl') {
    const [path, data, acl] = sized.map((f) => f.kind.bound) as [FieldBound, FieldBound, FieldBound];
    return (rec) => FIXED_BOUND + path(rec.path) + data(rec.data) + acl(rec.acl);
  }
  return (rec) => {
    let n = FIXED_BOUND;
    for (const f of sized) n += f.kind.bound(rec[f.name]);
    return n;
  };
}

const bounds = new Map<number, Bound>();
for (const spec of opSpecs()) bounds.set(spec.type, boundOf(spec));

/** Every variable-size field of any op, for a record whose op is unknown: it is bounded by what it holds. */
const ANY_OP_FIELDS: readonly Field[] = (() => {
  const byName = new Map<string, Field>();
  for (const spec of opSpecs()) for (const f of spec.sizedFields) byName.set(f.name, f);
  return [...byName.values()];
})();

function unknownOpBound(rec: Record<string, unknown>): number {
  let n = FIXED_BOUND;
  for (const f of ANY_OP_FIELDS) if (f.name in rec) n += f.kind.bound(rec[f.name]);
  return n + opsBound(rec.ops);
}

/** Each op of a multi adds its MultiHeader and its own record. */
function opsBound(ops: unknown): number {
  let n = 0;
  if (Array.isArray(ops)) for (const op of ops) n += 9 + requestSizeBound(op as Request);
  return n;
}

/**
 * An upper bound of the encoded payload of `req`. Safe on records of any shape (it runs before the
 * shape check) but throws, like any property read, when `req` is not an object.
 */
export function requestSizeBound(req: Request): number {
  const rec = req as unknown as Record<string, unknown>;
  return (bounds.get(req.type) ?? unknownOpBound)(rec);
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
