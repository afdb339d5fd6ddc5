/**
 * The store interface: what the embedded server needs from a shared store (etcd, in @tenure/etcd)
 * to keep its tree there instead of in memory or in a data dir. The server keeps a mirror of the
 * whole namespace (replicated/mirror.ts) and evaluates every request with its own request processor;
 * the store only commits the node changes a write decided, with compares on what it read, and
 * streams every revision back in order. ZooKeeper's rules stay in one place: the server.
 */
import type { ACL } from '@tenure/protocol';
import { TenureError } from '@tenure/protocol';

/** A node as the store holds it (its children are known from the other nodes' paths). */
export interface NodeRecord {
  readonly data: Buffer | null;
  readonly acl: readonly ACL[];
  readonly version: number;
  readonly aversion: number;
  readonly ctime: number;
  readonly mtime: number;
  readonly ephemeralOwner: bigint;
  readonly czxid: bigint;
  readonly mzxid: bigint;
}

/** A node's children counters: cversion (child creates, as in znode.ts) and pzxid. */
export interface ChildrenRecord {
  readonly cversion: number;
  readonly pzxid: bigint;
}

/** One revision of the store, as the mirror applies it. */
export interface RevisionChange {
  readonly revision: bigint;
  /** Nodes written (a record) or deleted (null) at this revision. */
  readonly nodes: ReadonlyMap<string, NodeRecord | null>;
  /** Children counters written at this revision (null: the node went). */
  readonly children: ReadonlyMap<string, ChildrenRecord | null>;
  /** Sessions that began (id → negotiated timeout) and ended (closed, expired) at this revision. */
  readonly startedSessions: ReadonlyMap<bigint, number>;
  readonly endedSessions: readonly bigint[];
  /** This server's commit that made the revision (WriteSet.id), when it was one. */
  readonly commit?: number;
  /** The watch triggers of another server's commit, in its processor's order: kind (c, d, m) and path. */
  readonly order?: ReadonlyArray<readonly [string, string]>;
  /** Sessions another server has taken over (a client re-attached there): this server's connection of each closes. */
  readonly movedSessions?: readonly bigint[];
  /** A resync after a gap the store could not replay (compaction): the whole namespace is in the change. */
  readonly resync?: boolean;
}

/** The namespace at one revision, as the mirror loads it. */
export interface StoreSnapshot {
  readonly revision: bigint;
  readonly nodes: ReadonlyMap<string, NodeRecord>;
  readonly children: ReadonlyMap<string, ChildrenRecord>;
  readonly sessions: ReadonlyMap<bigint, number>;
}

/**
 * A write decided on the mirror: what it read (compared), what it changed (after-state), and the
 * zxid the evaluation used for "this write" (`placeholder`): a czxid or mzxid equal to it means
 * the revision the store commits at.
 */
export interface WriteSet {
  readonly id: number;
  readonly placeholder: bigint;
  readonly reads: ReadonlySet<string>;
  readonly nodes: ReadonlyMap<string, NodeRecord | null>;
  /** Children counters (cversion) after the write, for nodes whose children changed. */
  readonly children: ReadonlyMap<string, number>;
  /** closeSession: the session's record goes in the same commit. */
  readonly endSession?: bigint;
  /**
   * A failing write that takes a zxid all the same (ZooKeeper logs it as an error txn): with no
   * change, the store still commits (a revision of its own marker) when the compares hold.
   */
  readonly takesZxid?: boolean;
  /** The watch triggers in the processor's order (kind c/d/m, path), for the other servers' mirrors. */
  readonly order?: ReadonlyArray<readonly [string, string]>;
}

/**
 * How a commit ended. `committed`: written at `revision`, and the mirror has applied it.
 * `unchanged`: the compares held and nothing was to be written (a failing or read-only decision
 * stands). `conflict`: something read had changed; the mirror has caught up, decide again.
 */
export type CommitOutcome =
  | { readonly kind: 'committed'; readonly revision: bigint }
  | { readonly kind: 'unchanged'; readonly revision: bigint }
  | { readonly kind: 'conflict'; readonly revision: bigint };

/** What the store tells the server as it runs. */
export interface StoreSink {
  /** A revision, in order; called before any commit of that revision resolves. */
  apply(change: RevisionChange): void;
  /** The store can (false) or again can (true) reach its backend. */
  reachable(up: boolean): void;
}

export interface ReplicatedStore {
  /** Loads the namespace and starts streaming revisions to `sink` from the snapshot's revision. */
  open(sink: StoreSink): Promise<StoreSnapshot>;
  /** Whether the store reaches its backend now (handshakes are refused while it does not). */
  readonly reachable: boolean;
  /** Commits a write set (compares only when it changes nothing). Throws StoreLimitError when it is too large to commit at once. */
  commit(write: WriteSet): Promise<CommitOutcome>;
  /** A linearizable barrier: resolves with a revision the mirror has applied, after every write acknowledged before the call. */
  barrier(): Promise<bigint>;
  /** Starts a session; resolves once the mirror has seen it. The timeout may be rounded (lease granularity). */
  createSession(timeoutMs: number): Promise<{ id: bigint; timeoutMs: number }>;
  /** Marks a session as served here (a re-attach), so the server that served it before closes its connection. */
  claimSession(id: bigint, timeoutMs: number): Promise<void>;
  /** The password of a session, derived from a secret the store keeps (any server computes the same). */
  sessionPassword(id: bigint): Buffer;
  /** Keeps a session alive (a ping or request arrived). */
  renewSession(id: bigint, timeoutMs: number): void;
  /** Ends a session whose ephemerals could not go in one commit (the backend deletes them itself). */
  revokeSession(id: bigint): Promise<void>;
  close(): Promise<void>;
}

/** A write too large for the store to commit at once (a multi is never split). Names the limit. */
export class StoreLimitError extends TenureError {
  override name = 'StoreLimitError';
  constructor(
    readonly limit: string,
    message: string,
  ) {
    super('StoreLimitError', message);
  }
}

/** The store could not say whether a commit landed (its backend went away mid-call). */
export class StoreUnavailableError extends TenureError {
  override name = 'StoreUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('StoreUnavailableError', message, options);
  }
}
