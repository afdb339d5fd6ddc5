/**
 * ZooKeeper's snapshot file (FileSnap, SerializeUtils.serializeSnapshot, DataTree.serialize):
 *
 *   FileHeader("ZKSN", 2, dbId 0)
 *   int count, then count × (long sessionId, int timeoutMs)
 *   ACL cache (ReferenceCountedACLCache): int count, then count × (long id, vector<ACL>)
 *   nodes in path order, the root as "": (string path, buffer data, long aclId, StatPersisted)
 *   string "/"                                     end of the tree
 *   long adler32(everything before), string "/"    the seal
 *   ZxidDigest(long zxid, int version 2, long digest), then a second seal over all of it (3.6+)
 *
 * An ACL id of -1 is OPEN_ACL_UNSAFE without an entry (ZooKeeper's system nodes use it).
 * StatPersisted keeps cversion as the count of child creates, which is what ZNode keeps.
 */
import { crc32 } from 'node:zlib';
import type { ACL } from '@tenure/protocol';
import { JuteReader, JuteWriter, OPEN_ACL_UNSAFE, ProtocolError, TenureError } from '@tenure/protocol';
import { intern } from '../security/acl-policy.js';
import { DataArena } from '../semantics/data-arena.js';
import { DataTree } from '../semantics/data-tree.js';
import { ZNode } from '../semantics/znode.js';
import { Adler32 } from './adler32.js';
import { ByteWindow } from './byte-window.js';
import { nameText } from './name-text.js';
import { FORMAT_VERSION, SNAP_MAGIC } from './file-names.js';

/** DigestCalculator's version in 3.8. */
const DIGEST_VERSION = 2;

export interface SnapshotState {
  tree: DataTree;
  /** Live sessions: id → negotiated timeout (ms). */
  sessions: Map<bigint, number>;
}

export interface LoadedSnapshot extends SnapshotState {
  /** The tree digest the file carries, when it has one (zxid 0 means none). */
  digest: { zxid: bigint; version: number; digest: bigint } | undefined;
  /** Nodes that name an ACL id the file's cache lacks (path → the id and the record's offset); they hold UNKNOWN_ACL. */
  unknownAcls: Map<string, { id: bigint; offset: number }>;
}

/**
 * The ACL of a node that a fuzzy snapshot wrote with an id its ACL cache lacks: ZooKeeper writes
 * the cache before the tree, so a node created in between names an ACL the file does not hold
 * (ZOOKEEPER-4689). Replaying the node's create txn gives it the ACL the txn carries; until then
 * it grants nothing (it fails closed, as ZooKeeper's placeholder does).
 */
export const UNKNOWN_ACL: readonly ACL[] = Object.freeze([
  Object.freeze({ perms: 0, id: Object.freeze({ scheme: 'world', id: 'anyone' }) }),
]);

/** A snapshot that cannot be used: where and why. */
export class SnapshotFormatError extends TenureError {
  override name = 'SnapshotFormatError';
  constructor(
    readonly offset = 0,
    message = 'not a snapshot',
  ) {
    super('SNAPSHOT_FORMAT', message);
  }
}

const aclKey = (acl: readonly ACL[]): string => {
  let key = '';
  for (const a of acl) key += `${a.perms}\u0000${a.id.scheme}\u0000${a.id.id}\u0001`;
  return key;
};

const statBuf = Buffer.alloc(60);
const statView = new DataView(statBuf.buffer, statBuf.byteOffset, 60);
const TWO32 = 2 ** 32;

/** A time (ms, a safe integer) as a big-endian long, without a BigInt. */
function setTime(dv: DataView, off: number, t: number): void {
  dv.setInt32(off, Math.floor(t / TWO32));
  dv.setUint32(off + 4, t >>> 0);
}

/**
 * One node's digest as DigestCalculator computes it: crc32(path, data, the 60 stat bytes); the
 * nodes under /zookeeper/ count 0 (ZooDefs.ZOOKEEPER_NODE_SUBTREE: /zookeeper itself is hashed)
 * and the root is hashed as "". The tree digest is their 64-bit sum.
 */
let scratch = Buffer.allocUnsafe(4096);

export function nodeDigest(path: string, node: ZNode, pathBytes?: Uint8Array): number {
  if (path.startsWith('/zookeeper/')) return 0;
  const v = statView;
  node.writeCzxid(v, 0);
  node.writeMzxid(v, 8);
  node.writePzxid(v, 16);
  setTime(v, 24, node.ctime);
  setTime(v, 32, node.mtime);
  v.setInt32(40, node.version);
  v.setInt32(44, node.cversion);
  v.setInt32(48, node.aversion);
  v.setBigInt64(52, node.ephemeralOwner);
  // One crc32 call over path, data and stat (the digest is crc32 of their concatenation).
  const p = path === '/' ? EMPTY : (pathBytes ?? Buffer.from(path));
  const dataLength = node.dataLength;
  const n = p.length + dataLength + 60;
  if (n > scratch.length) scratch = Buffer.allocUnsafe(Math.max(n, scratch.length * 2));
  scratch.set(p, 0);
  node.writeData(scratch, p.length);
  scratch.set(statBuf, p.length + dataLength);
  return crc32(scratch.subarray(0, n));
}

const EMPTY = Buffer.alloc(0);

/** A 64-bit sum of unsigned 32-bit values, kept in two Numbers (no BigInt per node). */
class DigestSum {
  private lo = 0;
  private hi = 0;
  add(v: number): void {
    this.lo += v;
    if (this.lo >= 2 ** 52) {
      const carry = Math.floor(this.lo / TWO32);
      this.hi = (this.hi + carry) % TWO32;
      this.lo -= carry * TWO32;
    }
  }
  get value(): bigint {
    const carry = Math.floor(this.lo / TWO32);
    const hi = (this.hi + carry) % TWO32;
    const lo = this.lo - carry * TWO32;
    return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo));
  }
}

/** Every node depth-first, parents before children, as ZooKeeper writes them (tree-paths.ts). */
function walk(tree: DataTree): Iterable<[string, ZNode]> {
  return tree.nodes;
}

/** The tree digest ZooKeeper would compute for this tree. */
export function treeDigest(tree: DataTree): bigint {
  const sum = new DigestSum();
  for (const [path, node] of walk(tree)) sum.add(nodeDigest(path, node));
  return sum.value;
}

/**
 * The node records (the bulk of a snapshot) in 1 MiB pieces: no piece is copied again as the file
 * grows, and the Adler-32 of the records is summed piece by piece (`checksum`). A streaming writer
 * `drain`s the pieces to the file as it goes and the writer reuses its buffer.
 */
class NodeWriter {
  private parts: Buffer[] = [];
  buf = Buffer.allocUnsafe(1 << 20);
  dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  pos = 0;
  length = 0;
  private summed = 0;
  readonly sum = new Adler32();
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.checksum();
    this.parts.push(this.buf.subarray(0, this.pos));
    this.buf = Buffer.allocUnsafe(Math.max(n, 1 << 20));
    this.dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
    this.pos = 0;
    this.summed = 0;
  }
  /** Sums the records written since the last call. */
  checksum(): void {
    this.sum.update(this.buf, this.summed, this.pos);
    this.length += this.pos - this.summed;
    this.summed = this.pos;
  }
  /** Bytes written and not yet drained. */
  get pending(): number {
    return this.pos + this.parts.reduce((n, b) => n + b.length, 0);
  }
  /**
   * The records written since the last drain. The last piece is a view of the buffer that the
   * next `add` overwrites: the caller is done with the pieces (written them out) before that.
   */
  drain(): Buffer[] {
    this.checksum();
    const out = [...this.parts, this.buf.subarray(0, this.pos)];
    this.parts = [];
    this.pos = 0;
    this.summed = 0;
    return out;
  }
}

/**
 * A snapshot written node by node: `add` each node (parents first), then `finish`. The ACL cache,
 * which comes before the nodes in the file, gets its ids in order of first use as nodes are added
 * and is written at the end; the Adler-32 seal joins the header's sum to the records' sum.
 *
 * Streamed (`declareAcls`, then `head`, `drain` as records pile up, `tail`): the ACL cache is
 * fixed before the first record, so the file is written front to back and never held whole. A
 * node added later with a list outside the cache (a setACL during a fuzzy walk) names an id the
 * cache lacks, as ZooKeeper's own fuzzy snapshots can (ZOOKEEPER-4689): both readers take it, and
 * the replay of that setACL, which is after the snapshot's zxid, gives the node its ACL.
 */
export class SnapshotEncoder {
  private readonly sessions: Array<[bigint, number]>;
  private readonly byList = new Map<readonly ACL[], number>();
  private readonly byKey = new Map<string, number>();
  private readonly lists: Array<readonly ACL[]> = [];
  private readonly out = new NodeWriter();
  private readonly sum = new DigestSum();
  /** Set by `declareAcls`: the cache is written, ids past it are unknown to the file. */
  private cacheSealed = false;
  private outsideIds = 0;
  private headBytes: Buffer | undefined;
  private summing = true;
  count = 0;

  /** `sessions` is copied: the session section is as of this call. */
  constructor(sessions: ReadonlyMap<bigint, number>) {
    this.sessions = [...sessions];
  }

  private idOf(acl: readonly ACL[]): number {
    let id = this.byList.get(acl);
    if (id !== undefined) return id;
    const key = aclKey(acl);
    id = this.byKey.get(key);
    if (id === undefined) {
      id = this.cacheSealed ? this.lists.length + 1 + this.outsideIds++ : this.lists.length + 1;
      this.byKey.set(key, id);
      if (!this.cacheSealed) this.lists.push(acl);
    }
    this.byList.set(acl, id);
    return id;
  }

  /** Fixes the ACL cache as the lists of `nodes` (for a streamed file; before any `add`). */
  declareAcls(nodes: Iterable<[string, ZNode]>): void {
    for (const [path, node] of nodes) if (!systemOpen(path, node.acl)) this.idOf(node.acl);
    this.cacheSealed = true;
  }

  /** The tree digest of the nodes added so far (undefined once dropped). */
  get digest(): bigint | undefined {
    return this.summing ? this.sum.value : undefined;
  }

  /**
   * Stops summing the digest: a fuzzy walk over which a txn was applied writes the empty one (see
   * fuzzy-snapshot.ts), and the per-node crc32 was about a quarter of the walk's time.
   */
  dropDigest(): void {
    this.summing = false;
  }

  /** Sums the records written so far into the seal (a chunked writer calls it between chunks). */
  checksum(): void {
    this.out.checksum();
  }

  /** Appends one node record (path, data, ACL id, StatPersisted) and adds it to the digest. */
  add(path: string, node: ZNode): void {
    const out = this.out;
    const name = path === '/' ? '' : path;
    const pathLen = Buffer.byteLength(name);
    const dataLen = node.dataLength;
    out.ensure(4 + pathLen + 4 + dataLen + 8 + 60);
    const { buf, dv } = out;
    let p = out.pos;
    dv.setInt32(p, pathLen);
    buf.write(name, p + 4, pathLen, 'utf8');
    const pathBytes = buf.subarray(p + 4, p + 4 + pathLen);
    p += 4 + pathLen;
    if (node.dataIsNull) dv.setInt32(p, -1);
    else {
      dv.setInt32(p, dataLen);
      node.writeData(buf, p + 4);
    }
    p += 4 + dataLen;
    const aclId = systemOpen(path, node.acl) ? -1 : this.idOf(node.acl);
    dv.setInt32(p, aclId < 0 ? -1 : 0);
    dv.setInt32(p + 4, aclId);
    node.writeCzxid(dv, p + 8);
    node.writeMzxid(dv, p + 16);
    setTime(dv, p + 24, node.ctime);
    setTime(dv, p + 32, node.mtime);
    dv.setInt32(p + 40, node.version);
    dv.setInt32(p + 44, node.cversion);
    dv.setInt32(p + 48, node.aversion);
    dv.setBigInt64(p + 52, node.ephemeralOwner);
    node.writePzxid(dv, p + 60);
    out.pos = p + 68;
    this.count++;
    if (this.summing) this.sum.add(nodeDigest(path, node, pathBytes));
  }

  /** Record bytes written since the last drain. */
  get pending(): number {
    return this.out.pending;
  }

  /** The records added since the last drain (see NodeWriter.drain: write them before the next `add`). */
  drain(): Buffer[] {
    return this.out.drain();
  }

  /** The file's start: header, sessions, ACL cache (after `declareAcls` when streamed). */
  head(): Buffer {
    if (this.headBytes !== undefined) return this.headBytes;
    const w = new JuteWriter(1 << 16);
    w.int(SNAP_MAGIC).int(FORMAT_VERSION).long(0n);
    w.int(this.sessions.length);
    for (const [id, timeout] of this.sessions) w.long(id).int(timeout);
    w.int(this.lists.length);
    this.lists.forEach((acl, i) => w.long(BigInt(i + 1)).acls(acl));
    this.cacheSealed = true;
    return (this.headBytes = w.toBufferCopy());
  }

  /**
   * The file's end, after the records: "/", the seal, then ZxidDigest(`digestZxid`, 2, `digest`)
   * and its seal (a zxid of 0 writes the empty digest, which ZooKeeper reads as "no digest to
   * check"). Drain the records first.
   */
  tail(digestZxid: bigint, digest: bigint): Buffer {
    this.out.checksum();
    const sum = new Adler32().update(this.head()).combine(this.out.sum.value, this.out.length);
    const w = new JuteWriter(256);
    w.ustring('/');
    let sealedTo = 0;
    const seal = (): void => {
      const bytes = w.toBuffer();
      sum.update(bytes, sealedTo, bytes.length);
      w.long(BigInt(sum.value)).ustring('/');
      const after = w.toBuffer();
      sum.update(after, bytes.length, after.length);
      sealedTo = after.length;
    };
    seal();
    const empty = digestZxid <= 0n;
    w.long(empty ? 0n : digestZxid)
      .int(DIGEST_VERSION)
      .long(empty ? 0n : digest);
    seal();
    return w.toBufferCopy();
  }

  /** The whole file, in pieces ready to write: head, records, tail (see `tail` for the digest). */
  finish(digestZxid: bigint, digest: bigint): Buffer[] {
    const head = this.head();
    const records = this.out.drain();
    return [head, ...records, this.tail(digestZxid, digest)];
  }
}

const openKey = aclKey(OPEN_ACL_UNSAFE);
/** OPEN_ACL_UNSAFE on the system nodes keeps ZooKeeper's -1 (no cache entry). */
const systemOpen = (path: string, acl: readonly ACL[]): boolean =>
  (path === '/' || path === '/zookeeper' || path === '/zookeeper/quota') && aclKey(acl) === openKey;

/** Serializes a consistent state as of `zxid` in one go (the startup snapshot); the bytes are ready to write. */
export function encodeSnapshot(state: SnapshotState, zxid: bigint): Buffer {
  const enc = new SnapshotEncoder(state.sessions);
  for (const [path, node] of walk(state.tree)) enc.add(path, node);
  return Buffer.concat(enc.finish(zxid, enc.digest!));
}

/** ZooKeeper's quick validity check (SnapStream.isValidCheckedStream): the file ends in int 1, '/'. */
export function looksSealed(buf: Buffer): boolean {
  return buf.length >= 10 && buf.readInt32BE(buf.length - 5) === 1 && buf[buf.length - 1] === 0x2f;
}

/** Parses a snapshot file's bytes. Throws SnapshotFormatError naming the offset. */
export function decodeSnapshot(buf: Buffer, ttlEnabled: boolean): LoadedSnapshot {
  return decodeWindow(ByteWindow.of(buf), ttlEnabled);
}

/** `decodeSnapshot` of a file, read through a window of a few MiB (byte-window.ts) rather than whole. */
export function decodeSnapshotFile(path: string, ttlEnabled: boolean, windowBytes?: number): LoadedSnapshot {
  const w = ByteWindow.open(path, windowBytes);
  try {
    return decodeWindow(w, ttlEnabled);
  } finally {
    w.close();
  }
}

interface SnapshotHead {
  sessions: Map<bigint, number>;
  acls: Map<bigint, readonly ACL[]>;
  /** The window offset of the first node record. */
  end: number;
}

/** The header, sessions and ACL cache from the window's start; a ProtocolError when they run past a window short of the file. */
function readHead(w: ByteWindow): SnapshotHead {
  const r = new JuteReader(w.buf, 0, w.end);
  try {
    return readHeadFrom(r, w);
  } catch (err) {
    if (w.end >= w.size && (err instanceof ProtocolError || err instanceof RangeError || err instanceof SyntaxError)) {
      throw new SnapshotFormatError(r.offset, err.message);
    }
    throw err;
  }
}

function readHeadFrom(r: JuteReader, w: ByteWindow): SnapshotHead {
  const fileLeft = (): number => w.size - r.offset;
  if (r.int() !== SNAP_MAGIC) throw new SnapshotFormatError(0, 'bad magic (not "ZKSN")');
  const version = r.int();
  if (version !== FORMAT_VERSION) throw new SnapshotFormatError(4, `unsupported snapshot version ${version}`);
  r.long('dbId');
  const sessions = new Map<bigint, number>();
  const count = r.int('session count');
  if (count < 0 || count * 12 > fileLeft()) throw new SnapshotFormatError(16, `bad session count ${count}`);
  for (let i = 0; i < count; i++) sessions.set(r.long('session id'), r.int('session timeout'));
  const acls = new Map<bigint, readonly ACL[]>();
  const aclCount = r.int('acl cache size');
  if (aclCount < 0 || aclCount * 12 > fileLeft()) throw new SnapshotFormatError(r.offset - 4, `bad ACL cache size ${aclCount}`);
  for (let i = 0; i < aclCount; i++) {
    const id = r.long('acl id');
    const list = r.acls() ?? [];
    acls.set(id, intern(list));
  }
  return { sessions, acls, end: r.offset };
}

/** Whether `buf[at, at + n)` are the bytes of `prefix`. */
function sameBytes(buf: Buffer, at: number, n: number, prefix: Buffer): boolean {
  if (n !== prefix.length) return false;
  for (let i = 0; i < n; i++) if (buf[at + i] !== prefix[i]) return false;
  return true;
}

function decodeWindow(w: ByteWindow, ttlEnabled: boolean): LoadedSnapshot {
  const seal = w.tail(5);
  if (w.size < 10 || seal.readInt32BE(0) !== 1 || seal[4] !== 0x2f) {
    throw new SnapshotFormatError(Math.max(0, w.size - 5), 'the snapshot does not end with its seal (int 1, "/")');
  }
  // The file offset a ProtocolError is reported at.
  let failAt = 0;
  try {
    let head: SnapshotHead;
    for (;;) {
      try {
        head = readHead(w);
        break;
      } catch (err) {
        // A head larger than the window: grow the window over it and read it again.
        if (!(err instanceof ProtocolError) || w.end >= w.size) throw err;
        w.have(0, Math.min(w.size, w.buf.length * 2));
      }
    }
    const { sessions, acls } = head;
    const tree = new DataTree(ttlEnabled);
    tree.reset();
    const unknownAcls: LoadedSnapshot['unknownAcls'] = new Map();
    // The node records, read straight off a DataView (they are nearly all of the file).
    let buf = w.buf;
    let dv = w.dv;
    let p = head.end;
    failAt = p;
    // The parent of the last node restored, its path as a prefix ('' for the root) and that
    // prefix's bytes: a record whose path starts with them is its sibling, found with no string
    // made for the path (only its name is decoded).
    let parentNode: ZNode | undefined;
    let parentPath = '';
    let parentBytes: Buffer | undefined;
    const arena = new DataArena();
    let lastAclHi = NaN;
    let lastAclLo = NaN;
    let lastAcl: readonly ACL[] | undefined;
    /** Makes the `n` bytes from record start `start` present: the record's (maybe moved) start. */
    const need = (start: number, n: number, what: string, field = 0): number => {
      if (start + n <= w.end) return start;
      const moved = w.have(start, n);
      if (moved < 0) throw new SnapshotFormatError(w.base + start + field, `truncated ${what}`);
      buf = w.buf;
      dv = w.dv;
      return moved;
    };
    for (;;) {
      let start = need(p, 4, 'path');
      const pathLen = dv.getInt32(start);
      if (pathLen < 0) throw new SnapshotFormatError(w.base + start, 'null path');
      start = need(start, 4 + pathLen, 'path');
      const from = start + 4;
      if (pathLen === 1 && buf[from] === 0x2f) {
        p = from + 1; // the "/" that ends the node records
        break;
      }
      // The last '/' (a byte no multi-byte UTF-8 sequence holds): the parent's path before it.
      let slash = pathLen - 1;
      while (slash >= 0 && buf[from + slash] !== 0x2f) slash--;
      start = need(start, 8 + pathLen, 'data', 4 + pathLen);
      const dataLen = dv.getInt32(start + 4 + pathLen);
      if (dataLen < -1) throw new SnapshotFormatError(w.base + start + 4 + pathLen, `bad data length ${dataLen}`);
      start = need(start, 8 + pathLen + Math.max(0, dataLen) + 68, 'node', 4 + pathLen);
      const at = start + 4; // the path's bytes (the window may have moved)
      p = start + 8 + pathLen;
      // The bytes copied off the heap (data-arena.ts), or a big datum as latin1 chars: a copy, not
      // a view that would pin the file's bytes.
      let data: string | Buffer | null = null;
      if (DataArena.fits(dataLen)) {
        arena.put(buf, p, dataLen);
        data = arena.chunk;
      } else if (dataLen >= 0) data = buf.toString('latin1', p, p + dataLen);
      p += Math.max(0, dataLen);
      const aclHi = dv.getInt32(p);
      const aclLo = dv.getInt32(p + 4);
      // No BigInt per node where it can be: czxid is kept as its two words, mzxid and pzxid are
      // most often czxid (a leaf never changed), and the owner is most often 0.
      const cHi = dv.getInt32(p + 8);
      const cLo = dv.getInt32(p + 12);
      const mzxid = dv.getInt32(p + 16) === cHi && dv.getInt32(p + 20) === cLo ? undefined : dv.getBigInt64(p + 16);
      const pzxid = dv.getInt32(p + 60) === cHi && dv.getInt32(p + 64) === cLo ? undefined : dv.getBigInt64(p + 60);
      const owner = dv.getInt32(p + 52) === 0 && dv.getInt32(p + 56) === 0 ? 0n : dv.getBigInt64(p + 52);
      const ctime = dv.getInt32(p + 24) * TWO32 + dv.getUint32(p + 28);
      const mtime = dv.getInt32(p + 32) * TWO32 + dv.getUint32(p + 36);
      const nodeVersion = dv.getInt32(p + 40);
      const cversion = dv.getInt32(p + 44);
      const aversion = dv.getInt32(p + 48);
      // Nodes mostly share a few ACL lists: the last one is kept by its two words (no BigInt and
      // no map lookup per node).
      let acl: readonly ACL[] | undefined;
      let aclId = -1n;
      if (aclHi === lastAclHi && aclLo === lastAclLo) acl = lastAcl;
      else {
        aclId = aclHi === -1 && aclLo === -1 ? -1n : aclHi === 0 && aclLo >= 0 ? BigInt(aclLo) : dv.getBigInt64(p);
        acl = aclId === -1n ? OPEN_ACL_UNSAFE : acls.get(aclId);
        if (acl !== undefined) {
          lastAclHi = aclHi;
          lastAclLo = aclLo;
          lastAcl = acl;
        }
      }
      p += 68;
      if (acl === undefined) {
        acl = UNKNOWN_ACL;
        const path = pathLen === 0 ? '/' : buf.toString('utf8', at, at + pathLen);
        unknownAcls.set(path, { id: aclId, offset: w.base + start });
      }
      const node = ZNode.loaded(data, arena.at, acl, cHi, cLo, ctime, owner);
      if (mzxid !== undefined) node.mzxid = mzxid;
      node.mtime = mtime;
      node.version = nodeVersion;
      node.cversion = cversion;
      node.aversion = aversion;
      if (pzxid !== undefined) node.pzxid = pzxid;
      if (pathLen === 0) {
        // The root ('' in ZooKeeper's snapshots).
        if (tree.nodes.has('/')) throw new SnapshotFormatError(w.base + start, 'the root appears twice');
        tree.restore('/', node);
        continue;
      }
      if (slash < 0)
        throw new SnapshotFormatError(w.base + start, `node ${buf.toString('utf8', at, at + pathLen)} comes before its parent`);
      // Siblings come together in both writers' orders: the last parent is held, not looked up per node.
      if (parentBytes === undefined || !sameBytes(buf, at, slash, parentBytes)) {
        parentPath = slash === 0 ? '' : buf.toString('utf8', at, at + slash);
        parentNode = tree.nodes.get(slash === 0 ? '/' : parentPath);
        parentBytes = Buffer.from(buf.subarray(at, at + slash));
        if (parentNode === undefined) {
          parentBytes = undefined;
          throw new SnapshotFormatError(w.base + start, `node ${buf.toString('utf8', at, at + pathLen)} comes before its parent`);
        }
      }
      if (!tree.restoreChild(parentNode!, parentPath, nameText(buf, at + slash + 1, at + pathLen), node)) {
        throw new SnapshotFormatError(w.base + start, `node ${buf.toString('utf8', at, at + pathLen)} appears twice`);
      }
    }
    // The rest of the file (the seals and the digest: tens of bytes) into the window.
    p = w.have(p, w.size - (w.base + p));
    const r2 = new JuteReader(w.buf, p, w.end);
    const fileAt = (): number => w.base + r2.offset;
    failAt = fileAt();
    if (!tree.nodes.has('/')) throw new SnapshotFormatError(fileAt(), 'the snapshot has no root');
    // The seal: adler32 of everything before it.
    const sealAt = fileAt();
    const expected = BigInt(w.sumTo(r2.offset));
    const stored = r2.long('checksum');
    if (stored !== expected || r2.ustring('seal') !== '/') throw new SnapshotFormatError(sealAt, 'checksum mismatch');
    let digest: LoadedSnapshot['digest'];
    if (r2.remaining > 0) {
      const digestAt = fileAt();
      failAt = digestAt;
      const zxid = r2.long();
      const version = r2.int();
      const value = version < 2 ? BigInt('0x' + (r2.ustring() ?? '0')) : r2.long();
      const expected2 = BigInt(w.sumTo(r2.offset));
      if (r2.long('checksum') !== expected2 || r2.ustring('seal') !== '/')
        throw new SnapshotFormatError(digestAt, 'digest checksum mismatch');
      digest = zxid > 0n ? { zxid, version, digest: value } : undefined;
    }
    if (r2.remaining !== 0) throw new SnapshotFormatError(fileAt(), `${r2.remaining} bytes after the seal`);
    return { tree, sessions, digest, unknownAcls };
  } catch (err) {
    if (err instanceof SnapshotFormatError) throw err;
    if (err instanceof ProtocolError || err instanceof RangeError || err instanceof SyntaxError) {
      throw new SnapshotFormatError(failAt, err.message);
    }
    throw err;
  }
}
