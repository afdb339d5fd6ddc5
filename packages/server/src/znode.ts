/** One node of the data tree and its Stat. */
import type { ACL, Stat } from '@tenure/protocol';
import { CONTAINER_EPHEMERAL_OWNER, ttlFromEphemeralOwner } from '@tenure/protocol';

export class ZNode {
  data: Buffer | null;
  acl: readonly ACL[];
  readonly czxid: bigint;
  mzxid: bigint;
  readonly ctime: number;
  mtime: number;
  version = 0;
  cversion = 0;
  aversion = 0;
  readonly ephemeralOwner: bigint;
  pzxid: bigint;
  /** Child names (not paths), in creation order. */
  readonly children = new Set<string>();

  constructor(data: Buffer | null, acl: readonly ACL[], zxid: bigint, time: number, ephemeralOwner: bigint) {
    this.data = data;
    this.acl = acl;
    this.czxid = zxid;
    this.mzxid = zxid;
    this.pzxid = zxid;
    this.ctime = time;
    this.mtime = time;
    this.ephemeralOwner = ephemeralOwner;
  }

  stat(): Stat {
    return {
      czxid: this.czxid,
      mzxid: this.mzxid,
      ctime: this.ctime,
      mtime: this.mtime,
      version: this.version,
      cversion: this.cversion,
      aversion: this.aversion,
      ephemeralOwner: this.ephemeralOwner,
      dataLength: this.data === null ? 0 : this.data.length,
      numChildren: this.children.size,
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
