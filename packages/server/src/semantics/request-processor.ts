/**
 * Executes requests against the data tree with ZooKeeper 3.8's semantics: the checks of
 * PrepRequestProcessor in their order (so the same error wins when several apply), the answers of
 * FinalRequestProcessor, and DataTree's watch triggers. Writes take a zxid whether they succeed or
 * not (ZooKeeper logs a failed write as an error transaction); reads answer the last zxid.
 */
import type {
  CreateRequest,
  CreateTTLRequest,
  DeleteRequest,
  Id,
  MultiOp,
  MultiResult,
  Reply,
  Request,
  Response,
  SetACLRequest,
  SetDataRequest,
  CheckVersionRequest,
  SetWatches2Request,
  WatcherEvent,
} from '@tenure/protocol';
import {
  AddWatchMode,
  CONTAINER_EPHEMERAL_OWNER,
  ErrorCode,
  EventType,
  KeeperState,
  MAX_TTL_MS,
  OpCode,
  Perms,
  pathProblem,
  sequenceSuffix,
  ttlEphemeralOwner,
} from '@tenure/protocol';
import { KeeperCode, checkAcl, clientInfos, fixupAcl, maskDigests, permits } from '../security/acl-policy.js';
import { DataTree, SPECIAL_PATHS, type Undo } from './data-tree.js';
import { isKnownOp, requestProblem as recordProblem } from '@tenure/protocol';
import type { Watcher, WatchRegistry } from './watch-registry.js';
import { ownerKind, type ZNode } from './znode.js';

/** Who is asking: the session (its id is all the semantics need), the connection's identities, and the connection as a watcher. */
export interface RequestContext {
  readonly session: { readonly id: bigint };
  readonly authIds: readonly Id[];
  readonly watcher: Watcher;
}

/** A reply, and whether the connection closes once it has been delivered. */
export interface Outcome {
  reply: Reply;
  close?: string;
}

export interface ProcessorOptions {
  ttlEnabled: boolean;
  persistentWatches: boolean;
}

/** The zxid counter, shared with the server (it outlives restarts). */
export interface ZxidCounter {
  last: bigint;
}

const fail = (code: number): never => {
  throw KeeperCode.of(code);
};

function reply(zxid: bigint, response?: Response): Outcome {
  return { reply: { zxid, err: 0, response } };
}

function error(zxid: bigint, err: number, close?: string): Outcome {
  return close === undefined ? { reply: { zxid, err, response: undefined } } : { reply: { zxid, err, response: undefined }, close };
}

const WRITE_OPS = new Set<number>([
  OpCode.create,
  OpCode.create2,
  OpCode.createContainer,
  OpCode.createTTL,
  OpCode.delete,
  OpCode.setData,
  OpCode.check,
]);
const READ_OPS = new Set<number>([OpCode.getData, OpCode.getChildren]);

function ttlFlagsWithoutTtl(op: MultiOp): boolean {
  return (
    (op.type === OpCode.create || op.type === OpCode.create2 || op.type === OpCode.createContainer) && (op.flags === 5 || op.flags === 6)
  );
}

const CONFIG_PATH = '/zookeeper/config';

/** Version check shared by delete, setData, setACL and check: -1 matches any version. */
function nextVersion(current: number, expected: number): number {
  if (expected !== -1 && expected !== current) fail(ErrorCode.BADVERSION);
  return (current + 1) | 0;
}

/** The parent of a path as ZooKeeper computes it (text before the last '/'), or undefined. */
function parentOf(path: string): string | undefined {
  const i = path.lastIndexOf('/');
  if (i === -1 || path.includes('\0')) return undefined;
  return i === 0 ? '/' : path.slice(0, i);
}

export class RequestProcessor {
  constructor(
    private readonly tree: DataTree,
    private readonly watches: WatchRegistry,
    private readonly zxid: ZxidCounter,
    private readonly options: ProcessorOptions,
    /** Wall time for ctime and mtime (the server's clock). */
    private readonly wallNow: () => number = Date.now,
  ) {}

  private nextZxid(): bigint {
    return ++this.zxid.last;
  }

  /**
   * Replaces /zookeeper/config as a ZooKeeper 3.5+ ensemble's reconfig would: `server.N=` lines
   * then `version=<hex zxid>`, with a zxid of its own and NodeDataChanged to its data watchers.
   * Returns the version. (The embedded server has no quorum: this presents a config, for tests of
   * clients that follow one.)
   */
  announceConfig(servers: readonly string[]): string {
    const zxid = this.nextZxid();
    const node = this.tree.get(CONFIG_PATH)!;
    const version = zxid.toString(16);
    const text = [...servers, `version=${version}`].join('\n');
    this.tree.setData(node, Buffer.from(text), node.version + 1, zxid, this.wallNow());
    this.watches.changed(CONFIG_PATH, zxid, node.acl);
    return version;
  }

  /** Serves one request (auth, ping and closeSession are the server's). */
  process(ctx: RequestContext, req: Request): Outcome {
    if (typeof req !== 'object' || req === null || !isKnownOp((req as { type: number }).type)) {
      return error(-1n, ErrorCode.UNIMPLEMENTED, `unknown op ${String((req as { type?: unknown } | null)?.type)}`);
    }
    const problem = recordProblem(req as unknown as Record<string, unknown>);
    if (problem !== undefined) return error(this.zxid.last, ErrorCode.MARSHALLINGERROR);
    try {
      return this.dispatch(ctx, req);
    } catch (e) {
      if (e instanceof KeeperCode) return error(this.zxid.last, e.keeperCode);
      throw e;
    }
  }

  private dispatch(ctx: RequestContext, req: Request): Outcome {
    switch (req.type) {
      case OpCode.create:
      case OpCode.create2:
      case OpCode.createContainer:
      case OpCode.createTTL:
        return this.write((zxid, time) => {
          const r = this.create(ctx, req.type, req, zxid, time, false);
          return req.type === OpCode.create ? { path: r.path } : { path: r.path, stat: r.node.stat() };
        });
      case OpCode.delete:
        return this.write((zxid) => {
          this.delete(ctx, req, zxid);
          return undefined;
        });
      case OpCode.setData:
        return this.write((zxid, time) => ({ stat: this.setData(ctx, req, zxid, time).stat() }));
      case OpCode.setACL:
        return this.write(() => ({ stat: this.setAcl(ctx, req).stat() }));
      case OpCode.check:
        // check belongs inside multi. ZooKeeper 3.8.0 still serves a standalone one: a failing
        // check is answered with its error (and takes a zxid), a passing one crashes its reply path
        // and is never answered. 3.8.5 / 3.9.3 refuse it (ZOOKEEPER-2623). So: 3.8.0's answer where
        // it gives one, the later releases' UNIMPLEMENTED and close where it does not.
        try {
          this.check(ctx, req);
        } catch (e) {
          if (e instanceof KeeperCode) return error(this.nextZxid(), e.keeperCode);
          throw e;
        }
        return error(-1n, ErrorCode.UNIMPLEMENTED, 'check is only allowed inside multi');
      case OpCode.multi:
        return this.multi(ctx, req.ops);
      case OpCode.multiRead:
        return this.multiRead(ctx, req.ops);
      case OpCode.reconfig:
        this.nextZxid();
        return error(this.zxid.last, ErrorCode.RECONFIGDISABLED);
      case OpCode.sync:
        return reply(this.zxid.last, { path: req.path as string });
      case OpCode.exists: {
        if (req.path.includes('\0')) fail(ErrorCode.BADARGUMENTS);
        if (req.watch) this.watches.addDataWatch(req.path, ctx.watcher);
        const node = this.tree.get(req.path) ?? fail(ErrorCode.NONODE);
        return reply(this.zxid.last, { stat: node.stat() });
      }
      case OpCode.getData: {
        const { data, stat } = this.getData(ctx, req.path, req.watch);
        return reply(this.zxid.last, { data, stat });
      }
      case OpCode.getChildren:
      case OpCode.getChildren2: {
        const node = this.readable(ctx, req.path);
        if (req.watch) this.watches.addChildWatch(req.path, ctx.watcher);
        const children = node.childNames();
        return reply(this.zxid.last, req.type === OpCode.getChildren ? { children } : { children, stat: node.stat() });
      }
      case OpCode.getACL: {
        const node = this.tree.get(req.path) ?? fail(ErrorCode.NONODE);
        checkAcl(node.acl, Perms.READ | Perms.ADMIN, ctx.authIds);
        const acl = permits(node.acl, Perms.ADMIN, ctx.authIds)
          ? node.acl.map((a) => ({ perms: a.perms, id: { ...a.id } }))
          : maskDigests(node.acl);
        return reply(this.zxid.last, { acl, stat: node.stat() });
      }
      case OpCode.getAllChildrenNumber: {
        this.readable(ctx, req.path);
        // ZooKeeper counts keys starting with path + '/'; for '' that includes '/' itself.
        const total = req.path === '' ? this.tree.nodes.size : this.tree.countDescendants(req.path);
        return reply(this.zxid.last, { totalNumber: total });
      }
      case OpCode.getEphemerals: {
        const mine = this.tree.ephemerals.get(ctx.session.id) ?? new Set<string>();
        const prefix = req.prefixPath;
        const all = prefix === null || prefix.trim() === '' || prefix.trim() === '/';
        return reply(this.zxid.last, { ephemerals: [...mine].filter((p) => all || p.startsWith(prefix)) });
      }
      case OpCode.whoAmI:
        return reply(this.zxid.last, { clientInfo: clientInfos(ctx.authIds) });
      case OpCode.setWatches:
        this.setWatches(ctx.watcher, { ...req, persistentWatches: [], persistentRecursiveWatches: [] });
        return reply(this.zxid.last);
      case OpCode.setWatches2:
        if (!this.options.persistentWatches) return error(-1n, ErrorCode.UNIMPLEMENTED, 'setWatches2 is not supported');
        this.setWatches(ctx.watcher, req);
        return reply(this.zxid.last);
      case OpCode.addWatch: {
        if (!this.options.persistentWatches) return error(-1n, ErrorCode.UNIMPLEMENTED, 'addWatch is not supported');
        if (req.mode !== AddWatchMode.PERSISTENT && req.mode !== AddWatchMode.PERSISTENT_RECURSIVE) {
          return error(this.zxid.last, ErrorCode.MARSHALLINGERROR);
        }
        this.watches.addPersistent(req.path, ctx.watcher, req.mode === AddWatchMode.PERSISTENT_RECURSIVE);
        return reply(this.zxid.last, { err: 0 });
      }
      case OpCode.removeWatches:
      case OpCode.checkWatches: {
        // ZooKeeper 3.8 knows WatcherType 1-3 only (Persistent and PersistentRecursive are 3.9's).
        if (req.watcherType < 1 || req.watcherType > 3) return error(this.zxid.last, ErrorCode.MARSHALLINGERROR);
        const matched = this.watches.matchWatches(req.path, ctx.watcher, req.watcherType, req.type === OpCode.removeWatches);
        return matched ? reply(this.zxid.last) : error(this.zxid.last, ErrorCode.NOWATCHER);
      }
      case OpCode.sasl:
        return error(0n, ErrorCode.AUTHFAILED, 'SASL is not supported');
      default:
        // ping, auth and closeSession are handled by the server before it gets here.
        return error(-1n, ErrorCode.UNIMPLEMENTED, `op ${req.type} is not served here`);
    }
  }

  /** A single write: takes a zxid, and answers the error with that zxid if it fails. */
  private write(body: (zxid: bigint, time: number) => Response): Outcome {
    const zxid = this.nextZxid();
    try {
      return reply(zxid, body(zxid, this.wallNow()));
    } catch (e) {
      if (e instanceof KeeperCode) return error(zxid, e.keeperCode);
      throw e;
    }
  }

  private readable(ctx: RequestContext, path: string): ZNode {
    const node = this.tree.get(path) ?? fail(ErrorCode.NONODE);
    checkAcl(node.acl, Perms.READ, ctx.authIds);
    return node;
  }

  private getData(ctx: RequestContext, path: string, watch: boolean): { data: Buffer | null; stat: ReturnType<ZNode['stat']> } {
    const node = this.readable(ctx, path);
    if (watch) this.watches.addDataWatch(path, ctx.watcher);
    return { data: node.data, stat: node.stat() };
  }

  /**
   * create / create2 / createContainer / createTTL. `inMulti` applies MultiOperationRecord's
   * rule: inside multi the flags, not the op code, decide container and TTL.
   */
  private create(
    ctx: RequestContext,
    opType: number,
    req: CreateRequest | CreateTTLRequest,
    zxid: bigint,
    time: number,
    inMulti: boolean,
    undo?: Undo[],
    notes?: Array<() => void>,
  ): { path: string; node: ZNode; kind: 'plain' | 'container' | 'ttl' } {
    const flags = req.flags;
    if (!Number.isInteger(flags) || flags < 0 || flags > 6) fail(ErrorCode.BADARGUMENTS);
    const ttlMode = flags === 5 || flags === 6;
    const hasTtl = opType === OpCode.createTTL;
    let kind: 'plain' | 'container' | 'ttl';
    if (inMulti) kind = flags === 4 ? 'container' : ttlMode ? 'ttl' : 'plain';
    else kind = opType === OpCode.createContainer ? 'container' : hasTtl ? 'ttl' : 'plain';
    const ttl = hasTtl && (kind === 'ttl' || !inMulti) ? (req as CreateTTLRequest).ttl : -1n;
    if (ttlMode && !this.options.ttlEnabled) fail(ErrorCode.UNIMPLEMENTED);
    if (ttlMode ? ttl <= 0n || ttl > MAX_TTL_MS : ttl >= 0n) fail(ErrorCode.BADARGUMENTS);
    if (kind === 'ttl' && !ttlMode) fail(ErrorCode.BADARGUMENTS);
    if (kind === 'container' && ttlMode) fail(ErrorCode.BADARGUMENTS);

    let path = req.path;
    const parentPath = parentOf(path) ?? fail(ErrorCode.BADARGUMENTS);
    const acl = fixupAcl(req.acl, ctx.authIds);
    const parent = this.tree.get(parentPath) ?? fail(ErrorCode.NONODE);
    checkAcl(parent.acl, Perms.CREATE, ctx.authIds);
    if (flags === 2 || flags === 3 || flags === 6) path += sequenceSuffix(parent.cversion);
    if (pathProblem(path) !== undefined) fail(ErrorCode.BADARGUMENTS);
    if (this.tree.get(path) !== undefined) fail(ErrorCode.NODEEXISTS);
    if (ownerKind(parent.ephemeralOwner, this.options.ttlEnabled) === 'session') fail(ErrorCode.NOCHILDRENFOREPHEMERALS);

    let owner = 0n;
    if (kind === 'container') owner = CONTAINER_EPHEMERAL_OWNER;
    else if (kind === 'ttl') owner = ttlEphemeralOwner(ttl);
    else if (flags === 1 || flags === 3) owner = ctx.session.id;
    const node = this.tree.create(path, req.data, acl, owner, zxid, time, undo, parent);
    const created = path;
    const parentAcl = parent.acl;
    this.note(notes, () => this.watches.created(created, zxid, acl, parentAcl));
    return { path, node, kind };
  }

  private delete(ctx: RequestContext, req: DeleteRequest, zxid: bigint, undo?: Undo[], notes?: Array<() => void>): void {
    const path = req.path;
    const parentPath = parentOf(path);
    if (parentPath === undefined || SPECIAL_PATHS.has(path)) fail(ErrorCode.BADARGUMENTS);
    const parent = this.tree.get(parentPath!) ?? fail(ErrorCode.NONODE);
    checkAcl(parent.acl, Perms.DELETE, ctx.authIds);
    const node = this.tree.get(path) ?? fail(ErrorCode.NONODE);
    nextVersion(node.version, req.version);
    if (node.childCount > 0) fail(ErrorCode.NOTEMPTY);
    this.tree.delete(path, zxid, undo);
    const { acl } = node;
    const parentAcl = parent.acl;
    this.note(notes, () => this.watches.deleted(path, zxid, acl, parentAcl));
  }

  private setData(ctx: RequestContext, req: SetDataRequest, zxid: bigint, time: number, undo?: Undo[], notes?: Array<() => void>): ZNode {
    if (pathProblem(req.path) !== undefined) fail(ErrorCode.BADARGUMENTS);
    const node = this.tree.get(req.path) ?? fail(ErrorCode.NONODE);
    checkAcl(node.acl, Perms.WRITE, ctx.authIds);
    const version = nextVersion(node.version, req.version);
    this.tree.setData(node, req.data, version, zxid, time, undo);
    const { acl } = node;
    this.note(notes, () => this.watches.changed(req.path, zxid, acl));
    return node;
  }

  private setAcl(ctx: RequestContext, req: SetACLRequest): ZNode {
    if (pathProblem(req.path) !== undefined) fail(ErrorCode.BADARGUMENTS);
    const acl = fixupAcl(req.acl, ctx.authIds);
    const node = this.tree.get(req.path) ?? fail(ErrorCode.NONODE);
    checkAcl(node.acl, Perms.ADMIN, ctx.authIds);
    const aversion = nextVersion(node.aversion, req.version);
    this.tree.setAcl(node, acl, aversion);
    return node;
  }

  private check(ctx: RequestContext, req: CheckVersionRequest): void {
    if (pathProblem(req.path) !== undefined) fail(ErrorCode.BADARGUMENTS);
    const node = this.tree.get(req.path) ?? fail(ErrorCode.NONODE);
    checkAcl(node.acl, Perms.READ, ctx.authIds);
    nextVersion(node.version, req.version);
  }

  private note(notes: Array<() => void> | undefined, fire: () => void): void {
    if (notes === undefined) fire();
    else notes.push(fire);
  }

  /** multi: all or nothing; on failure [0…, code, -2…] with header err 0 (docs/zookeeper-wire-protocol.md §4.5). */
  private multi(ctx: RequestContext, ops: MultiOp[]): Outcome {
    const zxid = this.nextZxid();
    // Reads in a multi, or reads mixed with writes, cannot be decoded by ZooKeeper; nor can a TTL
    // mode in a create record that has no TTL (ZooKeeper fails the whole request).
    if (!ops.every((op) => WRITE_OPS.has(op.type) && !ttlFlagsWithoutTtl(op))) return error(zxid, ErrorCode.MARSHALLINGERROR);
    const time = this.wallNow();
    const undo: Undo[] = [];
    const notes: Array<() => void> = [];
    const results: MultiResult[] = [];
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      try {
        results.push(this.multiOp(ctx, op, zxid, time, undo, notes));
      } catch (e) {
        if (!(e instanceof KeeperCode)) throw e;
        for (let u = undo.length - 1; u >= 0; u--) undo[u]!();
        const failed: MultiResult[] = ops.map((_, j) => ({
          type: OpCode.error,
          err: j < i ? 0 : j === i ? e.keeperCode : ErrorCode.RUNTIMEINCONSISTENCY,
        }));
        return reply(zxid, { results: failed });
      }
    }
    for (const fire of notes) fire();
    return reply(zxid, { results });
  }

  private multiOp(ctx: RequestContext, op: MultiOp, zxid: bigint, time: number, undo: Undo[], notes: Array<() => void>): MultiResult {
    switch (op.type) {
      case OpCode.create:
      case OpCode.create2:
      case OpCode.createContainer:
      case OpCode.createTTL: {
        const r = this.create(ctx, op.type, op, zxid, time, true, undo, notes);
        return r.kind === 'plain' ? { type: OpCode.create, path: r.path } : { type: OpCode.create2, path: r.path, stat: r.node.stat() };
      }
      case OpCode.delete:
        this.delete(ctx, op, zxid, undo, notes);
        return { type: OpCode.delete };
      case OpCode.setData:
        return { type: OpCode.setData, stat: this.setData(ctx, op, zxid, time, undo, notes).stat() };
      case OpCode.check:
        this.check(ctx, op);
        return { type: OpCode.check };
      default:
        return fail(ErrorCode.MARSHALLINGERROR);
    }
  }

  /** multiRead: each op answers on its own; watches are never set (ZooKeeper drops the flag). */
  private multiRead(ctx: RequestContext, ops: MultiOp[]): Outcome {
    if (!ops.every((op) => READ_OPS.has(op.type))) return error(this.zxid.last, ErrorCode.MARSHALLINGERROR);
    const results: MultiResult[] = ops.map((op) => {
      try {
        if (op.type === OpCode.getData) {
          const { data, stat } = this.getData(ctx, op.path, false);
          return { type: OpCode.getData, data, stat };
        }
        const node = this.readable(ctx, (op as { path: string }).path);
        return { type: OpCode.getChildren, children: node.childNames() };
      } catch (e) {
        if (e instanceof KeeperCode) return { type: OpCode.error, err: e.keeperCode };
        throw e;
      }
    });
    return reply(this.zxid.last, { results });
  }

  /**
   * SetWatches / SetWatches2 (DataTree.setWatches): catch-up events for what changed after
   * relativeZxid, registration for the rest. Persistent watches are re-registered without catch-up.
   */
  private setWatches(w: Watcher, req: Omit<SetWatches2Request, 'type'>): void {
    const rel = req.relativeZxid;
    const event = (type: number, path: string): void => {
      const e: WatcherEvent = { type, state: KeeperState.SyncConnected, path };
      w.notify(e, -1n);
    };
    for (const path of req.dataWatches) {
      const node = this.tree.get(path);
      if (node === undefined) event(EventType.NodeDeleted, path);
      else if (node.mzxid > rel) event(EventType.NodeDataChanged, path);
      else this.watches.addDataWatch(path, w);
    }
    for (const path of req.existWatches) {
      if (this.tree.get(path) !== undefined) event(EventType.NodeCreated, path);
      else this.watches.addDataWatch(path, w);
    }
    for (const path of req.childWatches) {
      const node = this.tree.get(path);
      if (node === undefined) event(EventType.NodeDeleted, path);
      else if (node.pzxid > rel) event(EventType.NodeChildrenChanged, path);
      else this.watches.addChildWatch(path, w);
    }
    for (const path of req.persistentWatches) this.watches.addPersistent(path, w, false);
    for (const path of req.persistentRecursiveWatches) this.watches.addPersistent(path, w, true);
  }

  /** Deletes a session's ephemerals at one zxid (closeSession / expiry), firing their watches. */
  killSession(sessionId: bigint): bigint {
    const zxid = this.nextZxid();
    const paths = [...(this.tree.ephemerals.get(sessionId) ?? [])];
    for (const path of paths) {
      const node = this.tree.get(path);
      if (node === undefined || node.ephemeralOwner !== sessionId) continue;
      this.tree.delete(path, zxid);
      this.watches.deleted(path, zxid, node.acl, this.tree.parentAcl(path));
    }
    return zxid;
  }

  /** Deletes an empty container or expired TTL node found by the reaper (deleteContainer). */
  reap(path: string): void {
    const node = this.tree.get(path);
    if (node === undefined || node.childCount > 0) return;
    const zxid = this.nextZxid();
    this.tree.delete(path, zxid);
    this.watches.deleted(path, zxid, node.acl, this.tree.parentAcl(path));
  }

  /** Paths the reaper should delete now: containers that had children and lost them, expired TTL nodes. */
  reapCandidates(now: number): string[] {
    const out: string[] = [];
    for (const path of this.tree.containers) {
      const node = this.tree.get(path);
      if (node !== undefined && node.childCount === 0 && node.cversion > 0) out.push(path);
    }
    for (const path of this.tree.ttls) {
      const node = this.tree.get(path);
      if (node === undefined || node.childCount > 0) continue;
      const ttl = BigInt.asUintN(64, node.ephemeralOwner) & MAX_TTL_MS;
      if (ttl !== 0n && now - node.mtime > Number(ttl)) out.push(path);
    }
    return out;
  }
}
