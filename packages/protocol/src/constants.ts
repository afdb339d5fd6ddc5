/**
 * ZooKeeper's numeric constants, with the values the wire uses (docs/zookeeper-wire-protocol.md §4).
 * Runtime objects rather than `const enum` so that JavaScript callers can use them too.
 */

/** Operation codes (`ZooDefs.OpCode`). */
export const OpCode = {
  notification: 0,
  create: 1,
  delete: 2,
  exists: 3,
  getData: 4,
  setData: 5,
  getACL: 6,
  setACL: 7,
  getChildren: 8,
  sync: 9,
  ping: 11,
  getChildren2: 12,
  check: 13,
  multi: 14,
  create2: 15,
  reconfig: 16,
  checkWatches: 17,
  removeWatches: 18,
  createContainer: 19,
  deleteContainer: 20,
  createTTL: 21,
  multiRead: 22,
  auth: 100,
  setWatches: 101,
  sasl: 102,
  getEphemerals: 103,
  getAllChildrenNumber: 104,
  setWatches2: 105,
  addWatch: 106,
  whoAmI: 107,
  createSession: -10,
  closeSession: -11,
  error: -1,
} as const;
export type OpCode = (typeof OpCode)[keyof typeof OpCode];

/** Special xids (docs/zookeeper-wire-protocol.md §3.2). */
export const Xid = {
  notification: -1,
  ping: -2,
  auth: -4,
  setWatches: -8,
} as const;

/** Create mode flags. */
export const CreateMode = {
  PERSISTENT: 0,
  EPHEMERAL: 1,
  PERSISTENT_SEQUENTIAL: 2,
  EPHEMERAL_SEQUENTIAL: 3,
  CONTAINER: 4,
  PERSISTENT_WITH_TTL: 5,
  PERSISTENT_SEQUENTIAL_WITH_TTL: 6,
} as const;
export type CreateMode = (typeof CreateMode)[keyof typeof CreateMode];

export function isEphemeralMode(mode: number): boolean {
  return mode === CreateMode.EPHEMERAL || mode === CreateMode.EPHEMERAL_SEQUENTIAL;
}
export function isSequentialMode(mode: number): boolean {
  return (
    mode === CreateMode.PERSISTENT_SEQUENTIAL ||
    mode === CreateMode.EPHEMERAL_SEQUENTIAL ||
    mode === CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL
  );
}
export function isTtlMode(mode: number): boolean {
  return mode === CreateMode.PERSISTENT_WITH_TTL || mode === CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL;
}
export function isContainerMode(mode: number): boolean {
  return mode === CreateMode.CONTAINER;
}
/** The non-sequential form of a mode (used when a protected sequential node is re-created under its old name). */
export function nonSequentialMode(mode: number): CreateMode {
  switch (mode) {
    case CreateMode.PERSISTENT_SEQUENTIAL:
      return CreateMode.PERSISTENT;
    case CreateMode.EPHEMERAL_SEQUENTIAL:
      return CreateMode.EPHEMERAL;
    case CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL:
      return CreateMode.PERSISTENT_WITH_TTL;
    default:
      return mode as CreateMode;
  }
}

/** ACL permission bits. */
export const Perms = {
  READ: 1,
  WRITE: 2,
  CREATE: 4,
  DELETE: 8,
  ADMIN: 16,
  ALL: 31,
} as const;

/** `Watcher.Event.EventType`. */
export const EventType = {
  None: -1,
  NodeCreated: 1,
  NodeDeleted: 2,
  NodeDataChanged: 3,
  NodeChildrenChanged: 4,
  DataWatchRemoved: 5,
  ChildWatchRemoved: 6,
  PersistentWatchRemoved: 7,
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

/** `Watcher.Event.KeeperState`. */
export const KeeperState = {
  Unknown: -1,
  Disconnected: 0,
  NoSyncConnected: 1,
  SyncConnected: 3,
  AuthFailed: 4,
  ConnectedReadOnly: 5,
  SaslAuthenticated: 6,
  Expired: -112,
  Closed: 7,
} as const;
export type KeeperState = (typeof KeeperState)[keyof typeof KeeperState];

/** `WatcherType`, the `type` of removeWatches / checkWatches. */
export const WatcherType = {
  Children: 1,
  Data: 2,
  Any: 3,
  Persistent: 4,
  PersistentRecursive: 5,
} as const;
export type WatcherType = (typeof WatcherType)[keyof typeof WatcherType];

/** `AddWatchMode`. */
export const AddWatchMode = {
  PERSISTENT: 0,
  PERSISTENT_RECURSIVE: 1,
} as const;
export type AddWatchMode = (typeof AddWatchMode)[keyof typeof AddWatchMode];

/** The default `jute.maxbuffer`: the largest frame payload either side accepts. */
export const DEFAULT_MAX_BUFFER = 0xfffff;

/** Batch limit for SetWatches re-registration (sum of path lengths). */
export const SET_WATCHES_MAX_LENGTH = 128 * 1024;

/** ephemeralOwner of a container node. */
export const CONTAINER_EPHEMERAL_OWNER = -0x8000000000000000n;
/** High byte marking a TTL node's ephemeralOwner (0xFF00000000000000 as a signed long). */
export const TTL_EPHEMERAL_OWNER_MASK = -0x100000000000000n;
export const MAX_TTL_MS = 0xffffffffffn;

export function ttlEphemeralOwner(ttlMs: bigint | number): bigint {
  return BigInt.asIntN(64, 0xff00000000000000n | BigInt(ttlMs));
}
export function ttlFromEphemeralOwner(owner: bigint): bigint | undefined {
  const u = BigInt.asUintN(64, owner);
  if (u >> 56n !== 0xffn || ((u >> 40n) & 0xffffn) !== 0n) return undefined;
  return u & 0xffffffffffn;
}
