/**
 * One node of the data tree and its Stat.
 *
 * As in ZooKeeper, `cversion` is kept as the number of child creates (the sequential suffix and the
 * container reaper use it), and the Stat shows `2 × creates − children`, i.e. creates plus
 * deletes. The Stat shows ephemeralOwner 0 for containers and TTL nodes (DataNode.copyStat).
 */
import type { ACL, Stat } from '@tenure/protocol';
import { CONTAINER_EPHEMERAL_OWNER, ttlFromEphemeralOwner } from '@tenure/protocol';

const NO_CHILDREN: ReadonlySet<string> = new Set();

export class ZNode {
  data: Buffer | null;
  acl: readonly ACL[];
  readonly czxid: bigint;
  mzxid: bigint;
  readonly ctime: number;
  mtime: number;
  version = 0;
  /** Child creates so far (not the Stat's cversion). */
  cversion = 0;
  aversion = 0;
  readonly ephemeralOwner: bigint;
  /** The owner a Stat shows: the session of an ephemeral, 0 for anything else. */
  readonly sessionOwner: bigint;
  pzxid: bigint;
  /** The fuzzy snapshot that last wrote this node (storage/fuzzy-snapshot.ts), so none writes it twice. */
  snapshotMark = 0;
  /** Child names (not paths), in creation order; most nodes are leaves and never allocate one. */
  private childSet: Set<string> | undefined;

  constructor(data: Buffer | null, acl: readonly ACL[], zxid: bigint, time: number, ephemeralOwner: bigint) {
    this.data = data;
    this.acl = acl;
    this.czxid = zxid;
    this.mzxid = zxid;
    this.pzxid = zxid;
    this.ctime = time;
    this.mtime = time;
    this.ephemeralOwner = ephemeralOwner;
    const o = ephemeralOwner;
    this.sessionOwner = o === 0n || o === CONTAINER_EPHEMERAL_OWNER || ttlFromEphemeralOwner(o) !== undefined ? 0n : o;
  }

  get children(): ReadonlySet<string> {
    return this.childSet ?? NO_CHILDREN;
  }

  get childCount(): number {
    return this.childSet === undefined ? 0 : this.childSet.size;
  }

  addChild(name: string): void {
    (this.childSet ??= new Set()).add(name);
  }

  removeChild(name: string): void {
    this.childSet?.delete(name);
  }

  stat(): Stat {
    return {
      czxid: this.czxid,
      mzxid: this.mzxid,
      ctime: this.ctime,
      mtime: this.mtime,
      version: this.version,
      cversion: (this.cversion * 2 - this.childCount) | 0,
      aversion: this.aversion,
      ephemeralOwner: this.sessionOwner,
      dataLength: this.data === null ? 0 : this.data.length,
      numChildren: this.childCount,
      pzxid: this.pzxid,
    };
  }
}

/** What an ephemeralOwner value means (ZooKeeper's EphemeralType, with extended types on). */
export type OwnerKind = 'void' | 'session' | 'container' | 'ttl';

export function ownerKind(owner: bigint, ttlEnabled: boolean): OwnerKind {
  if (owner === 0n) return 'void';
  if (owner === CONTAINER_EPHEMERAL_OWNER) return 'container';
  if (ttlEnabled && ttlFromEphemeralOwner(owner) !== undefined) return 'ttl';
  return 'session';
}
