/**
 * The transaction a served request wrote, derived from the request, its outcome and the tree right
 * after it (the semantics stay unaware of storage). It carries what ZooKeeper's PrepRequestProcessor
 * would have logged: resolved sequential paths, fixed-up ACLs, the parent's new cversion, the new
 * versions, and an ErrorTxn for a write that failed but took a zxid.
 */
import type { ACL, MultiOp, MultiResult, Reply, Request, Stat } from '@tenure/protocol';
import { CONTAINER_EPHEMERAL_OWNER, OpCode, ttlFromEphemeralOwner } from '@tenure/protocol';
import { fixupAcl } from '../security/acl-policy.js';
import { parentOrRoot, type DataTree } from '../semantics/data-tree.js';
import type { TxnBody } from './txn-records.js';

export interface Captured {
  /** The header's type (the body's, or `multi`/`error`). */
  type: number;
  body: TxnBody;
  /** The time the txn carries (ctime / mtime of what it wrote). */
  time: number;
}

type CreateOp = Extract<Request, { type: 1 | 15 | 19 | 21 }>;

function errorTxn(err: number, now: number): Captured {
  return { type: OpCode.error, body: { type: OpCode.error, err }, time: now };
}

/** `laterCreates`: creates under the same parent later in the same multi (to recover this one's cversion). */
function createBody(
  tree: DataTree,
  op: CreateOp,
  path: string,
  authIds: Parameters<typeof fixupAcl>[1],
  inMulti: boolean,
  laterCreates: number,
): TxnBody {
  const node = tree.get(path);
  const parent = tree.get(parentOrRoot(path));
  const parentCVersion = parent === undefined ? -1 : parent.cversion - laterCreates;
  let acl: readonly ACL[];
  try {
    acl = node?.acl ?? fixupAcl(op.acl, authIds);
  } catch {
    acl = op.acl;
  }
  const data = op.data === null ? null : Buffer.from(op.data);
  const flags = op.flags;
  const container = inMulti ? flags === 4 : op.type === OpCode.createContainer;
  const ttlMode = inMulti ? flags === 5 || flags === 6 : op.type === OpCode.createTTL;
  if (container || node?.ephemeralOwner === CONTAINER_EPHEMERAL_OWNER) {
    return { type: OpCode.createContainer, path, data, acl, parentCVersion };
  }
  if (ttlMode) {
    const ttl = 'ttl' in op ? op.ttl : ((node && ttlFromEphemeralOwner(node.ephemeralOwner)) ?? 0n);
    return { type: OpCode.createTTL, path, data, acl, parentCVersion, ttl };
  }
  const ephemeral = flags === 1 || flags === 3;
  return { type: op.type === OpCode.create2 ? OpCode.create2 : OpCode.create, path, data, acl, ephemeral, parentCVersion };
}

function multiBody(tree: DataTree, ops: MultiOp[], results: MultiResult[], authIds: Parameters<typeof fixupAcl>[1]): TxnBody[] {
  const parents = ops.map((op, i) => {
    const r = results[i] as { path?: string };
    return (op.type === OpCode.create ||
      op.type === OpCode.create2 ||
      op.type === OpCode.createContainer ||
      op.type === OpCode.createTTL) &&
      r.path !== undefined
      ? parentOrRoot(r.path)
      : undefined;
  });
  return ops.map((op, i): TxnBody => {
    const res = results[i] as MultiResult & { path?: string; stat?: Stat };
    switch (op.type) {
      case OpCode.create:
      case OpCode.create2:
      case OpCode.createContainer:
      case OpCode.createTTL: {
        let later = 0;
        for (let j = i + 1; j < ops.length; j++) if (parents[j] === parents[i]) later++;
        return createBody(tree, op as CreateOp, res.path!, authIds, true, later);
      }
      case OpCode.delete:
        return { type: OpCode.delete, path: op.path };
      case OpCode.setData:
        return {
          type: OpCode.setData,
          path: op.path,
          data: op.data === null ? null : Buffer.from(op.data),
          version: res.stat?.version ?? 0,
        };
      case OpCode.check:
        return { type: OpCode.check, path: op.path, version: op.version };
      default:
        return { type: OpCode.error, err: 0 };
    }
  });
}

/** The txn of a request that took a zxid. */
export function captureRequest(tree: DataTree, req: Request, reply: Reply, authIds: Parameters<typeof fixupAcl>[1], now: number): Captured {
  if (reply.err !== 0) return errorTxn(reply.err, now);
  const res = reply.response as { path?: string; stat?: Stat; results?: MultiResult[] } | undefined;
  switch (req.type) {
    case OpCode.create:
    case OpCode.create2:
    case OpCode.createContainer:
    case OpCode.createTTL: {
      const path = res?.path;
      if (path === undefined) return errorTxn(0, now);
      const body = createBody(tree, req, path, authIds, false, 0);
      return { type: body.type, body, time: tree.get(path)?.ctime ?? now };
    }
    case OpCode.delete:
      return { type: OpCode.delete, body: { type: OpCode.delete, path: req.path }, time: now };
    case OpCode.setData: {
      const data = req.data === null ? null : Buffer.from(req.data);
      return {
        type: OpCode.setData,
        body: { type: OpCode.setData, path: req.path, data, version: res?.stat?.version ?? 0 },
        time: res?.stat?.mtime ?? now,
      };
    }
    case OpCode.setACL: {
      const acl = tree.get(req.path)?.acl ?? req.acl;
      return { type: OpCode.setACL, body: { type: OpCode.setACL, path: req.path, acl, version: res?.stat?.aversion ?? 0 }, time: now };
    }
    case OpCode.multi: {
      const results = res?.results ?? [];
      if (results.length > 0 && results.every((r) => r.type === OpCode.error)) {
        // A failed multi: one ErrorTxn per op, with the codes the reply carries.
        const txns = results.map((r): TxnBody => ({ type: OpCode.error, err: (r as { err: number }).err }));
        return { type: OpCode.multi, body: { type: OpCode.multi, txns }, time: now };
      }
      const txns = multiBody(tree, req.ops, results, authIds);
      let time = now;
      for (const r of results) {
        const st = (r as { stat?: Stat }).stat;
        if (st !== undefined) {
          time = st.mtime;
          break;
        }
      }
      for (let i = 0; i < txns.length; i++) {
        const t = txns[i]!;
        if (t.type === OpCode.create || t.type === OpCode.create2 || t.type === OpCode.createContainer || t.type === OpCode.createTTL) {
          const n = tree.get(t.path);
          if (n !== undefined) time = n.ctime;
          break;
        }
      }
      return { type: OpCode.multi, body: { type: OpCode.multi, txns }, time };
    }
    default:
      return errorTxn(reply.err, now);
  }
}
