/**
 * One node of the data tree and its Stat.
 *
 * As in ZooKeeper, `cversion` is kept as the number of child creates (the sequential suffix and the
 * container reaper use it), and the Stat shows `2 × creates − children`, i.e. creates plus
 * deletes. The Stat shows ephemeralOwner 0 for containers and TTL nodes (DataNode.copyStat).
 *
 * The data is held as a latin1 string (one char per byte, an exact round trip): a one-byte string
 * costs its bytes plus 16, where a Buffer costs a ~96-byte view besides its bytes, and a tree is
 * mostly small nodes that are never read between two restarts. A node a snapshot loaded holds its
 * data in a shared chunk off the heap instead (data-arena.ts) until it is written.
 */
import type { ACL, Stat } from '@tenure/protocol';
import { CONTAINER_EPHEMERAL_OWNER, ttlFromEphemeralOwner } from '@tenure/protocol';
import { ChildTable } from './child-table.js';
import { arenaCopy, arenaLength } from './data-arena.js';

const NO_CHILDREN: readonly string[] = [];
const NO_ENTRIES: readonly [string, ZNode][] = [];

/** A byte array's latin1 chars (a plain Uint8Array too: its toString would join numbers). */
function latin1Of(data: Uint8Array | null): string | null {
  if (data === null) return null;
  const b = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return b.toString('latin1');
}

/** What a node holds once it has had a child: its children and the two Stat fields they move. */
interface Family {
  kids: ChildTable<ZNode> | undefined;
  /** Child creates so far (not the Stat's cversion). */
  cversion: number;
  pzxid: bigint;
}

/** What a node holds once written (data or ACL), or from its create when it has an owner. */
interface Written {
  mzxid: bigint;
  mtime: number;
  version: number;
  aversion: number;
  owner: bigint;
}

const TWO32 = 2 ** 32;
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Most nodes are leaves that are never written after their create: a leaf never written holds 9
 * small fields (96 bytes, and no other object but its data and name; 13 fields, 128 bytes, a
 * BigInt and a boxed time when each Stat field had its own), and its mzxid, pzxid, mtime,
 * versions and owner are read from the defaults (czxid, ctime, 0). A node's first child or first
 * write adds the one small record that changes. czxid and ctime are kept as their high and low
 * 32-bit words: two small integers each, where a BigInt or a time that is not a small integer is
 * a heap object of its own (a million of them to allocate, copy and collect on a restart).
 */
export class ZNode {
  /**
   * The data's bytes as latin1 chars, or the loader's chunk that holds them at `at`; null for no
   * data (ZooKeeper's null, shown as length 0).
   */
  private bytes: string | Buffer | null;
  private at = 0;
  acl: readonly ACL[];
  private czHi: number;
  private czLo: number;
  private ctHi: number;
  private ctLo: number;
  /** The fuzzy snapshot that last wrote this node (storage/fuzzy-snapshot.ts), so none writes it twice. */
  snapshotMark = 0;
  /**
   * The children by name (not path), in creation order, with cversion and pzxid: the tree keeps no
   * entry per full path, so the children tables are what a node is found by (data-tree.ts; child-table.ts).
   */
  private family: Family | undefined = undefined;
  private written: Written | undefined = undefined;

  constructor(data: Buffer | null, acl: readonly ACL[], zxid: bigint, time: number, ephemeralOwner: bigint) {
    this.bytes = latin1Of(data);
    this.acl = acl;
    if (zxid <= SAFE && zxid >= -SAFE) {
      const z = Number(zxid);
      this.czLo = z | 0;
      this.czHi = (z - (z >>> 0)) / TWO32;
    } else {
      this.czLo = Number(BigInt.asIntN(32, zxid));
      this.czHi = Number(zxid >> 32n);
    }
    this.ctLo = time | 0;
    this.ctHi = (time - (time >>> 0)) / TWO32;
    if (ephemeralOwner !== 0n) this.write().owner = ephemeralOwner;
  }

  /**
   * A node loaded from a snapshot: czxid as the file's two words, the data as latin1 chars or as
   * the datum at `at` in an arena chunk (no BigInt and no Buffer made for it).
   */
  static loaded(
    data: string | Buffer | null,
    at: number,
    acl: readonly ACL[],
    czxidHi: number,
    czxidLo: number,
    time: number,
    owner: bigint,
  ): ZNode {
    const node = new ZNode(null, acl, 0n, time, 0n);
    node.bytes = data;
    node.at = at;
    node.czHi = czxidHi;
    node.czLo = czxidLo;
    if (owner !== 0n) node.write().owner = owner; // after czxid: the record starts from it
    return node;
  }

  get czxid(): bigint {
    const hi = this.czHi;
    const lo = this.czLo >>> 0;
    return hi < 0x200000 && hi >= -0x200000 ? BigInt(hi * TWO32 + lo) : (BigInt(hi) << 32n) | BigInt(lo);
  }

  /** Whether czxid ≤ the zxid whose signed high and unsigned low words these are (no BigInt made). */
  czxidAtMost(hi: number, lo: number): boolean {
    return this.czHi < hi || (this.czHi === hi && this.czLo >>> 0 <= lo);
  }

  /** Whether czxid is the two words (a loader's check, with no BigInt made). */
  czxidIs(hi: number, lo: number): boolean {
    return this.czHi === hi && this.czLo === lo;
  }

  get ctime(): number {
    return this.ctHi * TWO32 + (this.ctLo >>> 0);
  }

  /** Writes czxid as a big-endian long at `off` (no BigInt made). */
  writeCzxid(dv: DataView, off: number): void {
    dv.setInt32(off, this.czHi);
    dv.setInt32(off + 4, this.czLo);
  }

  /** Writes mzxid as a big-endian long at `off` (no BigInt made for the default). */
  writeMzxid(dv: DataView, off: number): void {
    const w = this.written;
    if (w === undefined) this.writeCzxid(dv, off);
    else dv.setBigInt64(off, w.mzxid);
  }

  /** Writes pzxid as a big-endian long at `off` (no BigInt made for the default). */
  writePzxid(dv: DataView, off: number): void {
    const f = this.family;
    if (f === undefined) this.writeCzxid(dv, off);
    else dv.setBigInt64(off, f.pzxid);
  }

  private write(): Written {
    return (this.written ??= { mzxid: this.czxid, mtime: this.ctime, version: 0, aversion: 0, owner: 0n });
  }

  private kin(): Family {
    return (this.family ??= { kids: undefined, cversion: 0, pzxid: this.czxid });
  }

  get ephemeralOwner(): bigint {
    return this.written?.owner ?? 0n;
  }

  get mzxid(): bigint {
    return this.written?.mzxid ?? this.czxid;
  }

  set mzxid(zxid: bigint) {
    if (this.written !== undefined || zxid !== this.czxid) this.write().mzxid = zxid;
  }

  get mtime(): number {
    return this.written?.mtime ?? this.ctime;
  }

  set mtime(time: number) {
    if (this.written !== undefined || time !== this.ctime) this.write().mtime = time;
  }

  get version(): number {
    return this.written?.version ?? 0;
  }

  set version(v: number) {
    if (this.written !== undefined || v !== 0) this.write().version = v;
  }

  get aversion(): number {
    return this.written?.aversion ?? 0;
  }

  set aversion(v: number) {
    if (this.written !== undefined || v !== 0) this.write().aversion = v;
  }

  /** Child creates so far (not the Stat's cversion). */
  get cversion(): number {
    return this.family?.cversion ?? 0;
  }

  set cversion(v: number) {
    if (this.family !== undefined || v !== 0) this.kin().cversion = v;
  }

  get pzxid(): bigint {
    return this.family?.pzxid ?? this.czxid;
  }

  set pzxid(zxid: bigint) {
    if (this.family !== undefined || zxid !== this.czxid) this.kin().pzxid = zxid;
  }

  /** A copy of the data (each call a new Buffer: the node's own bytes cannot be changed through it). */
  get data(): Buffer | null {
    const b = this.bytes;
    if (typeof b === 'string') return Buffer.from(b, 'latin1');
    if (b === null) return null;
    const out = Buffer.allocUnsafe(arenaLength(b, this.at));
    arenaCopy(b, this.at, out, 0);
    return out;
  }

  set data(data: Buffer | null) {
    this.bytes = latin1Of(data);
  }

  get dataLength(): number {
    const b = this.bytes;
    return typeof b === 'string' ? b.length : b === null ? 0 : arenaLength(b, this.at);
  }

  /** Whether the data is null (not merely empty). */
  get dataIsNull(): boolean {
    return this.bytes === null;
  }

  /** Writes the data's bytes into `buf` at `offset` (nothing for null); the byte count. */
  writeData(buf: Buffer, offset: number): number {
    const b = this.bytes;
    if (typeof b === 'string') return b.length === 0 ? 0 : buf.write(b, offset, b.length, 'latin1');
    return b === null ? 0 : arenaCopy(b, this.at, buf, offset);
  }

  /** The owner a Stat shows: the session of an ephemeral, 0 for anything else. */
  get sessionOwner(): bigint {
    const o = this.ephemeralOwner;
    return o === 0n || o === CONTAINER_EPHEMERAL_OWNER || ttlFromEphemeralOwner(o) !== undefined ? 0n : o;
  }

  get children(): Iterable<string> {
    return this.family?.kids?.keys() ?? NO_CHILDREN;
  }

  /** The children's names in creation order, as a new array. */
  childNames(): string[] {
    return this.family?.kids?.names() ?? [];
  }

  /** The children as [name, node], in creation order (a live view: later creates are seen). */
  childEntries(): IterableIterator<[string, ZNode]> {
    return this.family?.kids?.entries() ?? NO_ENTRIES.values();
  }

  get childCount(): number {
    return this.family?.kids?.size ?? 0;
  }

  child(name: string): ZNode | undefined {
    return this.family?.kids?.get(name);
  }

  /**
   * Links `node` under `name`. False when the name was taken (the old node is then replaced: a
   * create's name was checked free, and a loader treats it as damage): one probe, not a has and a set.
   */
  addChild(name: string, node: ZNode): boolean {
    const f = this.kin();
    return (f.kids ??= new ChildTable()).set(name, node);
  }

  removeChild(name: string): void {
    this.family?.kids?.delete(name);
  }

  stat(): Stat {
    const czxid = this.czxid;
    const ctime = this.ctime;
    return {
      czxid,
      mzxid: this.written?.mzxid ?? czxid,
      ctime,
      mtime: this.written?.mtime ?? ctime,
      version: this.version,
      cversion: (this.cversion * 2 - this.childCount) | 0,
      aversion: this.aversion,
      ephemeralOwner: this.sessionOwner,
      dataLength: this.dataLength,
      numChildren: this.childCount,
      pzxid: this.family?.pzxid ?? czxid,
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
