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
import { JuteReader, JuteWriter, OPEN_ACL_UNSAFE, ProtocolError } from '@tenure/protocol';
import { intern } from '../acl-policy.js';
import { DataTree } from '../data-tree.js';
import { ZNode } from '../znode.js';
import { Adler32 } from './adler32.js';
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
}

/** A snapshot that cannot be used: where and why. */
export class SnapshotFormatError extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
    this.name = 'SnapshotFormatError';
  }
}

const aclKey = (acl: readonly ACL[]): string => {
  let key = '';
  for (const a of acl) key += `${a.perms}\u0000${a.id.scheme}\u0000${a.id.id}\u0001`;
  return key;
};

const statBuf = Buffer.alloc(60);

/**
 * One node's digest as DigestCalculator computes it: crc32(path, data, the 60 stat bytes); the
 * nodes under /zookeeper/ count 0 and the root is hashed as "". The tree digest is their 64-bit sum.
 */
export function nodeDigest(path: string, node: ZNode): bigint {
  if (path.startsWith('/zookeeper/')) return 0n;
  const b = statBuf;
  b.writeBigInt64BE(node.czxid, 0);
  b.writeBigInt64BE(node.mzxid, 8);
  b.writeBigInt64BE(node.pzxid, 16);
  b.writeBigInt64BE(BigInt(node.ctime), 24);
  b.writeBigInt64BE(BigInt(node.mtime), 32);
  b.writeInt32BE(node.version, 40);
  b.writeInt32BE(node.cversion, 44);
  b.writeInt32BE(node.aversion, 48);
  b.writeBigInt64BE(node.ephemeralOwner, 52);
  let crc = crc32(path === '/' ? '' : path);
  if (node.data !== null) crc = crc32(node.data, crc);
  return BigInt(crc32(b, crc));
}

/** Every node, parents before children, as DataTree.serializeNode walks them. */
function* walk(tree: DataTree): Generator<[string, ZNode]> {
  const stack: string[] = ['/'];
  while (stack.length > 0) {
    const path = stack.pop()!;
    const node = tree.nodes.get(path);
    if (node === undefined) continue;
    yield [path, node];
    const kids = [...node.children];
    for (let i = kids.length - 1; i >= 0; i--) stack.push(path === '/' ? '/' + kids[i] : path + '/' + kids[i]);
  }
}

/** The tree digest ZooKeeper would compute for this tree. */
export function treeDigest(tree: DataTree): bigint {
  let sum = 0n;
  for (const [path, node] of walk(tree)) sum += nodeDigest(path, node);
  return BigInt.asIntN(64, sum);
}

/** Serializes a consistent state as of `zxid`; the bytes are ready to write. */
export function encodeSnapshot(state: SnapshotState, zxid: bigint): Buffer {
  const w = new JuteWriter(1 << 16);
  w.int(SNAP_MAGIC).int(FORMAT_VERSION).long(0n);
  w.int(state.sessions.size);
  for (const [id, timeout] of state.sessions) w.long(id).int(timeout);
  // The ACL cache: one id per distinct list, in order of first use; OPEN_ACL_UNSAFE on the
  // system nodes keeps ZooKeeper's -1.
  const ids = new Map<string, bigint>();
  const lists: Array<readonly ACL[]> = [];
  const openKey = aclKey(OPEN_ACL_UNSAFE);
  const nodes = [...walk(state.tree)];
  const aclIds: bigint[] = new Array(nodes.length);
  let digest = 0n;
  nodes.forEach(([path, node], i) => {
    const key = aclKey(node.acl);
    if (key === openKey && (path === '/' || path === '/zookeeper' || path === '/zookeeper/quota')) {
      aclIds[i] = -1n;
    } else {
      let id = ids.get(key);
      if (id === undefined) {
        id = BigInt(lists.length + 1);
        ids.set(key, id);
        lists.push(node.acl);
      }
      aclIds[i] = id;
    }
    digest += nodeDigest(path, node);
  });
  w.int(lists.length);
  lists.forEach((acl, i) => w.long(BigInt(i + 1)).acls(acl));
  nodes.forEach(([path, node], i) => {
    w.ustring(path === '/' ? '' : path);
    w.buffer(node.data).long(aclIds[i]!);
    w.long(node.czxid).long(node.mzxid).long(BigInt(node.ctime)).long(BigInt(node.mtime));
    w.int(node.version).int(node.cversion).int(node.aversion).long(node.ephemeralOwner).long(node.pzxid);
  });
  w.ustring('/');
  const sum = new Adler32();
  const seal = (): void => {
    const bytes = w.toBuffer();
    sum.update(bytes, sealedTo, bytes.length);
    w.long(BigInt(sum.value)).ustring('/');
    const after = w.toBuffer();
    sum.update(after, bytes.length, after.length);
    sealedTo = after.length;
  };
  let sealedTo = 0;
  seal();
  w.long(zxid > 0n ? zxid : 0n).int(DIGEST_VERSION).long(zxid > 0n ? BigInt.asIntN(64, digest) : 0n);
  seal();
  return w.toBufferCopy();
}

/** ZooKeeper's quick validity check (SnapStream.isValidCheckedStream): the file ends in int 1, '/'. */
export function looksSealed(buf: Buffer): boolean {
  return buf.length >= 10 && buf.readInt32BE(buf.length - 5) === 1 && buf[buf.length - 1] === 0x2f;
}

/** Parses a snapshot file's bytes. Throws SnapshotFormatError naming the offset. */
export function decodeSnapshot(buf: Buffer, ttlEnabled: boolean): LoadedSnapshot {
  if (!looksSealed(buf)) throw new SnapshotFormatError(Math.max(0, buf.length - 5), 'the snapshot does not end with its seal (int 1, "/")');
  const r = new JuteReader(buf);
  const at = (): number => r.offset;
  try {
    if (r.int() !== SNAP_MAGIC) throw new SnapshotFormatError(0, 'bad magic (not "ZKSN")');
    const version = r.int();
    if (version !== FORMAT_VERSION) throw new SnapshotFormatError(4, `unsupported snapshot version ${version}`);
    r.long('dbId');
    const sessions = new Map<bigint, number>();
    const count = r.int('session count');
    if (count < 0 || count * 12 > r.remaining) throw new SnapshotFormatError(16, `bad session count ${count}`);
    for (let i = 0; i < count; i++) sessions.set(r.long('session id'), r.int('session timeout'));
    const acls = new Map<bigint, readonly ACL[]>();
    const aclCount = r.int('acl cache size');
    if (aclCount < 0 || aclCount * 12 > r.remaining) throw new SnapshotFormatError(at() - 4, `bad ACL cache size ${aclCount}`);
    for (let i = 0; i < aclCount; i++) {
      const id = r.long('acl id');
      const list = r.acls() ?? [];
      acls.set(id, intern(list.map((a) => ({ perms: a.perms, id: { ...a.id } }))));
    }
    const tree = new DataTree(ttlEnabled);
    tree.reset();
    for (;;) {
      const start = at();
      const path = r.ustring('path');
      if (path === null) throw new SnapshotFormatError(start, 'null path');
      if (path === '/') break;
      const data = r.buffer('data');
      const aclId = r.long('acl');
      const czxid = r.long();
      const mzxid = r.long();
      const ctime = Number(r.long());
      const mtime = Number(r.long());
      const nodeVersion = r.int();
      const cversion = r.int();
      const aversion = r.int();
      const owner = r.long();
      const pzxid = r.long();
      const acl = aclId === -1n ? OPEN_ACL_UNSAFE : acls.get(aclId);
      if (acl === undefined) throw new SnapshotFormatError(start, `node ${path} names ACL ${aclId}, which the cache lacks`);
      const node = new ZNode(data, acl, czxid, ctime, owner);
      node.mzxid = mzxid;
      node.mtime = mtime;
      node.version = nodeVersion;
      node.cversion = cversion;
      node.aversion = aversion;
      node.pzxid = pzxid;
      const key = path === '' ? '/' : path;
      if (key !== '/') {
        const slash = key.lastIndexOf('/');
        const parent = slash <= 0 ? '/' : key.slice(0, slash);
        if (slash < 0 || !tree.nodes.has(parent)) throw new SnapshotFormatError(start, `node ${path} comes before its parent`);
        if (tree.nodes.has(key)) throw new SnapshotFormatError(start, `node ${path} appears twice`);
      } else if (tree.nodes.has('/')) throw new SnapshotFormatError(start, 'the root appears twice');
      tree.restore(key, node);
    }
    if (!tree.nodes.has('/')) throw new SnapshotFormatError(at(), 'the snapshot has no root');
    // The seal: adler32 of everything before it.
    const sealAt = at();
    const expected = BigInt(new Adler32().update(buf, 0, sealAt).value);
    const stored = r.long('checksum');
    if (stored !== expected || r.ustring('seal') !== '/') throw new SnapshotFormatError(sealAt, 'checksum mismatch');
    let digest: LoadedSnapshot['digest'];
    if (r.remaining > 0) {
      const digestAt = at();
      const zxid = r.long();
      const dv = r.int();
      const value = dv < 2 ? BigInt('0x' + (r.ustring() ?? '0')) : r.long();
      const sealAt2 = at();
      const expected2 = BigInt(new Adler32().update(buf, 0, sealAt2).value);
      if (r.long('checksum') !== expected2 || r.ustring('seal') !== '/') throw new SnapshotFormatError(digestAt, 'digest checksum mismatch');
      digest = zxid > 0n ? { zxid, version: dv, digest: value } : undefined;
    }
    if (r.remaining !== 0) throw new SnapshotFormatError(at(), `${r.remaining} bytes after the seal`);
    return { tree, sessions, digest };
  } catch (err) {
    if (err instanceof SnapshotFormatError) throw err;
    if (err instanceof ProtocolError || err instanceof RangeError || err instanceof SyntaxError) {
      throw new SnapshotFormatError(at(), err.message);
    }
    throw err;
  }
}
