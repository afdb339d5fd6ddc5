/**
 * What a recipe inspection returns: plain, JSON-ready objects (no bigint, no Buffer), so that the
 * CLI's `--json` output and the web page render the same values. Session ids are hex as ZooKeeper
 * prints them (`0x1000a2b3c0001`), zxids and fencing tokens decimal strings, times ms since the epoch.
 */
import type { PartitionInfo, TimedLeaseInfo } from './kazoo-report.js';
export type * from './kazoo-report.js';

/** Node data as shown to people: UTF-8 text when the bytes are text, else base64 (marked so). */
export interface DataView {
  /** `utf8` when the bytes decode as UTF-8 text (see decodeData), else `base64`. */
  readonly encoding: 'utf8' | 'base64';
  /** The text, or the base64 of the bytes. */
  readonly value: string;
  /** The data's length in bytes. */
  readonly bytes: number;
}

/** One sequential node of a recipe's queue (a lock contender, a lease, an election participant). */
export interface QueueNode {
  /** The node's name, e.g. `_c_3f…-lock-0000000042`. */
  readonly name: string;
  /** The node's full path. */
  readonly path: string;
  /** The session that owns it (its `ephemeralOwner`), hex; `0x0` for a persistent node. */
  readonly sessionId: string;
  /** Its data (a lock's payload, a latch's participant id, ...). */
  readonly data: DataView;
  /** Its czxid (decimal): Tenure's fencing token for the lease this node stands for. */
  readonly fencingToken: string;
  /** Its creation time (ms since the epoch, the server's clock). */
  readonly ctime: number;
  /** The sequence suffix (the 10 digits ZooKeeper appended), or '' when the name has none. */
  readonly sequence: string;
}

/** A contender of a lock. */
export interface LockNode extends QueueNode {
  /** `lock` (mutex), `read` / `write` (read-write lock), `lease` (semaphore lease). */
  readonly kind: 'lock' | 'read' | 'write' | 'lease';
}

/** A lock (Mutex / InterProcessMutex, ReadWriteLock, Semaphore / InterProcessSemaphoreV2). */
export interface LockInfo {
  /** The lock's path: the parent of its lock nodes (for a semaphore, the parent of `leases/` and `locks/`). */
  readonly path: string;
  /**
   * - `mutex`: `_c_<uuid>-lock-<seq>` nodes. A LeaderSelector has this very layout, so its path is
   *   also listed under `elections` (kind `leader-selector`).
   * - `read-write`: `_c_<uuid>-__READ__<seq>` and `_c_<uuid>-__WRIT__<seq>` nodes in one queue.
   * - `semaphore`: `leases/_c_<uuid>-lease-<seq>` and `locks/_c_<uuid>-lock-<seq>`.
   * - `kazoo`: kazoo's Lock (KazooLock), `<uuid hex>__lock__<seq>` nodes (kazoo-layouts.ts).
   */
  readonly kind: 'mutex' | 'read-write' | 'semaphore' | 'kazoo';
  /** The first holder, or null when nobody holds it (the same object as `holders[0]`). */
  readonly holder: LockNode | null;
  /**
   * Everyone holding it: one for a mutex or a writer; the readers ahead of the first writer for a
   * read-write lock; every lease node for a semaphore (a lease whose acquirer still waits for a free
   * slot shows here too, as the newest: the layout alone cannot tell it from a granted one).
   */
  readonly holders: readonly LockNode[];
  /**
   * The waiters in queue order. For a semaphore: the acquirers queued on its internal `locks/`
   * mutex (the first of them is the one acquiring now).
   */
  readonly waiters: readonly LockNode[];
  /**
   * How long the first holder has held it: now minus its node's ctime, exact when `heldForExact`,
   * else an upper bound (it queued behind a node that has left since, and ZooKeeper does not
   * record when). null when not held.
   */
  readonly heldForMs: number | null;
  /**
   * True when the layout proves the holder took the lock as its node was created: no child of the
   * lock was created or removed since (its pzxid; see `firstSinceCreation` in classify.ts). Always
   * false for a semaphore.
   */
  readonly heldForExact: boolean;
}

/** A participant of an election. */
export interface Participant extends QueueNode {
  /** The participant id: the node's data as UTF-8 (how Curator and Tenure read it). */
  readonly id: string;
  readonly isLeader: boolean;
}

/** An election (LeaderLatch, or LeaderSelector, whose layout is a mutex's). */
export interface ElectionInfo {
  /** The latch's path: the parent of its participant nodes. */
  readonly path: string;
  /** `leader-latch`: `_c_<uuid>-latch-<seq>`; `leader-selector`: `_c_<uuid>-lock-<seq>` (also listed in `locks`). */
  readonly kind: 'leader-latch' | 'leader-selector';
  /** The leader (the first participant), or null with no participants. */
  readonly leader: Participant | null;
  /** Every participant in election order, leader first. */
  readonly participants: readonly Participant[];
  /** How long the leader has led: now minus its node's ctime (exact when `leaderForExact`, else an upper bound), or null. */
  readonly leaderForMs: number | null;
  /** True when the layout proves the leader led from its node's creation (as `heldForExact`). */
  readonly leaderForExact: boolean;
}

/** A member of a group (Curator's GroupMember: `<path>/<memberId>`, EPHEMERAL). */
export interface GroupMemberInfo {
  /** The member id: the node's name. */
  readonly id: string;
  readonly path: string;
  readonly sessionId: string;
  /** The member's payload. */
  readonly data: DataView;
  readonly ctime: number;
}

/** A group: a node whose children include plain ephemeral nodes (not recipe nodes, not service instances). */
export interface GroupInfo {
  readonly path: string;
  /** The members, by id. */
  readonly members: readonly GroupMemberInfo[];
}

/** One registered instance of a service (curator-x-discovery's JSON, `<base>/<name>/<id>`). */
export interface ServiceInstanceInfo {
  /** The instance id from the JSON (`id`). */
  readonly id: string;
  /** The node's name (differs from `id` for DYNAMIC_SEQUENTIAL). */
  readonly node: string;
  readonly path: string;
  readonly address: string | null;
  readonly port: number | null;
  readonly sslPort: number | null;
  /** `DYNAMIC`, `STATIC`, `PERMANENT` or `DYNAMIC_SEQUENTIAL`. */
  readonly serviceType: string;
  readonly registrationTimeUTC: number | null;
  /** `enabled` from the JSON; true when absent (Curator's compatible mode writes none). */
  readonly enabled: boolean;
  /** The payload as it is in the JSON (null when none). */
  readonly payload: unknown;
  /** The owning session (hex), `0x0` for STATIC / PERMANENT instances. */
  readonly sessionId: string;
  /** The raw JSON. */
  readonly data: DataView;
}

/** A service of a discovery registry. */
export interface ServiceInfo {
  /** The service name: the name of the node `<base>/<name>` (Curator puts the same in each instance's JSON). */
  readonly name: string;
  /** `<base>/<name>`. */
  readonly path: string;
  /** The registry's base path, e.g. `/services`. */
  readonly basePath: string;
  readonly instances: readonly ServiceInstanceInfo[];
}

/** The oldest item of a queue. */
export interface QueueItemInfo {
  readonly name: string;
  readonly path: string;
  readonly ctime: number;
  /** Its bytes as stored (for DistributedQueue, Curator's ItemSerializer frame). */
  readonly data: DataView;
  /**
   * The items inside a DistributedQueue node's ItemSerializer frame (one per `put`, several for
   * `putMulti`), each shown as node data is; null when the node holds no such frame (a
   * SimpleDistributedQueue item, whose bytes are the item itself).
   */
  readonly items: readonly DataView[] | null;
}

/** A queue (DistributedQueue and its priority/delay/id variants: `queue-…<seq>`; SimpleDistributedQueue: `qn-<seq>`). */
export interface QueueInfo {
  readonly path: string;
  /** `distributed` (`queue-` items) or `simple` (`qn-` items). */
  readonly kind: 'distributed' | 'simple';
  /** How many items it holds (every item child, counted from the listing, not bounded by the walk's limit). */
  readonly depth: number;
  /** The item created first (lowest sequence), or null when empty. */
  readonly oldest: QueueItemInfo | null;
  /** ms since the oldest item was created, or null. */
  readonly oldestAgeMs: number | null;
}

/** A node the walk could not read, and why (e.g. NOAUTH). */
export interface WalkError {
  readonly path: string;
  /** The ZooKeeper error name (`NONODE`, `NOAUTH`, ...) or the error's message. */
  readonly error: string;
}

/** What the bounded walk covered. */
export interface WalkSummary {
  /** Where it started. */
  readonly root: string;
  /** Nodes read. */
  readonly visited: number;
  /** The limit it ran under. */
  readonly limit: number;
  /** True when the limit cut the walk short: some recipes under `root` may be missing. */
  readonly truncated: boolean;
  /** Nodes that could not be read. */
  readonly errors: readonly WalkError[];
}

/** Everything one inspection found under a path. Lists are sorted by path. */
export interface RecipeReport {
  readonly walk: WalkSummary;
  /** When the report was made (ms since the epoch): the `now` of every `…ForMs` and age. */
  readonly at: number;
  readonly locks: readonly LockInfo[];
  readonly elections: readonly ElectionInfo[];
  readonly groups: readonly GroupInfo[];
  readonly services: readonly ServiceInfo[];
  readonly queues: readonly QueueInfo[];
  /** kazoo SetPartitioners: item → holder (kazoo-report.ts). */
  readonly partitions: readonly PartitionInfo[];
  /** Timed leases (kazoo's NonBlockingLease records): holder, time left. */
  readonly timedLeases: readonly TimedLeaseInfo[];
}

/** One session, from the four-letter words `cons` and `dump` (or, failing them, from the tree). */
export interface SessionInfo {
  /** hex, as ZooKeeper prints it. */
  readonly sessionId: string;
  /** The client's address as the server sees it (`127.0.0.1:53211`), when `cons` gave it. */
  readonly clientAddress: string | null;
  /** The negotiated timeout, when `cons` gave it. */
  readonly timeoutMs: number | null;
  /** The server it is connected to (`host:port` of the connect string), when known. */
  readonly server: string | null;
  /** Its ephemeral nodes' paths, sorted: server paths (chroot included) from `dump`; the client's paths when read from the tree. */
  readonly ephemerals: readonly string[];
  /** The last operation `cons` reported (`PING`, `GETD`, ...), when known. */
  readonly lastOperation: string | null;
}

/** Where the sessions came from, and what could not be had. */
export interface SessionsReport {
  /**
   * `four-letter-words`: `cons` and `dump` answered on at least one server.
   * `tree`: they did not (refused, not whitelisted, no TCP server); sessions are then the owners of
   * the ephemeral nodes that a walk saw, without address or timeout.
   */
  readonly source: 'four-letter-words' | 'tree';
  readonly sessions: readonly SessionInfo[];
  /** Per server, why a word could not be used (e.g. `cons is not executed because it is not in the whitelist.`). */
  readonly problems: readonly { readonly server: string; readonly reason: string }[];
}
