/**
 * One node of the data tree and its Stat.
 *
 * As in ZooKeeper, `cversion` is kept as the number of child creates (the sequential suffix and the
 * container reaper use it), and the Stat shows `2 × creates − children`, i.e. creates plus
 * deletes. The Stat shows ephemeralOwner 0 for containers and TTL nodes (DataNode.copyStat).
 *
 * The data is held as a latin1 string (one char per byte, an exact round trip): a one-byte string
 * costs its bytes plus 16, where a Buffer costs a ~96-byte view besides its bytes, and a tree is
 * mostly small nodes that are never read between two restarts.
 */
import type { ACL, Stat } from '@tenure/protocol';
import { CONTAINER_EPHEMERAL_OWNER, ttlFromEphemeralOwner } from '@tenure/protocol';

const NO_CHILDREN: readonly string[] = [];
const NO_ENTRIES: ReadonlyMap<string, ZNode> = new Map();

/** A byte array's latin1 chars (a plain Uint8Array too: its toString would join numbers). */
function latin1Of(data: Uint8Array | null): string | null {
  if (data === null) return null;
  const b = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return b.toString('latin1');
}

export class ZNode {
  /** The data's bytes as latin1 chars; null for no data (ZooKeeper's null, shown as length 0). */
  private bytes: string | null;
  acl: readonly ACL[];
  readonly czxid: bigint;
  mzxid: bigint;
  readonly ctime: number;
  /**
   * mtime when it differs from ctime, else undefined: most nodes are never written after their
   * create, and a time that is not a small integer costs a 16-byte box per field.
   */
  private changedAt: number | undefined = undefined;
  version = 0;
  /** Child creates so far (not the Stat's cversion). */
  cversion = 0;
  aversion = 0;
  readonly ephemeralOwner: bigint;
  pzxid: bigint;
  /** The fuzzy snapshot that last wrote this node (storage/fuzzy-snapshot.ts), so none writes it twice. */
  snapshotMark = 0;
  /**
   * The children by name (not path), in creation order: the tree keeps no entry per full path, so
   * this is the one index a node is found by (data-tree.ts walks it). Leaves, most nodes, have none.
   */
  private kids: Map<string, ZNode> | undefined;

  constructor(data: Buffer | null, acl: readonly ACL[], zxid: bigint, time: number, ephemeralOwner: bigint) {
    this.bytes = latin1Of(data);
    this.acl = acl;
    this.czxid = zxid;
    this.mzxid = zxid;
    this.pzxid = zxid;
    this.ctime = time;
    this.ephemeralOwner = ephemeralOwner;
  }

  get mtime(): number {
    return this.changedAt ?? this.ctime;
  }

  set mtime(time: number) {
    this.changedAt = time === this.ctime ? undefined : time;
  }

  /** A copy of the data (each call a new Buffer: the node's own bytes cannot be changed through it). */
  get data(): Buffer | null {
    const b = this.bytes;
    return b === null ? null : Buffer.from(b, 'latin1');
  }

  set data(data: Buffer | null) {
    this.bytes = latin1Of(data);
  }

  /** Sets the data from its latin1 chars (a loader that decodes them straight from a file). */
  setLatin1Data(bytes: string | null): void {
    this.bytes = bytes;
  }

  get dataLength(): number {
    return this.bytes === null ? 0 : this.bytes.length;
  }

  /** Whether the data is null (not merely empty). */
  get dataIsNull(): boolean {
    return this.bytes === null;
  }

  /** Writes the data's bytes into `buf` at `offset` (nothing for null); the byte count. */
  writeData(buf: Buffer, offset: number): number {
    const b = this.bytes;
    return b === null || b.length === 0 ? 0 : buf.write(b, offset, b.length, 'latin1');
  }

  /** The owner a Stat shows: the session of an ephemeral, 0 for anything else. */
  get sessionOwner(): bigint {
    const o = this.ephemeralOwner;
    return o === 0n || o === CONTAINER_EPHEMERAL_OWNER || ttlFromEphemeralOwner(o) !== undefined ? 0n : o;
  }

  get children(): Iterable<string> {
    return this.kids?.keys() ?? NO_CHILDREN;
  }

  /** The children as [name, node], in creation order (a live view: later creates are seen). */
  childEntries(): IterableIterator<[string, ZNode]> {
    return (this.kids ?? NO_ENTRIES).entries();
  }

  get childCount(): number {
    return this.kids?.size ?? 0;
  }

  child(name: string): ZNode | undefined {
    return this.kids?.get(name);
  }

  /**
   * Links `node` under `name`. False when the name was taken (the old node is then replaced: a
   * create's name was checked free, and a loader treats it as damage): one probe, not a has and a set.
   */
  addChild(name: string, node: ZNode): boolean {
    let k = this.kids;
    if (k === undefined) this.kids = k = new Map();
    const size = k.size;
    k.set(name, node);
    return k.size !== size;
  }

  removeChild(name: string): void {
    this.kids?.delete(name);
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
      dataLength: this.dataLength,
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
