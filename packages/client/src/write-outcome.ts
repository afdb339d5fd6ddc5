/**
 * A write's outcome is never guessed (the README's "When a reply is lost" table).
 *
 * A non-idempotent write sent on a connection that then died may have been applied with its reply
 * lost. Its retry can then fail with an error the first attempt itself caused: a create gets
 * NodeExists, a delete NoNode, a versioned setData or delete BadVersion, a transaction any of these.
 * Such an error is resolved by proof, from the node's Stat and `mark`, the highest zxid this client
 * had seen when it sent the write (the write, if applied, was applied at a later zxid):
 * - not applied: the node the error is about has not changed since `mark` (a create's node, or a
 *   versioned delete's, whose czxid is <= mark; a setData's whose mzxid is <= mark; a missing node
 *   whose parent's pzxid is <= mark, so no child came or went since). The retry's error stands.
 * - applied: an ephemeral node at the path, owned by this session, created after `mark`, with no
 *   other create of the same path in flight on this client. The write succeeded.
 * - otherwise: OutcomeUnknownError, with the retry's error as `cause`.
 * A sequential create is never retried blindly (its retry would succeed, with a second node): the
 * proof comes first (the parent unchanged since `mark`: not applied, send again; our ephemeral
 * found: applied), and without one it is OutcomeUnknownError. Idempotent requests (reads, sync,
 * unversioned setData, watches) never come here; an unversioned setACL is retried freely but for a
 * NoAuth (the ACL it set took our ADMIN away), proven by the ACL in place; `retryAmbiguousWrites: 'raw'` skips it
 * all (Curator's behaviour: the retry's answer as is).
 */
import {
  ErrorCode,
  InvalidArgumentError,
  KeeperError,
  OpCode,
  isEphemeralMode,
  isRetryableCode,
  isSequentialMode,
  nodeName,
  parentPath,
  joinPath,
  type ACL,
  type MultiOp,
  type GetDataRequest,
  type GetChildrenRequest,
  type Reply,
  type Request,
  type ResponseFor,
  type Stat,
} from '@tenure/protocol';
import type { ClientCore, ReplyMapper } from './client-core.js';
import { deleteTree, type ExecAny } from './delete-node.js';
import { OutcomeUnknownError } from './outcome-unknown-error.js';
import { isRetryableError } from './retry-policies.js';

/** `prove` (the default): resolve a lost reply by proof, else OutcomeUnknownError. `raw`: Curator's behaviour. */
export type RetryAmbiguousWrites = 'prove' | 'raw';

export function checkRetryAmbiguousWrites(value: unknown): RetryAmbiguousWrites {
  if (value === undefined) return 'prove';
  if (value === 'prove' || value === 'raw') return value;
  throw new InvalidArgumentError(`retryAmbiguousWrites must be 'prove' or 'raw', got ${JSON.stringify(value)}`);
}

type WriteOp = Exclude<MultiOp, GetDataRequest | GetChildrenRequest>;

/** How a write is resolved after a lost reply; null for a request that is retried freely. */
interface WriteRule {
  /** The ops whose effects prove (or disprove) the write: one, or a transaction's. */
  ops: readonly WriteOp[];
  /** A retry would succeed a second time (a sequential create): never retried without proof. */
  noBlindRetry: boolean;
  /** The retry's error codes that the first attempt could have caused. */
  misleading: ReadonlySet<number>;
  /** A setACL's: the ACL it sets, and whether it was unversioned (then the ACL in place is its proof). */
  setsAcl?: { path: string; acl: readonly ACL[]; unversioned: boolean };
}

const CREATES = new Set<number>([OpCode.create, OpCode.create2, OpCode.createContainer, OpCode.createTTL]);
const CREATE_MISLEADS = new Set<number>([ErrorCode.NODEEXISTS]);
const DELETE_MISLEADS = new Set<number>([ErrorCode.NONODE]);
const VERSIONED_DELETE_MISLEADS = new Set<number>([ErrorCode.NONODE, ErrorCode.BADVERSION]);
const VERSIONED_SET_MISLEADS = new Set<number>([ErrorCode.BADVERSION]);
const ACL_MISLEADS = new Set<number>([ErrorCode.NOAUTH]);
const VERSIONED_ACL_MISLEADS = new Set<number>([ErrorCode.NOAUTH, ErrorCode.BADVERSION]);
/** A transaction's failed op: anything the first attempt could have made fail. */
const MULTI_MISLEADS = new Set<number>([ErrorCode.NODEEXISTS, ErrorCode.NONODE, ErrorCode.BADVERSION, ErrorCode.NOTEMPTY]);

function isCreate(op: { type: number }): op is Extract<WriteOp, { flags: number }> {
  return CREATES.has(op.type);
}

export function writeRule(req: Request): WriteRule | null {
  if (isCreate(req)) return { ops: [req], noBlindRetry: isSequentialMode(req.flags), misleading: CREATE_MISLEADS };
  switch (req.type) {
    case OpCode.delete:
      return { ops: [req], noBlindRetry: false, misleading: req.version === -1 ? DELETE_MISLEADS : VERSIONED_DELETE_MISLEADS };
    case OpCode.setData:
      return req.version === -1 ? null : { ops: [req], noBlindRetry: false, misleading: VERSIONED_SET_MISLEADS };
    case OpCode.setACL:
      // An ACL without ADMIN for us makes the retry NoAuth. Versioned, BadVersion is never provable
      // either way (a Stat keeps no zxid of its ACL's change).
      return {
        ops: [],
        noBlindRetry: false,
        misleading: req.version === -1 ? ACL_MISLEADS : VERSIONED_ACL_MISLEADS,
        setsAcl: { path: req.path, acl: req.acl, unversioned: req.version === -1 },
      };
    case OpCode.multi: {
      const ops = req.ops.filter((op): op is WriteOp => op.type !== OpCode.getData && op.type !== OpCode.getChildren);
      return { ops, noBlindRetry: ops.some((op) => isCreate(op) && isSequentialMode(op.flags)), misleading: MULTI_MISLEADS };
    }
    default:
      return null;
  }
}

/** The codes a reply failed with: its header's, and a transaction's failed ops'. */
function failureCodes(reply: Reply<unknown>): number[] {
  const codes = reply.err !== 0 ? [reply.err] : [];
  const results = (reply.response as { results?: { type: number; err?: number }[] } | undefined)?.results;
  for (const r of results ?? [])
    if (r.type === OpCode.error && r.err !== undefined && r.err !== 0 && r.err !== ErrorCode.RUNTIMEINCONSISTENCY) codes.push(r.err);
  return codes;
}

// ---- creates of the same path in flight on one client: a node "of ours" could be either's ----

interface InFlight {
  contended: boolean;
}
const inFlight = new WeakMap<ClientCore, Map<string, Set<InFlight>>>();

function enter(core: ClientCore, path: string): InFlight {
  let byPath = inFlight.get(core);
  if (!byPath) inFlight.set(core, (byPath = new Map<string, Set<InFlight>>()));
  const set = byPath.get(path);
  const entry: InFlight = { contended: set !== undefined };
  if (set === undefined) byPath.set(path, new Set([entry]));
  else {
    for (const other of set) other.contended = true;
    set.add(entry);
  }
  return entry;
}

function leave(core: ClientCore, path: string, entry: InFlight): void {
  const byPath = inFlight.get(core);
  const set = byPath?.get(path);
  if (!set?.delete(entry) || set.size > 0) return;
  byPath!.delete(path);
}

// ---- the proofs ----

type Verdict<T> = { landed: T } | 'not-landed' | 'unknown';

interface Probe {
  core: ClientCore;
  epoch: number;
  signal: AbortSignal | undefined;
  /** The highest zxid seen before the first attempt that may have landed was sent. */
  mark: bigint;
}

/** A read for a proof, retried freely (reads are idempotent). */
function statOf(p: Probe, path: string): Promise<Stat | null> {
  return p.core.retry(
    () =>
      p.core.once(
        { type: OpCode.exists, path, watch: false },
        p.signal,
        path,
        (r) => {
          if (r.err === 0) return r.response!.stat;
          if (r.err === ErrorCode.NONODE) return null;
          throw KeeperError.from(r.err, path);
        },
        p.epoch,
      ),
    p.signal,
    path,
  );
}

function childrenOf(p: Probe, path: string): Promise<string[]> {
  return p.core.retry(
    () =>
      p.core.once(
        { type: OpCode.getChildren, path, watch: false },
        p.signal,
        path,
        (r) => {
          if (r.err === 0) return r.response!.children;
          if (r.err === ErrorCode.NONODE) return [];
          throw KeeperError.from(r.err, path);
        },
        p.epoch,
      ),
    p.signal,
    path,
  );
}

/** True when `op` cannot have been applied after `mark`: what it would have changed is unchanged since. */
async function provenNotApplied(p: Probe, op: WriteOp): Promise<boolean> {
  const sequential = isCreate(op) && isSequentialMode(op.flags);
  const stat = sequential ? null : await statOf(p, op.path);
  if (stat !== null) {
    if (isCreate(op) || op.type === OpCode.delete) return stat.czxid <= p.mark;
    if (op.type === OpCode.setData) return stat.mzxid <= p.mark;
    // A check: the node's version has not moved since, and it does not match.
    return stat.mzxid <= p.mark && op.version !== -1 && stat.version !== op.version;
  }
  // The node is missing (or its name not known yet): under its nearest existing ancestor no child
  // came or went since, so the missing part was missing then too.
  for (let path = op.path; path !== '/';) {
    path = parentPath(path);
    const ancestor = await statOf(p, path);
    if (ancestor !== null) return ancestor.pzxid <= p.mark;
  }
  return false;
}

/** The node an ephemeral create made in this session after `mark`, when exactly one can be found. */
async function ourEphemeral(p: Probe, op: WriteOp, contended: boolean): Promise<{ path: string; stat: Stat } | null> {
  if (!isCreate(op) || !isEphemeralMode(op.flags) || contended) return null;
  const mine = (stat: Stat | null): stat is Stat =>
    stat !== null && stat.ephemeralOwner === p.core.session.sessionId && stat.czxid > p.mark;
  if (!isSequentialMode(op.flags)) {
    const stat = await statOf(p, op.path);
    return mine(stat) ? { path: op.path, stat } : null;
  }
  const parent = parentPath(op.path);
  const prefix = nodeName(op.path);
  const found: { path: string; stat: Stat }[] = [];
  for (const name of await childrenOf(p, parent)) {
    if (!name.startsWith(prefix) || !/^(\d{10}|-\d{9})$/.test(name.slice(prefix.length))) continue;
    const path = joinPath(parent, name);
    const stat = await statOf(p, path);
    if (mine(stat)) found.push({ path, stat });
  }
  return found.length === 1 ? found[0]! : null;
}

/** An unversioned setACL's proof: the ACL in place is the one it set (by whoever: the effect is the same). */
async function aclInPlace(p: Probe, sets: NonNullable<WriteRule['setsAcl']>): Promise<{ path: string; stat: Stat } | null> {
  if (!sets.unversioned) return null;
  const { acl, stat } = await p.core.retry(
    () =>
      p.core.once(
        { type: OpCode.getACL, path: sets.path },
        p.signal,
        sets.path,
        (r) => {
          if (r.err !== 0) throw KeeperError.from(r.err, sets.path);
          return r.response!;
        },
        p.epoch,
      ),
    p.signal,
    sets.path,
  );
  return sameAcl(acl, sets.acl) ? { path: sets.path, stat } : null;
}

function sameAcl(a: readonly ACL[], b: readonly ACL[]): boolean {
  const key = (l: readonly ACL[]): string =>
    l
      .map((e) => `${e.perms}:${e.id.scheme}:${e.id.id}`)
      .sort()
      .join(',');
  return key(a) === key(b);
}

async function resolve(p: Probe, rule: WriteRule, contended: boolean): Promise<Verdict<{ path: string; stat: Stat }>> {
  try {
    if (rule.setsAcl) {
      const landed = await aclInPlace(p, rule.setsAcl);
      return landed ? { landed } : 'unknown';
    }
    if (rule.ops.length === 1) {
      const landed = await ourEphemeral(p, rule.ops[0]!, contended);
      if (landed) return { landed };
    }
    for (const op of rule.ops) if (await provenNotApplied(p, op)) return 'not-landed';
    return 'unknown';
  } catch {
    return 'unknown'; // the proof could not be read: nothing is proven
  }
}

/** A reply that says what a proven create said: its path and Stat (create2, createContainer, createTTL's shape). */
function createdReply<R extends Request>(reply: { zxid: bigint }, created: { path: string; stat: Stat }): Reply<ResponseFor<R>> {
  return { zxid: reply.zxid, err: 0, response: created as unknown as ResponseFor<R> };
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err;
  }
}

/**
 * Runs a write with the client's retries, resolving a lost reply by proof (see above). `operation`
 * and `clientPath` name it in an OutcomeUnknownError; `map` turns a reply into the result.
 */
export function runWrite<R extends Request, T>(
  core: ClientCore,
  req: R,
  signal: AbortSignal | undefined,
  clientPath: string,
  operation: string,
  map: ReplyMapper<R, T>,
  mode: RetryAmbiguousWrites | undefined,
): Promise<T> {
  if ((mode ?? core.retryAmbiguousWrites) === 'raw' || !needsProof(req)) return core.run(req, signal, clientPath, map);
  try {
    core.check(operation);
  } catch (err) {
    return Promise.reject(err as Error);
  }
  // Only an ephemeral create's proof asks whether another create of its path was in flight.
  const flight = isCreate(req) && isEphemeralMode(req.flags) ? { path: req.path, entry: enter(core, req.path) } : undefined;
  const session = core.session;
  const epoch = session.epoch;
  const conn = session.connection;
  if (conn === null || signal !== undefined) {
    return new AmbiguousWrite(core, epoch, req, signal, clientPath, operation, map, flight).slow(undefined);
  }
  // The fast path, as ClientCore.run's: one hop, and the retry's state only once it is needed.
  const mark = session.lastZxid;
  const sentAt = session.noteSend();
  return conn.send(req).then(
    (reply) => {
      session.answered(sentAt, reply.zxid);
      if (reply.err !== 0 && isRetryableCode(reply.err)) {
        const error = KeeperError.from(reply.err, clientPath);
        return new AmbiguousWrite(core, epoch, req, signal, clientPath, operation, map, flight).slow({ error, startedAt: sentAt });
      }
      if (flight !== undefined) leave(core, flight.path, flight.entry);
      return map(reply, clientPath);
    },
    (failure: unknown) => {
      const error = withPath(failure, clientPath);
      if (!isRetryableError(error)) {
        if (flight !== undefined) leave(core, flight.path, flight.entry);
        throw error;
      }
      const write = new AmbiguousWrite(core, epoch, req, signal, clientPath, operation, map, flight);
      write.lost = { mark, error };
      return write.slow({ error, startedAt: sentAt });
    },
  );
}

/** Whether a lost reply of `req` is resolved by proof (writeRule gives how). */
function needsProof(req: Request): boolean {
  switch (req.type) {
    case OpCode.setData:
      return req.version !== -1;
    case OpCode.delete:
    case OpCode.setACL:
    case OpCode.multi:
      return true;
    default:
      return isCreate(req);
  }
}

/** A transport's path-less error with the operation's path (as ClientCore does for its requests). */
function withPath(error: unknown, path: string): unknown {
  if (!(error instanceof KeeperError) || error.path !== undefined) return error;
  const named = KeeperError.from(error.keeperCode, path);
  (named as { cause?: unknown }).cause = error;
  return named;
}

/** One write's attempts after its fast path failed (or when it had none). */
class AmbiguousWrite<R extends Request, T> {
  /** Set once an attempt was sent and its connection died: it may have landed. */
  lost: { mark: bigint; error: unknown } | null = null;

  constructor(
    private readonly core: ClientCore,
    /** The session the write began in: a retry in another fails with SessionExpired. */
    private readonly epoch: number,
    private readonly req: R,
    private readonly signal: AbortSignal | undefined,
    private readonly clientPath: string,
    private readonly operation: string,
    private readonly map: ReplyMapper<R, T>,
    /** A create's entry among the creates of its path in flight on this client. */
    private readonly flight: { path: string; entry: InFlight } | undefined,
  ) {
    this.rule = writeRule(req)!;
  }

  private readonly rule: WriteRule;

  private leave(): void {
    if (this.flight !== undefined) leave(this.core, this.flight.path, this.flight.entry);
  }

  slow(first: { error: unknown; startedAt: number } | undefined): Promise<T> {
    const p = this.core.retry(() => this.attempt(), this.signal, this.clientPath, first);
    return this.flight === undefined ? p : p.finally(() => this.leave());
  }

  private probe(): Probe {
    return { core: this.core, epoch: this.epoch, signal: this.signal, mark: this.lost!.mark };
  }

  private get contended(): boolean {
    return this.flight?.entry.contended ?? false;
  }

  private async attempt(): Promise<T> {
    const { core, rule, map, clientPath } = this;
    if (this.lost !== null && rule.noBlindRetry) {
      const verdict = await resolve(this.probe(), rule, this.contended);
      if (verdict === 'unknown') throw new OutcomeUnknownError(this.operation, clientPath, this.lost.error);
      if (verdict !== 'not-landed') return map(createdReply<R>({ zxid: core.session.lastZxid }, verdict.landed), clientPath);
      this.lost = null; // proven not applied: sending again is safe
    }
    const conn = await core.session.waitForConnection(this.epoch, core.connectionTimeoutMs, this.signal, clientPath);
    const mark = core.session.lastZxid;
    let reply: Reply<ResponseFor<R>>;
    try {
      reply = await core.send(conn, this.req, this.signal, clientPath);
    } catch (err) {
      if (isRetryableError(err)) this.lost ??= { mark, error: err };
      throw err;
    }
    if (reply.err !== 0 && isRetryableCode(reply.err)) throw KeeperError.from(reply.err, clientPath);
    if (this.lost === null || !failureCodes(reply).some((c) => rule.misleading.has(c))) return map(reply, clientPath);
    const error = thrown(() => map(reply, clientPath));
    const verdict = await resolve(this.probe(), rule, this.contended);
    if (verdict === 'not-landed') return map(reply, clientPath); // the retry's error is the truth
    if (verdict !== 'unknown') return map(createdReply<R>(reply, verdict.landed), clientPath);
    throw new OutcomeUnknownError(this.operation, clientPath, error);
  }
}

/**
 * `delete` with `deletingChildren`: the subtree bottom-up, then the node, retried as a whole. The
 * node's own delete is the write whose reply may be lost: a NoNode (or BadVersion) for the node
 * after that is resolved as a delete's (the retry's getChildren meets the NoNode first).
 */
export function runDeleteTree(
  core: ClientCore,
  full: string,
  version: number,
  clientPath: string,
  signal: AbortSignal | undefined,
  mode: RetryAmbiguousWrites | undefined,
): Promise<void> {
  const epoch = core.session.epoch;
  const raw = (mode ?? core.retryAmbiguousWrites) === 'raw';
  let lost: { mark: bigint; error: unknown } | null = null;
  const exec: ExecAny = async (req, map) => {
    if (raw || req.type !== OpCode.delete || req.path !== full) return core.once(req, signal, clientPath, map, epoch);
    const mark = core.session.lastZxid;
    try {
      return await core.once(req, signal, clientPath, map, epoch);
    } catch (err) {
      if (isRetryableError(err)) lost ??= { mark, error: err };
      throw err;
    }
  };
  const rule: WriteRule = {
    ops: [{ type: OpCode.delete, path: full, version }],
    noBlindRetry: false,
    misleading: version === -1 ? DELETE_MISLEADS : VERSIONED_DELETE_MISLEADS,
  };
  return core.retry(
    async () => {
      try {
        await deleteTree(exec, full, version, clientPath);
      } catch (err) {
        const misled = err instanceof KeeperError && err.path === clientPath && rule.misleading.has(err.keeperCode);
        if (lost === null || !misled) throw err;
        const verdict = await resolve({ core, epoch, signal, mark: lost.mark }, rule, false);
        if (verdict === 'unknown') throw new OutcomeUnknownError('delete', clientPath, err);
        throw err; // proven: the node was not there (or not at that version) before the delete
      }
    },
    signal,
    clientPath,
  );
}
