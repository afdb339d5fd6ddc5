/**
 * The jute types a request field can have, each as one object that writes it, reads it, checks an
 * in-process value of it and bounds its encoded size. The op table (op-table.ts) lists fields by these.
 *
 * Every kind is an object of the same shape, so the walks over a record's fields see one hidden class.
 */
import { ProtocolError } from './errors.js';
import type { JuteReader } from './jute-reader.js';
import type { JuteWriter } from './jute-writer.js';
import type { ACL } from './records.js';

export interface FieldKind {
  write(w: JuteWriter, v: unknown): void;
  read(r: JuteReader, label: string): unknown;
  /** Whether an in-process value could have been decoded from jute as this kind. */
  check(v: unknown): boolean;
  /** An upper bound of the encoded bytes beyond the 64 the size bound allows for fixed fields (a property: request-size.ts hands it on). */
  readonly bound: (v: unknown) => number;
}

const INT_MIN = -0x80000000;
const INT_MAX = 0x7fffffff;
const LONG_MIN = -(1n << 63n);
const LONG_MAX = (1n << 63n) - 1n;

const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= INT_MIN && v <= INT_MAX;
const isLong = (v: unknown): boolean => typeof v === 'bigint' && v >= LONG_MIN && v <= LONG_MAX;
const isString = (v: unknown): boolean => typeof v === 'string';
const isUString = (v: unknown): boolean => v === null || typeof v === 'string';
const isBuffer = (v: unknown): boolean => v === null || v instanceof Uint8Array;
const isStringList = (v: unknown): boolean => Array.isArray(v) && v.every(isString);

function isAclList(v: unknown): boolean {
  if (v === null) return true;
  if (!Array.isArray(v)) return false;
  return v.every((a: unknown) => {
    if (typeof a !== 'object' || a === null) return false;
    const { perms, id } = a as { perms: unknown; id: unknown };
    if (!isInt(perms) || typeof id !== 'object' || id === null) return false;
    return isString((id as { scheme: unknown }).scheme) && isString((id as { id: unknown }).id);
  });
}

// Bounds tolerate any value: they run before the shape check. A UTF-8 string takes at most 3 bytes
// per UTF-16 unit, plus its length prefix.
const strBound = (s: unknown): number => (typeof s === 'string' ? 4 + 3 * s.length : 4);
const bufBound = (b: unknown): number => (b instanceof Uint8Array ? 4 + b.length : 4);
function strListBound(l: unknown): number {
  if (!Array.isArray(l)) return 4;
  let n = 4;
  for (const s of l) n += strBound(s);
  return n;
}
function aclListBound(l: unknown): number {
  if (!Array.isArray(l)) return 4;
  let n = 4;
  for (const a of l as Array<{ id?: { scheme?: unknown; id?: unknown } } | null | undefined>)
    n += 4 + strBound(a?.id?.scheme) + strBound(a?.id?.id);
  return n;
}
/** The bound of a fixed-size field: the 64 bytes allowed for those cover it. */
export const fixedBound = (): number => 0;

export const int: FieldKind = {
  write: (w, v) => w.int(v as number),
  read: (r, label) => r.int(label),
  check: isInt,
  bound: fixedBound,
};

export const long: FieldKind = {
  write: (w, v) => w.long(v as bigint),
  read: (r, label) => r.long(label),
  check: isLong,
  bound: fixedBound,
};

export const bool: FieldKind = {
  write: (w, v) => w.bool(v as boolean),
  read: (r, label) => r.bool(label),
  check: (v) => typeof v === 'boolean',
  bound: fixedBound,
};

/** A ustring that must not be null when read (paths, schemes). */
export const string: FieldKind = {
  write: (w, v) => w.ustring(v as string),
  read: (r, label) => r.string(label),
  check: isString,
  bound: strBound,
};

/** `string` read from bytes, but an in-process null passes the shape check (sync only, as it always has). */
export const laxString: FieldKind = { ...string, check: isUString };

/** A ustring whose null stays null. */
export const ustring: FieldKind = {
  write: (w, v) => w.ustring(v as string | null),
  read: (r, label) => r.ustring(label),
  check: isUString,
  bound: strBound,
};

/** A ustring read as '' when null (getEphemerals' prefixPath: both mean "every ephemeral", docs/zookeeper-wire-protocol.md §4.4). */
export const ustringOrEmpty: FieldKind = { ...ustring, read: (r, label) => r.ustring(label) ?? '' };

export const buffer: FieldKind = {
  write: (w, v) => w.buffer(v as Buffer | null),
  read: (r, label) => r.buffer(label),
  check: isBuffer,
  bound: bufBound,
};

/** vector<ACL>; a null vector reads as []. */
export const acls: FieldKind = {
  write: (w, v) => w.acls(v as ACL[]),
  read: (r, label) => r.acls(label) ?? [],
  check: isAclList,
  bound: aclListBound,
};

/** vector<ustring>; a null vector reads as []. */
export const strings: FieldKind = {
  write: (w, v) => w.strings(v as string[]),
  read: (r, label) => r.strings(label) ?? [],
  check: isStringList,
  bound: strListBound,
};

/**
 * The ops of a multi / multiRead. Their bytes are the multi codec's (multi-codec.ts) and their bound
 * and shape are each op's own, so the walks over the table handle this field themselves.
 */
export const multiOps: FieldKind = {
  write: () => {
    throw new ProtocolError('multi bodies are written by the multi codec');
  },
  read: () => {
    throw new ProtocolError('multi bodies are read by the multi codec');
  },
  check: Array.isArray,
  bound: fixedBound,
};
