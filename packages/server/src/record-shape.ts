/**
 * Shape checks for request records arriving without serialization (the in-process transport).
 * A record that could not have been decoded from jute is the in-process form of a malformed
 * frame; the server answers it MARSHALLINGERROR, as ZooKeeper does for a body it cannot read.
 * Unknown op codes are not checked here (they get UNIMPLEMENTED and a close).
 */
import { OpCode } from '@tenure/protocol';

const INT_MIN = -0x80000000;
const INT_MAX = 0x7fffffff;
const LONG_MIN = -(1n << 63n);
const LONG_MAX = (1n << 63n) - 1n;

const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= INT_MIN && v <= INT_MAX;
const isLong = (v: unknown): boolean => typeof v === 'bigint' && v >= LONG_MIN && v <= LONG_MAX;
const isString = (v: unknown): boolean => typeof v === 'string';
const isUString = (v: unknown): boolean => v === null || typeof v === 'string';
const isBuffer = (v: unknown): boolean => v === null || v instanceof Uint8Array;
const isBool = (v: unknown): boolean => typeof v === 'boolean';
const isStringList = (v: unknown): boolean => Array.isArray(v) && v.every(isString);

function isAclList(v: unknown): boolean {
  if (v === null) return true;
  if (!Array.isArray(v)) return false;
  return v.every(
    (a) =>
      typeof a === 'object' &&
      a !== null &&
      isInt((a as { perms: unknown }).perms) &&
      typeof (a as { id: unknown }).id === 'object' &&
      (a as { id: unknown }).id !== null &&
      isString((a as { id: { scheme: unknown } }).id.scheme) &&
      isString((a as { id: { id: unknown } }).id.id),
  );
}

type Fields = Record<string, (v: unknown) => boolean>;

const createFields: Fields = { path: isString, data: isBuffer, acl: isAclList, flags: isInt };

const fieldsByOp = new Map<number, Fields>([
  [OpCode.create, createFields],
  [OpCode.create2, createFields],
  [OpCode.createContainer, createFields],
  [OpCode.createTTL, { ...createFields, ttl: isLong }],
  [OpCode.delete, { path: isString, version: isInt }],
  [OpCode.exists, { path: isString, watch: isBool }],
  [OpCode.getData, { path: isString, watch: isBool }],
  [OpCode.setData, { path: isString, data: isBuffer, version: isInt }],
  [OpCode.getACL, { path: isString }],
  [OpCode.setACL, { path: isString, acl: isAclList, version: isInt }],
  [OpCode.getChildren, { path: isString, watch: isBool }],
  [OpCode.getChildren2, { path: isString, watch: isBool }],
  [OpCode.sync, { path: isUString }],
  [OpCode.check, { path: isString, version: isInt }],
  [OpCode.multi, { ops: Array.isArray }],
  [OpCode.multiRead, { ops: Array.isArray }],
  [
    OpCode.setWatches,
    { relativeZxid: isLong, dataWatches: isStringList, existWatches: isStringList, childWatches: isStringList },
  ],
  [
    OpCode.setWatches2,
    {
      relativeZxid: isLong,
      dataWatches: isStringList,
      existWatches: isStringList,
      childWatches: isStringList,
      persistentWatches: isStringList,
      persistentRecursiveWatches: isStringList,
    },
  ],
  [OpCode.addWatch, { path: isString, mode: isInt }],
  [OpCode.removeWatches, { path: isString, watcherType: isInt }],
  [OpCode.checkWatches, { path: isString, watcherType: isInt }],
  [OpCode.getEphemerals, { prefixPath: isUString }],
  [OpCode.getAllChildrenNumber, { path: isString }],
  [OpCode.auth, { authType: isInt, scheme: isString, auth: isBuffer }],
  [
    OpCode.reconfig,
    { joiningServers: isUString, leavingServers: isUString, newMembers: isUString, curConfigId: isLong },
  ],
  [OpCode.sasl, { token: isBuffer }],
  [OpCode.ping, {}],
  [OpCode.closeSession, {}],
  [OpCode.whoAmI, {}],
]);

/** Ops that may appear inside multi / multiRead, by the record they carry. */
const MULTI_OPS = new Set<number>([
  OpCode.create,
  OpCode.create2,
  OpCode.createContainer,
  OpCode.createTTL,
  OpCode.delete,
  OpCode.setData,
  OpCode.check,
  OpCode.getData,
  OpCode.getChildren,
]);

/** Whether an op code is one the server knows (others get UNIMPLEMENTED and a close). */
export function isKnownOp(type: number): boolean {
  return fieldsByOp.has(type);
}

/** The checks of each op as a flat list, so the hot path allocates nothing. */
const checksByOp = new Map<number, ReadonlyArray<readonly [string, (v: unknown) => boolean]>>(
  [...fieldsByOp].map(([op, fields]) => [op, Object.entries(fields)]),
);

/** Why a record of a known op is malformed, or undefined when it is well formed. */
export function recordProblem(req: Record<string, unknown>): string | undefined {
  const checks = checksByOp.get(req.type as number);
  if (checks === undefined) return `unknown op ${String(req.type)}`;
  for (let i = 0; i < checks.length; i++) {
    const [name, ok] = checks[i]!;
    if (!ok(req[name])) return `field ${name} of op ${String(req.type)} is malformed`;
  }
  if (req.type === OpCode.multi || req.type === OpCode.multiRead) {
    for (const op of req.ops as unknown[]) {
      if (typeof op !== 'object' || op === null) return 'multi op is not a record';
      const t = (op as { type: unknown }).type;
      if (typeof t !== 'number' || !MULTI_OPS.has(t)) return `invalid type of op ${String(t)} in multi`;
      const p = recordProblem(op as Record<string, unknown>);
      if (p !== undefined) return p;
    }
  }
  return undefined;
}
