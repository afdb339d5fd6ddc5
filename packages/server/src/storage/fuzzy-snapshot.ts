/**
 * A fuzzy snapshot, as ZooKeeper takes them (SyncRequestProcessor's snapshot thread, DataTree
 * serialize): the last zxid Z is recorded at the start, the sessions are copied then, and the tree
 * is walked and encoded in slices of a few milliseconds, yielding to the event loop between them,
 * so requests keep being served. A node changed during the walk may be written before or after
 * its change; recovery replays the log from Z+1 over the file (txn-apply.ts replays as
 * DataTree.processTxn does over a fuzzy snapshot), which brings every node to its state.
 *
 * The walk is the live Map's iterator (insertion order, parents first): a node deleted before the
 * walk reaches it is not written; a node created after Z (czxid > Z) is skipped, its create is in
 * the log; a node re-inserted by a rolled-back multi is not written twice (its `snapshotMark`).
 *
 * The digest. ZooKeeper writes the digest of the tree at the last txn applied when the walk ends,
 * and compares it when its replay reaches that zxid. We keep no running tree digest, so the digest
 * of a walk is exact only when no txn was applied during it (then it is the digest at Z, which
 * covers every walk that fits in one slice), and the walk stops summing it at the first txn.
 * Otherwise the file carries the empty ZxidDigest (zxid 0), as ZooKeeper itself writes when it
 * has none: DataTree.deserializeZxidDigest then logs "The digest value is empty in snapshot" and
 * skips the check, and the file is valid either way.
 */
import type { SnapshotState } from './snapshot.js';
import { SnapshotEncoder } from './snapshot.js';

export interface FuzzySnapshot {
  /** Z: the last zxid applied when the walk began (the file's name). */
  zxid: bigint;
  /** The file's size. */
  bytes: number;
  /** Whether the file carries the tree digest (no txn was applied during the walk). */
  digest: boolean;
  nodes: number;
  /** How many times the walk yielded to the event loop. */
  slices: number;
}

export interface FuzzySource {
  state(): SnapshotState;
  /** The last zxid applied to the tree (and appended to the log). */
  lastZxid(): bigint;
}

/** Where the file goes, front to back; a write resolves once its pieces may be reused. */
export interface SnapshotSink {
  write(parts: readonly Buffer[]): Promise<void>;
}

let marks = 0;

/** Records pending past this are written out before the walk goes on (the encoder's piece is 1 MiB). */
const FLUSH_BYTES = 768 * 1024;

/**
 * Walks and encodes the tree in slices of about `sliceMs` of the event loop each, writing the
 * file to the sink `openSink` gives for Z as it goes: only about a megabyte of it is held at a time. The ACL cache, which
 * the file holds before the nodes, is the lists the tree's nodes hold at Z (see SnapshotEncoder).
 */
export async function takeFuzzySnapshot(
  source: FuzzySource,
  openSink: (zxid: bigint) => Promise<SnapshotSink>,
  sliceMs = 8,
): Promise<FuzzySnapshot> {
  // Z, the sessions and the ACL cache are taken in the caller's turn; the file opens after.
  const zxid = source.lastZxid();
  const { tree, sessions } = source.state();
  const enc = new SnapshotEncoder(sessions);
  enc.declareAcls(tree.nodes);
  const head = enc.head();
  const sink = await openSink(zxid);
  let bytes = head.length;
  await sink.write([head]);
  const mark = ++marks;
  // Z as its two words, for a comparison per node with no BigInt (ZNode.czxidAtMost).
  const zHi = Number(BigInt.asIntN(64, zxid) >> 32n);
  const zLo = Number(zxid & 0xffffffffn);
  const it = tree.nodes.entries();
  let slices = 0;
  for (;;) {
    const until = performance.now() + sliceMs;
    let done = false;
    for (let n = 0; ; n++) {
      const next = it.next();
      if (next.done === true) {
        done = true;
        break;
      }
      const [path, node] = next.value;
      if (node.snapshotMark !== mark && node.czxidAtMost(zHi, zLo)) {
        node.snapshotMark = mark;
        enc.add(path, node);
      }
      if ((n & 63) === 63 && (enc.pending >= FLUSH_BYTES || ((n & 255) === 255 && performance.now() >= until))) break;
    }
    if (done) break;
    slices++;
    // The write is the yield to the event loop: requests are served while it runs.
    const parts = enc.drain();
    for (const b of parts) bytes += b.length;
    await sink.write(parts);
    // Txns are applied between slices: after one, the digest cannot be exact, so stop summing it.
    if (source.lastZxid() !== zxid) enc.dropDigest();
  }
  const digest = source.lastZxid() === zxid ? enc.digest : undefined;
  const exact = digest !== undefined;
  const tail = [...enc.drain(), enc.tail(exact ? zxid : 0n, digest ?? 0n)];
  for (const b of tail) bytes += b.length;
  await sink.write(tail);
  return { zxid, bytes, digest: exact, nodes: enc.count, slices };
}
