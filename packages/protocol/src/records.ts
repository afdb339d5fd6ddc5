/**
 * ZooKeeper's jute records as plain TypeScript types (docs/zookeeper-wire-protocol.md §2 and §4).
 * Longs are bigint; `null` buffers/strings/vectors are distinct from empty ones.
 */
import type { OpCode } from './constants.js';

export interface Id {
  scheme: string;
  id: string;
}

export interface ACL {
  perms: number;
  id: Id;
}

/** The 11-field znode Stat. Zxids and ephemeralOwner are bigint; times are ms since the epoch. */
export interface Stat {
  czxid: bigint;
  mzxid: bigint;
  ctime: number;
  mtime: number;
  version: number;
  cversion: number;
  aversion: number;
  ephemeralOwner: bigint;
  dataLength: number;
  numChildren: number;
  pzxid: bigint;
}

export interface ConnectRequest {
  protocolVersion: number;
  lastZxidSeen: bigint;
  timeOut: number;
  sessionId: bigint;
  passwd: Buffer;
  readOnly: boolean;
}

export interface ConnectResponse {
  protocolVersion: number;
  timeOut: number;
  sessionId: bigint;
  passwd: Buffer;
  readOnly: boolean;
}

export interface RequestHeader {
  xid: number;
  type: number;
}

export interface ReplyHeader {
  xid: number;
  zxid: bigint;
  err: number;
}

export interface WatcherEvent {
  type: number;
  state: number;
  path: string;
}

// ---- requests: a union discriminated by `type` (the op code) ----

type T<K extends keyof typeof OpCode> = (typeof OpCode)[K];

export interface CreateRequest {
  type: T<'create'> | T<'create2'> | T<'createContainer'>;
  path: string;
  data: Buffer | null;
  acl: ACL[];
  flags: number;
}
export interface CreateTTLRequest {
  type: T<'createTTL'>;
  path: string;
  data: Buffer | null;
  acl: ACL[];
  flags: number;
  ttl: bigint;
}
export interface DeleteRequest {
  type: T<'delete'>;
  path: string;
  version: number;
}
export interface ExistsRequest {
  type: T<'exists'>;
  path: string;
  watch: boolean;
}
export interface GetDataRequest {
  type: T<'getData'>;
  path: string;
  watch: boolean;
}
export interface SetDataRequest {
  type: T<'setData'>;
  path: string;
  data: Buffer | null;
  version: number;
}
export interface GetACLRequest {
  type: T<'getACL'>;
  path: string;
}
export interface SetACLRequest {
  type: T<'setACL'>;
  path: string;
  acl: ACL[];
  version: number;
}
export interface GetChildrenRequest {
  type: T<'getChildren'> | T<'getChildren2'>;
  path: string;
  watch: boolean;
}
export interface SyncRequest {
  type: T<'sync'>;
  path: string;
}
export interface CheckVersionRequest {
  type: T<'check'>;
  path: string;
  version: number;
}
/** An op allowed inside multi (writes and check) or multiRead (getData, getChildren). */
export type MultiOp =
  CreateRequest | CreateTTLRequest | DeleteRequest | SetDataRequest | CheckVersionRequest | GetDataRequest | GetChildrenRequest;
export interface MultiRequest {
  type: T<'multi'> | T<'multiRead'>;
  ops: MultiOp[];
}
export interface SetWatchesRequest {
  type: T<'setWatches'>;
  relativeZxid: bigint;
  dataWatches: string[];
  existWatches: string[];
  childWatches: string[];
}
export interface SetWatches2Request {
  type: T<'setWatches2'>;
  relativeZxid: bigint;
  dataWatches: string[];
  existWatches: string[];
  childWatches: string[];
  persistentWatches: string[];
  persistentRecursiveWatches: string[];
}
export interface AddWatchRequest {
  type: T<'addWatch'>;
  path: string;
  mode: number;
}
export interface RemoveWatchesRequest {
  type: T<'removeWatches'> | T<'checkWatches'>;
  path: string;
  watcherType: number;
}
export interface GetEphemeralsRequest {
  type: T<'getEphemerals'>;
  prefixPath: string;
}
export interface GetAllChildrenNumberRequest {
  type: T<'getAllChildrenNumber'>;
  path: string;
}
export interface AuthRequest {
  type: T<'auth'>;
  authType: number;
  scheme: string;
  auth: Buffer | null;
}
export interface ReconfigRequest {
  type: T<'reconfig'>;
  joiningServers: string | null;
  leavingServers: string | null;
  newMembers: string | null;
  curConfigId: bigint;
}
export interface SaslRequest {
  type: T<'sasl'>;
  token: Buffer | null;
}
/** Jute's name for SaslRequest (zookeeper.jute: GetSASLRequest). */
export type GetSASLRequest = SaslRequest;
/** Requests without a body. */
export interface EmptyRequest {
  type: T<'ping'> | T<'closeSession'> | T<'whoAmI'>;
}

export type Request =
  | CreateRequest
  | CreateTTLRequest
  | DeleteRequest
  | ExistsRequest
  | GetDataRequest
  | SetDataRequest
  | GetACLRequest
  | SetACLRequest
  | GetChildrenRequest
  | SyncRequest
  | CheckVersionRequest
  | MultiRequest
  | SetWatchesRequest
  | SetWatches2Request
  | AddWatchRequest
  | RemoveWatchesRequest
  | GetEphemeralsRequest
  | GetAllChildrenNumberRequest
  | AuthRequest
  | ReconfigRequest
  | SaslRequest
  | EmptyRequest;

// ---- responses (the record after a ReplyHeader with err 0) ----

export interface CreateResponse {
  path: string;
}
export interface Create2Response {
  path: string;
  stat: Stat;
}
export interface StatResponse {
  stat: Stat;
}
export interface GetDataResponse {
  data: Buffer | null;
  stat: Stat;
}
export interface GetACLResponse {
  acl: ACL[];
  stat: Stat;
}
export interface GetChildrenResponse {
  children: string[];
}
export interface GetChildren2Response {
  children: string[];
  stat: Stat;
}
export interface SyncResponse {
  path: string;
}
export interface GetEphemeralsResponse {
  ephemerals: string[];
}
export interface GetAllChildrenNumberResponse {
  totalNumber: number;
}
export interface ClientInfo {
  authScheme: string;
  user: string;
}
export interface WhoAmIResponse {
  clientInfo: ClientInfo[];
}
export interface ErrorResponse {
  err: number;
}
export interface SaslResponse {
  token: Buffer | null;
}
/** Jute's name for SaslResponse (zookeeper.jute: SetSASLResponse). */
export type SetSASLResponse = SaslResponse;

/** One entry of a multi / multiRead response, discriminated by result `type`. */
export type MultiResult =
  | { type: T<'create'>; path: string }
  | { type: T<'create2'>; path: string; stat: Stat }
  | { type: T<'delete'> }
  | { type: T<'check'> }
  | { type: T<'setData'>; stat: Stat }
  | { type: T<'getData'>; data: Buffer | null; stat: Stat }
  | { type: T<'getChildren'>; children: string[] }
  | { type: T<'error'>; err: number };

export interface MultiResponse {
  results: MultiResult[];
}

/** What each request type answers with when err is 0. */
export interface ResponseByOp {
  1: CreateResponse;
  2: undefined;
  3: StatResponse;
  4: GetDataResponse;
  5: StatResponse;
  6: GetACLResponse;
  7: StatResponse;
  8: GetChildrenResponse;
  9: SyncResponse;
  11: undefined;
  12: GetChildren2Response;
  13: undefined;
  14: MultiResponse;
  15: Create2Response;
  16: GetDataResponse;
  17: undefined;
  18: undefined;
  19: Create2Response;
  21: Create2Response;
  22: MultiResponse;
  100: undefined;
  101: undefined;
  102: SaslResponse;
  103: GetEphemeralsResponse;
  104: GetAllChildrenNumberResponse;
  105: undefined;
  106: ErrorResponse;
  107: WhoAmIResponse;
  [-11]: undefined;
}
export type Response = ResponseByOp[keyof ResponseByOp];
export type ResponseFor<R extends Request> = R['type'] extends keyof ResponseByOp ? ResponseByOp[R['type']] : never;

/** A reply as a connection delivers it: the header fields plus the decoded body when err is 0. */
export interface Reply<R = Response> {
  zxid: bigint;
  err: number;
  response: R | undefined;
}
