/**
 * A write evaluated on the mirror and rolled back: the request processor runs as it always does,
 * on the mirror's tree, with the tree recording what it read and changed and a watch registry that
 * records the triggers instead of firing them. The result is the reply (its zxids still the
 * placeholder), the write set for the store, and the triggers, fired later in the processor's own
 * order when the mirror applies the committed revision.
 */
import type { ACL, Reply } from '@tenure/protocol';
import type { DataTree, TreeRecorder } from '../semantics/data-tree.js';
import { WatchRegistry } from '../semantics/watch-registry.js';
import type { ZNode } from '../semantics/znode.js';
import type { NodeRecord, WriteSet } from './replicated-store.js';

/** One watch trigger the processor asked for, in its order. */
export type WatchNote =
  | { kind: 'created' | 'deleted'; path: string; acl: readonly ACL[]; parentAcl: readonly ACL[] }
  | { kind: 'changed'; path: string; acl: readonly ACL[] };

/** A watch registry that records triggers (writes never add watches). */
export class RecordingWatches extends WatchRegistry {
  notes: WatchNote[] = [];
  override created(path: string, _zxid: bigint, acl: readonly ACL[], parentAcl: readonly ACL[]): void {
    this.notes.push({ kind: 'created', path, acl, parentAcl });
  }
  override deleted(path: string, _zxid: bigint, acl: readonly ACL[], parentAcl: readonly ACL[]): void {
    this.notes.push({ kind: 'deleted', path, acl, parentAcl });
  }
  override changed(path: string, _zxid: bigint, acl: readonly ACL[]): void {
    this.notes.push({ kind: 'changed', path, acl });
  }
}

export interface Trial<T> {
  readonly result: T;
  /** Undefined when the evaluation changed nothing. */
  readonly write: WriteSet;
  readonly notes: WatchNote[];
  readonly changed: boolean;
}

export function nodeRecord(node: ZNode): NodeRecord {
  return {
    data: node.data,
    acl: node.acl,
    version: node.version,
    aversion: node.aversion,
    ctime: node.ctime,
    mtime: node.mtime,
    ephemeralOwner: node.ephemeralOwner,
    czxid: node.czxid,
    mzxid: node.mzxid,
  };
}

let nextWriteId = 1;

/**
 * Runs `evaluate` on the tree with recording on, then undoes every change. `placeholder` is the
 * zxid the evaluation gives "this write" (the mirror's revision + 1).
 */
export function trial<T>(tree: DataTree, watches: RecordingWatches, placeholder: bigint, evaluate: () => T, endSession?: bigint): Trial<T> {
  const recorder: TreeRecorder = { reads: new Set(), found: new Map(), nodes: new Set(), children: new Set(), undo: [] };
  watches.notes = [];
  tree.recorder = recorder;
  let result: T;
  try {
    result = evaluate();
  } catch (err) {
    tree.recorder = undefined;
    for (let i = recorder.undo.length - 1; i >= 0; i--) recorder.undo[i]!();
    throw err;
  }
  tree.recorder = undefined;
  const nodes = new Map<string, NodeRecord | null>();
  const children = new Map<string, number>();
  for (const path of recorder.nodes) {
    const node = tree.nodes.get(path);
    nodes.set(path, node === undefined ? null : nodeRecord(node));
  }
  for (const path of recorder.children) {
    const node = tree.nodes.get(path);
    if (node !== undefined) children.set(path, node.cversion);
  }
  for (let i = recorder.undo.length - 1; i >= 0; i--) recorder.undo[i]!();
  const changed = nodes.size > 0 || children.size > 0;
  const write: WriteSet = { id: nextWriteId++, placeholder, reads: recorder.reads, nodes, children, endSession };
  return { result, write, notes: watches.notes, changed };
}

/** The reply with the placeholder zxid replaced by the committed revision (header and stats). */
export function settleReply(reply: Reply, placeholder: bigint, revision: bigint): Reply {
  const fix = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(fix);
    if (v === null || typeof v !== 'object' || Buffer.isBuffer(v) || v instanceof Uint8Array) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = x === placeholder ? revision : fix(x);
    return out;
  };
  return { ...reply, zxid: reply.zxid === placeholder ? revision : reply.zxid, response: fix(reply.response) as Reply['response'] };
}
