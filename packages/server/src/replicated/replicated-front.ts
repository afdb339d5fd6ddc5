/**
 * The server's side of a replicated store: requests on a mirror of the store's namespace.
 *
 * - Reads, watches and auth are served by the usual dispatch, from the mirror: no store round trip.
 * - A write is evaluated by the request processor on the mirror (write-trial.ts), committed as one
 *   write set with compares on what it read, and answered once the mirror has applied the
 *   revision, which fires its watches. A conflict (another server wrote what it read) waits for
 *   the mirror to catch up and evaluates again. A failing decision is committed as compares only,
 *   so a stale mirror never invents an error.
 * - Each connection's requests are answered in order: while a write is in flight, later requests wait.
 * - Sessions live in the store: created there, renewed by requests and pings, ended by
 *   closeSession (one commit with its ephemerals) or by the store (expiry), which the mirror hears.
 */
import { ErrorCode, OpCode, type Reply, type Request } from '@tenure/protocol';
import type { Logger } from '../options.js';
import type { DataTree } from '../semantics/data-tree.js';
import type { Dispatch } from '../semantics/dispatch.js';
import { RequestProcessor, type Outcome, type ProcessorOptions, type ZxidCounter } from '../semantics/request-processor.js';
import type { ServerConnection } from '../semantics/server-connection.js';
import type { Session, SessionTable } from '../semantics/session-table.js';
import type { WatchRegistry } from '../semantics/watch-registry.js';
import { Mirror } from './mirror.js';
import { StoreLimitError, type CommitOutcome, type ReplicatedStore, type RevisionChange, type WriteSet } from './replicated-store.js';
import { RecordingWatches, settleReply, trial, type WatchNote } from './write-trial.js';

type ServerSession = Session<ServerConnection>;

/** Requests the store must see: writes, sync and closeSession. */
const STORE_OPS = new Set<number>([
  OpCode.create,
  OpCode.create2,
  OpCode.createContainer,
  OpCode.createTTL,
  OpCode.delete,
  OpCode.setData,
  OpCode.setACL,
  OpCode.check,
  OpCode.multi,
  OpCode.reconfig,
  OpCode.sync,
  OpCode.closeSession,
]);

export interface ReplicatedParts {
  readonly store: ReplicatedStore;
  readonly tree: DataTree;
  readonly watches: WatchRegistry;
  readonly zxid: ZxidCounter;
  readonly sessions: SessionTable<ServerConnection>;
  readonly dispatch: Dispatch;
  readonly options: ProcessorOptions & { logger?: Logger | undefined };
  wallNow(): number;
  /** The store became unreachable: every connection closes (as on a server that lost its quorum). */
  unreachable(): void;
}

type Queued = { request: unknown; token: unknown; oversize: boolean };

export class ReplicatedFront {
  readonly mirror: Mirror;
  private readonly recording = new RecordingWatches();
  private readonly trialZxid: ZxidCounter = { last: 0n };
  private readonly processor: RequestProcessor;
  /** Watch triggers of this server's commits in flight, by write id. */
  private readonly notes = new Map<number, WatchNote[]>();
  /** Connections with a request at the store; what arrived since, in order. */
  private readonly queues = new Map<ServerConnection, Queued[]>();
  /** Sessions this server is closing (their end is a reply, not an expiry). */
  private readonly closingHere = new Set<bigint>();
  private reaping = false;
  private closed = false;

  constructor(private readonly p: ReplicatedParts) {
    this.mirror = new Mirror(p.tree, p.watches, p.zxid);
    this.processor = new RequestProcessor(p.tree, this.recording, this.trialZxid, p.options, () => p.wallNow());
  }

  /** Whether the store reaches its backend (handshakes are refused while it does not). */
  get reachable(): boolean {
    return this.p.store.reachable;
  }

  async open(): Promise<void> {
    const snap = await this.p.store.open({
      apply: (change) => this.apply(change),
      reachable: (up) => {
        if (!up) this.p.unreachable();
      },
    });
    this.mirror.load(snap);
    for (const [id, timeoutMs] of snap.sessions) this.p.sessions.restore(id, timeoutMs);
  }

  // ---- the store's revisions ----

  private apply(change: RevisionChange): void {
    const { sessions, tree } = this.p;
    for (const [id, timeoutMs] of change.startedSessions) if (sessions.get(id) === undefined) sessions.restore(id, timeoutMs);
    // Parents of ephemerals the store deleted without touching their counters (a lease expiry).
    const ended = new Set(change.endedSessions);
    const repair = new Set<string>();
    if (ended.size > 0 && change.commit === undefined) {
      for (const [path, rec] of change.nodes) {
        const node = rec === null ? tree.nodes.get(path) : undefined;
        if (node === undefined || !ended.has(node.sessionOwner)) continue;
        const parent = path.lastIndexOf('/') <= 0 ? '/' : path.slice(0, path.lastIndexOf('/'));
        if (!change.children.has(parent) && !change.nodes.has(parent)) repair.add(parent);
      }
    }
    const notes = change.commit === undefined ? undefined : this.notes.get(change.commit);
    this.mirror.apply(change, notes);
    for (const id of change.movedSessions ?? []) sessions.get(id)?.connection?.abort('session moved to another server');
    for (const id of ended) {
      const s = sessions.get(id);
      if (s === undefined) continue;
      sessions.delete(id);
      if (this.closingHere.has(id)) continue;
      s.closing = true;
      s.connection?.abort('session expired');
    }
    if (repair.size > 0) this.repairParents(repair).catch(() => undefined);
  }

  /**
   * The store ended a session by itself (lease expiry) and could not move the parents' pzxid in
   * that revision: one follow-up commit does, compared on the parents, so of several servers that
   * try, one lands and the rest conflict and stop.
   */
  private async repairParents(parents: Set<string>): Promise<void> {
    const children = new Map<string, number>();
    for (const path of parents) {
      const node = this.p.tree.nodes.get(path);
      if (node !== undefined) children.set(path, node.cversion);
    }
    if (children.size === 0) return;
    const write: WriteSet = { id: 0, placeholder: this.p.zxid.last + 1n, reads: new Set(children.keys()), nodes: new Map(), children };
    try {
      await this.p.store.commit(write);
    } catch (err) {
      this.p.options.logger?.warn({ err, parents: [...parents] }, 'could not repair the parents of an expired session');
    }
  }

  // ---- requests ----

  serve(conn: ServerConnection, request: unknown, token: unknown, oversize: boolean): void {
    const queue = this.queues.get(conn);
    if (queue !== undefined) queue.push({ request, token, oversize });
    else this.drain(conn, [{ request, token, oversize }]);
  }

  /** Serves requests in order until one must wait for the store; the rest queue behind it. */
  private drain(conn: ServerConnection, queue: Queued[]): void {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      const { request, token, oversize } = item;
      const session = conn.session;
      if (!session.closing && !oversize) this.p.store.renewSession(session.id, session.timeoutMs);
      const type = (request as { type?: unknown } | null)?.type;
      if (!oversize && typeof type === 'number' && STORE_OPS.has(type) && !session.closing && !conn.closing) {
        this.queues.set(conn, queue);
        this.atStore(conn, request as Request, token).then(
          () => {
            this.queues.delete(conn);
            this.drain(conn, queue);
          },
          (err: unknown) => {
            this.queues.delete(conn);
            this.p.options.logger?.warn({ err }, 'a write failed at the store');
            // The outcome is unknown: the client hears a connection loss, as from a ZooKeeper that lost its leader.
            conn.abort(`the store failed: ${err instanceof Error ? err.message : String(err)}`);
          },
        );
        return;
      }
      this.p.dispatch.serve(conn, request, token, oversize);
    }
  }

  private async atStore(conn: ServerConnection, req: Request, token: unknown): Promise<void> {
    if (req.type === OpCode.sync) {
      await this.p.store.barrier();
      conn.pushReply(token, { zxid: this.p.zxid.last, err: 0, response: { path: req.path as string } } as Reply);
      return;
    }
    if (req.type === OpCode.closeSession) {
      await this.closeSession(conn, token);
      return;
    }
    for (;;) {
      if (this.closed || conn.closing) return;
      this.trialZxid.last = this.p.zxid.last;
      const placeholder = this.p.zxid.last + 1n;
      const t = trial(this.p.tree, this.recording, placeholder, () => this.processor.process(conn, req));
      const outcome: Outcome = t.result;
      // A failing write answered with "its" zxid takes one, as ZooKeeper's error txn does.
      const takesZxid = !t.changed && outcome.reply.zxid === placeholder;
      // A request refused without a zxid and before it reads anything (unknown op, bad record) needs no store.
      if (!t.changed && !takesZxid && t.write.reads.size === 0) {
        conn.pushReply(token, settleReply(outcome.reply, placeholder, this.p.zxid.last));
        if (outcome.close !== undefined) conn.closeAfterFlush(outcome.close);
        return;
      }
      let result: CommitOutcome;
      try {
        result = await this.commit(takesZxid ? { ...t.write, takesZxid } : t.write, t.notes);
      } catch (err) {
        if (!(err instanceof StoreLimitError)) throw err;
        this.p.options.logger?.warn({ limit: err.limit, op: req.type }, err.message);
        // On the wire: BADARGUMENTS (a ZooKeeper reply has no message); in-process: the StoreLimitError itself.
        const refused = { zxid: this.p.zxid.last, err: ErrorCode.BADARGUMENTS, response: undefined, refusal: err };
        conn.pushReply(token, refused);
        return;
      }
      if (result.kind === 'conflict') continue;
      const revision = result.kind === 'committed' ? result.revision : this.p.zxid.last;
      conn.pushReply(token, settleReply(outcome.reply, placeholder, revision));
      if (outcome.close !== undefined) conn.closeAfterFlush(outcome.close);
      return;
    }
  }

  private async commit(write: WriteSet, notes: WatchNote[]): Promise<CommitOutcome> {
    this.notes.set(write.id, notes);
    try {
      const order = notes.map((n) => [n.kind === 'created' ? 'c' : n.kind === 'deleted' ? 'd' : 'm', n.path] as const);
      return await this.p.store.commit(order.length === 0 ? write : { ...write, order });
    } finally {
      this.notes.delete(write.id);
    }
  }

  /** closeSession: its ephemerals and its record go in one commit (or by the store, when too many for one). */
  private async closeSession(conn: ServerConnection, token: unknown): Promise<void> {
    const session = conn.session;
    const id = session.id;
    this.closingHere.add(id);
    try {
      let revision = this.p.zxid.last;
      for (;;) {
        this.trialZxid.last = this.p.zxid.last;
        const placeholder = this.p.zxid.last + 1n;
        const t = trial(this.p.tree, this.recording, placeholder, () => this.processor.killSession(id), id);
        let result: CommitOutcome;
        try {
          result = await this.commit(t.write, t.notes);
        } catch (err) {
          if (!(err instanceof StoreLimitError)) throw err;
          await this.p.store.revokeSession(id);
          revision = this.p.zxid.last;
          break;
        }
        if (result.kind === 'conflict') continue;
        revision = result.kind === 'committed' ? result.revision : this.p.zxid.last;
        break;
      }
      session.closing = true;
      this.p.sessions.delete(id);
      conn.pushReply(token, { zxid: revision, err: 0, response: undefined });
      conn.closeAfterFlush('session closed');
    } finally {
      this.closingHere.delete(id);
    }
  }

  /** A new session, in the store; its record is in the table once the mirror has seen it. */
  async createSession(timeoutMs: number): Promise<ServerSession> {
    const { id, timeoutMs: granted } = await this.p.store.createSession(timeoutMs);
    return this.p.sessions.get(id) ?? this.p.sessions.restore(id, granted);
  }

  /** A re-attach: the session is served here from now on (another server's connection of it closes). */
  async claimSession(session: ServerSession): Promise<void> {
    await this.p.store.claimSession(session.id, session.timeoutMs);
  }

  /** A client that has seen `zxid`: the mirror catches up to the store first, if it is behind. */
  async catchUp(zxid: bigint): Promise<void> {
    if (zxid > this.p.zxid.last) await this.p.store.barrier();
  }

  /** One reaper pass: empty containers and expired TTL nodes, each deleted by its own commit (compared, so at most once). */
  async reap(): Promise<void> {
    if (this.reaping || this.closed) return;
    this.reaping = true;
    try {
      for (const path of this.processor.reapCandidates(this.p.wallNow())) {
        if (this.closed) return;
        this.trialZxid.last = this.p.zxid.last;
        const t = trial(this.p.tree, this.recording, this.p.zxid.last + 1n, () => this.processor.reap(path));
        if (!t.changed) continue;
        await this.commit(t.write, t.notes);
      }
    } catch (err) {
      this.p.options.logger?.warn({ err }, 'a reaper pass failed');
    } finally {
      this.reaping = false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.p.store.close();
  }
}
