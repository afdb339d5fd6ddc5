/**
 * Replays a logged transaction onto a data tree and the session map, as DataTree.processTxn does
 * at recovery: no checks (the txn was validated when it was logged), and idempotent where ZooKeeper
 * is (a create of a node that exists or a delete of one that does not changes nothing; a parent's
 * cversion only moves forward).
 */
import type { ACL } from '@tenure/protocol';
import { CONTAINER_EPHEMERAL_OWNER, OpCode, nodeName, ttlEphemeralOwner } from '@tenure/protocol';
import { intern } from '../security/acl-policy.js';
import { parentOrRoot, type DataTree } from '../semantics/data-tree.js';
import type { ZNode } from '../semantics/znode.js';
import type { Txn, TxnBody, TxnHeader } from './txn-records.js';

let lastIn: readonly ACL[] | undefined;
let lastOut: readonly ACL[] = [];

/** The shared copy of a txn's ACL list; the log reader hands back one frozen array for equal lists, so the last is remembered. */
function internAcl(acl: readonly ACL[]): readonly ACL[] {
  if (acl === lastIn) return lastOut;
  const out = intern(acl);
  if (Object.isFrozen(acl)) {
    lastIn = acl;
    lastOut = out;
  }
  return out;
}

/** Moves a parent's cversion (and pzxid) forward only, as DataTree.setCversionPzxid does. */
function raiseCversion(parent: ZNode, parentCVersion: number, zxid: bigint): void {
  const target = parentCVersion === -1 ? parent.cversion + 1 : parentCVersion;
  if (target > parent.cversion) {
    parent.cversion = target;
    parent.pzxid = zxid;
  }
}

/**
 * `plainCreate`: a create txn (type 1, alone or in a multi). Replayed over a fuzzy snapshot that
 * already holds the node, ZooKeeper's processTxn still moves the parent's cversion and pzxid to
 * the txn's (NODEEXISTS on a create), so a later snapshot's digest and stats agree. The existing
 * node takes the txn's ACL, as DataTree.createNode does: the snapshot may have written it with an
 * ACL id its cache lacks (snapshot.ts UNKNOWN_ACL).
 */
function create(
  tree: DataTree,
  h: TxnHeader,
  path: string,
  data: Buffer | null,
  acl: readonly ACL[],
  owner: bigint,
  parentCVersion: number,
  plainCreate = false,
): void {
  if (path === '/' || path === '') return;
  const parent = tree.get(parentOrRoot(path));
  if (parent === undefined) return;
  const existing = parent.child(nodeName(path));
  if (existing !== undefined) {
    existing.acl = internAcl(acl);
    if (plainCreate) raiseCversion(parent, parentCVersion, h.zxid);
    return;
  }
  const prevCversion = parent.cversion;
  const prevPzxid = parent.pzxid;
  tree.create(path, data, internAcl(acl), owner, h.zxid, h.time, undefined, parent);
  const target = parentCVersion === -1 ? prevCversion + 1 : parentCVersion;
  if (target > prevCversion) {
    parent.cversion = target;
    parent.pzxid = h.zxid;
  } else {
    parent.cversion = prevCversion;
    parent.pzxid = prevPzxid;
  }
}

/**
 * A delete as DataTree.deleteNode replays it: the parent's pzxid moves forward even when the child
 * is already gone (a fuzzy snapshot taken after the delete reached the child but not the parent).
 */
function deleteNode(tree: DataTree, path: string, zxid: bigint): void {
  if (path === '/' || path === '') return;
  const parent = tree.get(parentOrRoot(path));
  if (parent === undefined) return;
  if (tree.get(path) !== undefined) tree.delete(path, zxid);
  else if (zxid > parent.pzxid) parent.pzxid = zxid;
}

function applyBody(tree: DataTree, sessions: Map<bigint, number>, h: TxnHeader, b: TxnBody): void {
  switch (b.type) {
    case OpCode.create:
    case OpCode.create2:
      create(tree, h, b.path, b.data, b.acl, b.ephemeral ? h.clientId : 0n, b.parentCVersion, b.type === OpCode.create);
      return;
    case OpCode.createContainer:
      create(tree, h, b.path, b.data, b.acl, CONTAINER_EPHEMERAL_OWNER, b.parentCVersion);
      return;
    case OpCode.createTTL:
      create(tree, h, b.path, b.data, b.acl, ttlEphemeralOwner(b.ttl), b.parentCVersion);
      return;
    case OpCode.delete:
    case OpCode.deleteContainer:
      deleteNode(tree, b.path, h.zxid);
      return;
    case OpCode.setData: {
      const node = tree.get(b.path);
      if (node !== undefined) tree.setData(node, b.data, b.version, h.zxid, h.time);
      return;
    }
    case OpCode.setACL: {
      const node = tree.get(b.path);
      if (node !== undefined) tree.setAcl(node, internAcl(b.acl), b.version);
      return;
    }
    case OpCode.createSession:
      sessions.set(h.clientId, b.timeOut);
      return;
    case OpCode.closeSession: {
      const paths = b.paths2Delete ?? [...(tree.ephemerals.get(h.clientId) ?? [])];
      for (const p of paths) deleteNode(tree, p, h.zxid);
      sessions.delete(h.clientId);
      return;
    }
    case OpCode.multi:
      // A failed multi is logged with the txns of the ops before the failing one, then error
      // txns; ZooKeeper's DataTree.processTxn applies none of them when any is an error.
      if (b.txns.some((sub) => sub.type === OpCode.error)) return;
      for (const sub of b.txns) applyBody(tree, sessions, h, sub);
      return;
    case OpCode.check:
    case OpCode.error:
      return;
  }
}

export function applyTxn(tree: DataTree, sessions: Map<bigint, number>, txn: Txn): void {
  applyBody(tree, sessions, txn.header, txn.body);
}
