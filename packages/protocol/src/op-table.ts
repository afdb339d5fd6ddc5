/**
 * The per-op table: for every op this codec knows, the fields of its request record in wire order,
 * how a successful reply to it is laid out, and whether multi may carry it. Request encode and
 * decode, the in-process shape check, the size bound and the reply codec all read it, so adding an
 * op is one row here plus its record type in records.ts (and its code in constants.ts).
 */
import { OpCode } from './constants.js';
import type * as R from './records.js';
import {
  acls,
  bool,
  buffer,
  fixedBound,
  int,
  laxString,
  long,
  multiOps,
  string,
  strings,
  ustring,
  ustringOrEmpty,
} from './request-fields.js';
import type { FieldKind } from './request-fields.js';

/** How a successful reply is laid out after the ReplyHeader (response-bodies.ts reads and writes each). */
export type ReplyShape =
  | 'none'
  | 'path'
  | 'pathStat'
  | 'stat'
  | 'dataStat'
  | 'aclStat'
  | 'children'
  | 'childrenStat'
  | 'paths'
  | 'count'
  | 'err'
  | 'clientInfo'
  | 'token'
  | 'multi';

export interface Field {
  readonly name: string;
  readonly kind: FieldKind;
  /** What a ProtocolError about this field calls it. */
  readonly label: string;
}

export interface OpSpec {
  readonly type: number;
  /** The request record after the RequestHeader, in wire order. */
  readonly fields: readonly Field[];
  /** The fields that can add to the size bound (strings, buffers, lists), so the bound skips the rest. */
  readonly sizedFields: readonly Field[];
  readonly reply: ReplyShape;
  /** Whether the op may appear inside multi (writes and check) or multiRead (getData, getChildren). */
  readonly inMulti: boolean;
  /** multi / multiRead, whose body is the multi codec's. */
  readonly isMulti: boolean;
}

/**
 * A record's fields, in wire order (object keys keep their order), each a kind or [kind, label] when
 * an error message names it differently. The mapped type makes the list cover the record exactly.
 */
type FieldList<Rec> = { readonly [K in Exclude<keyof Rec, 'type'>]-?: FieldKind | readonly [FieldKind, string] };

/** Rows by op code + LOWEST_OP, in a dense array: the codec's hot paths look an op up on every message. */
const LOWEST_OP: number = OpCode.closeSession;
/** Packed, not holey: every op code lies below 128 + LOWEST_OP. */
const byCode: (OpSpec | undefined)[] = Array.from({ length: 128 }, () => undefined);
const specs: OpSpec[] = [];

function op<Rec extends R.Request>(type: Rec['type'], reply: ReplyShape, list: FieldList<Rec>, inMulti = false): void {
  const fields = Object.entries(list as Record<string, FieldKind | readonly [FieldKind, string]>).map(([name, f]): Field =>
    Array.isArray(f)
      ? { name, kind: (f as readonly [FieldKind, string])[0], label: (f as readonly [FieldKind, string])[1] }
      : { name, kind: f as FieldKind, label: name },
  );
  const sizedFields = fields.filter((f) => f.kind.bound !== fixedBound);
  const spec: OpSpec = { type, fields, sizedFields, reply, inMulti, isMulti: reply === 'multi' };
  specs.push(spec);
  byCode[type - LOWEST_OP] = spec;
}

const IN_MULTI = true;
const create: FieldList<R.CreateRequest> = { path: string, data: buffer, acl: [acls, 'acl list'], flags: int };
const pathWatch: FieldList<R.GetDataRequest> = { path: string, watch: bool };
const pathVersion: FieldList<R.DeleteRequest> = { path: string, version: int };
const pathOnly: FieldList<R.GetACLRequest> = { path: string };
const watcherType: FieldList<R.RemoveWatchesRequest> = { path: string, watcherType: int };
const multi: FieldList<R.MultiRequest> = { ops: multiOps };
const setWatches: FieldList<R.SetWatchesRequest> = {
  relativeZxid: long,
  dataWatches: strings,
  existWatches: strings,
  childWatches: strings,
};

op<R.CreateRequest>(OpCode.create, 'path', create, IN_MULTI);
op<R.DeleteRequest>(OpCode.delete, 'none', pathVersion, IN_MULTI);
op<R.ExistsRequest>(OpCode.exists, 'stat', pathWatch);
op<R.GetDataRequest>(OpCode.getData, 'dataStat', pathWatch, IN_MULTI);
op<R.SetDataRequest>(OpCode.setData, 'stat', { path: string, data: buffer, version: int }, IN_MULTI);
op<R.GetACLRequest>(OpCode.getACL, 'aclStat', pathOnly);
op<R.SetACLRequest>(OpCode.setACL, 'stat', { path: string, acl: [acls, 'acl list'], version: int });
op<R.GetChildrenRequest>(OpCode.getChildren, 'children', pathWatch, IN_MULTI);
op<R.SyncRequest>(OpCode.sync, 'path', { path: laxString });
op<R.EmptyRequest>(OpCode.ping, 'none', {});
op<R.GetChildrenRequest>(OpCode.getChildren2, 'childrenStat', pathWatch);
op<R.CheckVersionRequest>(OpCode.check, 'none', pathVersion, IN_MULTI);
op<R.MultiRequest>(OpCode.multi, 'multi', multi);
op<R.CreateRequest>(OpCode.create2, 'pathStat', create, IN_MULTI);
op<R.ReconfigRequest>(OpCode.reconfig, 'dataStat', {
  joiningServers: ustring,
  leavingServers: ustring,
  newMembers: ustring,
  curConfigId: long,
});
op<R.RemoveWatchesRequest>(OpCode.checkWatches, 'none', watcherType);
op<R.RemoveWatchesRequest>(OpCode.removeWatches, 'none', watcherType);
op<R.CreateRequest>(OpCode.createContainer, 'pathStat', create, IN_MULTI);
op<R.CreateTTLRequest>(OpCode.createTTL, 'pathStat', { ...create, ttl: long }, IN_MULTI);
op<R.MultiRequest>(OpCode.multiRead, 'multi', multi);
op<R.AuthRequest>(OpCode.auth, 'none', { authType: [int, 'auth type'], scheme: [string, 'auth scheme'], auth: buffer });
op<R.SetWatchesRequest>(OpCode.setWatches, 'none', setWatches);
op<R.SaslRequest>(OpCode.sasl, 'token', { token: buffer });
op<R.GetEphemeralsRequest>(OpCode.getEphemerals, 'paths', { prefixPath: ustringOrEmpty });
op<R.GetAllChildrenNumberRequest>(OpCode.getAllChildrenNumber, 'count', pathOnly);
op<R.SetWatches2Request>(OpCode.setWatches2, 'none', {
  ...setWatches,
  persistentWatches: strings,
  persistentRecursiveWatches: strings,
});
op<R.AddWatchRequest>(OpCode.addWatch, 'err', { path: string, mode: int });
op<R.EmptyRequest>(OpCode.whoAmI, 'clientInfo', {});
op<R.EmptyRequest>(OpCode.closeSession, 'none', {});

/** The row of an op code, or undefined for one this codec does not know. */
export function opSpec(type: unknown): OpSpec | undefined {
  // Any value may arrive as an in-process record's type; only a number can index the array.
  return typeof type === 'number' ? byCode[type - LOWEST_OP] : undefined;
}

/** Every row of the table. */
export function opSpecs(): readonly OpSpec[] {
  return specs;
}

/** Whether an op code is one this codec (and the server) knows. */
export function isKnownOp(type: number): boolean {
  return opSpec(type) !== undefined;
}

/** Op codes whose request has no record after the header. */
export function hasEmptyRequest(type: number): boolean {
  return opSpec(type)?.fields.length === 0;
}

/** Op codes that may appear inside multi (writes and check) or multiRead (getData, getChildren). */
export function isMultiOpType(type: number): boolean {
  return opSpec(type)?.inMulti === true;
}
