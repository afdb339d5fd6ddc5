/**
 * The embedded server: ZooKeeper's data tree, sessions and watches in-process, with fault
 * injection that acts only on the server side of its connections.
 *
 * Requests are served in the order they arrive, each one synchronously; their replies and the
 * notifications they cause leave through each connection's outbox (see server-connection.ts).
 */
import type { ACL, ConnectParams, Id, Request, Stat, Transport } from '@tenure/protocol';
import { AbortError, ConnectionLossError, ErrorCode, OpCode } from '@tenure/protocol';
import { authenticate } from './acl-policy.js';
import { DataTree } from './data-tree.js';
import { InProcessTransport } from './in-process-transport.js';
import { resolveOptions, type EmbeddedServerOptions, type ResolvedOptions } from './options.js';
import { RequestProcessor, type ZxidCounter } from './request-processor.js';
import { ServerConnection, type ConnectionHost, type ConnectionSink } from './server-connection.js';
import { Session, SessionTable } from './session-table.js';
import { SessionWheel, monotonicClock, type WheelClock } from './session-wheel.js';
import { TcpListener, type ListenAddress, type ListenOptions } from './tcp-listener.js';
import { WatchRegistry, watchCount } from './watch-registry.js';

/** What a handshake produced on the server side. */
export type AcceptResult =
  | { kind: 'connected'; connection: ServerConnection; timeoutMs: number }
  /** ZooKeeper's zero-timeout answer: expired or unknown session, or wrong password. */
  | { kind: 'expired' };

/** One session as introspection shows it (like ZooKeeper's `dump`). */
export interface SessionInfo {
  sessionId: bigint;
  timeoutMs: number;
  /** A connection is bound to the session right now. */
  connected: boolean;
  /** Paths of the session's ephemeral nodes. */
  ephemerals: string[];
  /** Watch entries held by the session's connection (a persistent watch counts once per table). */
  watches: number;
  /** When the session expires if nothing more arrives, ms from now. */
  expiresInMs: number | undefined;
}

/** A copy of one node, for tests and tools. */
export interface NodeSnapshot {
  path: string;
  data: Buffer | null;
  stat: Stat;
  acl: ACL[];
  children: string[];
}

interface Waiter {
  sessionId: bigint;
  resolve(): void;
  reject(err: Error): void;
}

type Held = { conn: ServerConnection; request: unknown; token: unknown; oversize: boolean };

export class EmbeddedServer implements ConnectionHost {
  readonly name: string;
  readonly options: Readonly<ResolvedOptions>;
  private readonly zxidCounter: ZxidCounter = { last: 0n };
  private readonly tree: DataTree;
  private readonly watches = new WatchRegistry();
  private readonly sessionTable = new SessionTable();
  private readonly processor: RequestProcessor;
  private readonly wheel: SessionWheel<Session>;
  private readonly connections = new Set<ServerConnection>();
  private readonly waiters = new Set<Waiter>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly reaper: NodeJS.Timeout;
  private state: 'serving' | 'refusing' | 'closed' = 'serving';
  private paused = false;
  /** Requests that arrived during a pause, in arrival order. */
  private held: Held[] = [];
  /** Sessions that came due during a pause; they expire when it ends. */
  private dueDuringPause: Session[] = [];
  private pauseEnd: (() => void) | undefined;
  /** Resolves pending restart() promises (close() ends them too). */
  private readonly restartEnds = new Set<() => void>();
  /** Connections with output to deliver at the next flush. */
  private due: ServerConnection[] = [];
  private readonly listeners = new Set<TcpListener>();
  /** Every connection starts authenticated as its address (shared until an auth adds to it). */
  private readonly baseIds: readonly Id[];

  constructor(options: EmbeddedServerOptions = {}, private readonly clock: WheelClock = monotonicClock) {
    this.options = resolveOptions(options);
    this.name = this.options.name;
    this.baseIds = Object.freeze([Object.freeze({ scheme: 'ip', id: this.options.clientAddress })]);
    this.tree = new DataTree(this.options.ttlEnabled);
    this.processor = new RequestProcessor(this.tree, this.watches, this.zxidCounter, this.options);
    this.wheel = new SessionWheel(this.options.tickMs, (due) => this.onDue(due), clock);
    this.reaper = setInterval(() => this.reap(), this.options.containerCheckIntervalMs);
    this.reaper.unref();
  }

  // ---- front ends ----

  /** A transport that reaches this server in-process, with no network and no serialization. */
  transport(): Transport {
    return new InProcessTransport(this);
  }

  /**
   * Serves ZooKeeper's wire protocol on TCP (see tcp-listener.ts); any ZooKeeper client can connect.
   * Resolves with the bound address (port 0 picks a free one). close() stops it.
   */
  async listen(options: ListenOptions = {}): Promise<ListenAddress> {
    this.ensureOpen();
    const listener = new TcpListener(this);
    this.listeners.add(listener);
    try {
      return await listener.listen(options);
    } catch (err) {
      this.listeners.delete(listener);
      await listener.close();
      throw err;
    }
  }

  /**
   * Performs a handshake for a front end (the in-process transport, later TCP). Rejects with
   * ConnectionLossError when the server is closed, refusing connections (restart) or the client
   * has seen a zxid this server has not; with AbortError when `params.signal` aborts.
   */
  async accept(params: ConnectParams, sink: ConnectionSink): Promise<AcceptResult> {
    const { signal } = params;
    if (signal?.aborted) throw new AbortError('connect aborted');
    this.ensureServing();
    await this.gate(params.sessionId, signal);
    if (signal?.aborted) throw new AbortError('connect aborted');
    this.ensureServing();
    if (params.lastZxidSeen > this.zxidCounter.last) {
      throw new ConnectionLossError(undefined, `client has seen zxid ${params.lastZxidSeen}, this server is at ${this.zxidCounter.last}`);
    }
    const o = this.options;
    const timeoutMs = Math.min(o.maxSessionTimeoutMs, Math.max(o.minSessionTimeoutMs, Math.trunc(params.timeoutMs) || 0));
    let session: Session | undefined;
    if (params.sessionId === 0n) {
      session = this.sessionTable.create(timeoutMs);
      this.zxidCounter.last++; // createSession is a transaction
    } else {
      session = this.sessionTable.validate(params.sessionId, Buffer.from(params.passwd ?? []));
      if (session === undefined) return { kind: 'expired' };
      session.connection?.abort('session re-attached on another connection');
      session.timeoutMs = timeoutMs;
    }
    this.wheel.touch(session, timeoutMs);
    const conn = new ServerConnection(this, session, sink, o.clientAddress, this.baseIds);
    session.connection = conn;
    this.connections.add(conn);
    return { kind: 'connected', connection: conn, timeoutMs };
  }

  /**
   * A request arrived on `conn`. `token` comes back with its reply. `oversize` marks a request
   * larger than maxBufferBytes: the connection closes without an answer, as ZooKeeper does.
   */
  receive(conn: ServerConnection, request: unknown, token: unknown, oversize = false): void {
    if (conn.closing || this.state !== 'serving') return;
    if (this.paused || this.held.length > 0) {
      this.held.push({ conn, request, token, oversize });
      return;
    }
    if (conn.silenced || conn.held.length > 0) {
      conn.held.push({ request, token, oversize });
      return;
    }
    this.serve(conn, request, token, oversize);
  }

  private serve(conn: ServerConnection, request: unknown, token: unknown, oversize: boolean): void {
    const session = conn.session;
    if (session.closing) return;
    if (oversize) {
      conn.abort(`request larger than maxBufferBytes (${this.options.maxBufferBytes})`);
      return;
    }
    const type = (request as { type?: unknown } | null)?.type;
    if (type === OpCode.auth) {
      this.auth(conn, request as Request & { type: 100 }, token);
      return;
    }
    this.wheel.touch(session, session.timeoutMs);
    if (type === OpCode.ping) {
      conn.pushReply(token, { zxid: this.zxidCounter.last, err: 0, response: undefined });
      return;
    }
    const lose = session.loseNextReply;
    session.loseNextReply = false;
    if (type === OpCode.closeSession) {
      const zxid = this.endSession(session);
      if (lose) conn.abort('reply lost (fault injection)');
      else {
        conn.pushReply(token, { zxid, err: 0, response: undefined });
        conn.closeAfterFlush('session closed');
      }
      return;
    }
    let outcome;
    try {
      outcome = this.processor.process(conn, request as Request);
    } catch (err) {
      this.options.logger?.warn({ err, request }, 'request failed');
      outcome = { reply: { zxid: this.zxidCounter.last, err: ErrorCode.MARSHALLINGERROR, response: undefined } };
    }
    if (lose) {
      conn.abort('reply lost (fault injection)');
      return;
    }
    conn.pushReply(token, outcome.reply);
    if (outcome.close !== undefined) conn.closeAfterFlush(outcome.close);
  }

  /** Auth is answered at once with zxid 0 and does not touch the session, as in ZooKeeper. */
  private auth(conn: ServerConnection, req: { scheme?: unknown; auth?: unknown }, token: unknown): void {
    const scheme = typeof req.scheme === 'string' ? req.scheme : '';
    const auth = req.auth instanceof Uint8Array ? Buffer.from(req.auth) : null;
    const ids = authenticate(scheme, auth, conn.clientAddr, this.options.superDigest);
    if (ids === undefined) {
      conn.pushReply(token, { zxid: 0n, err: ErrorCode.AUTHFAILED, response: undefined });
      conn.closeAfterFlush(`authentication failed for scheme ${JSON.stringify(scheme)}`);
      return;
    }
    conn.addAuthIds(ids);
    conn.pushReply(token, { zxid: 0n, err: 0, response: undefined });
  }

  // ---- sessions ----

  private onDue(due: Session[]): void {
    for (const s of due) {
      if (this.paused) this.dueDuringPause.push(s);
      else this.expire(s);
    }
  }

  private expire(s: Session): void {
    if (s.closing) return;
    this.endSession(s);
    s.connection?.abort('session expired');
  }

  /** closeSession and expiry: delete the ephemerals at one zxid and forget the session. */
  private endSession(s: Session): bigint {
    s.closing = true;
    this.wheel.remove(s);
    this.sessionTable.delete(s.id);
    return this.processor.killSession(s.id);
  }

  // ---- ConnectionHost ----

  detach(conn: ServerConnection): void {
    this.connections.delete(conn);
    this.watches.removeAll(conn);
    if (conn.session.connection === conn) conn.session.connection = undefined;
  }

  sinkError(err: unknown): void {
    this.options.logger?.warn({ err }, 'a connection callback threw');
  }

  now(): number {
    return this.clock.now();
  }

  scheduleFlush(conn: ServerConnection): void {
    this.due.push(conn);
    if (this.due.length === 1) queueMicrotask(this.flushDue);
  }

  /** Flushes the connections due; any made due meanwhile get the next microtask. */
  private readonly flushDue = (): void => {
    const due = this.due;
    this.due = [];
    for (const c of due) c.flush();
  };

  // ---- fault injection ----

  /**
   * Closes every connection and refuses new ones for `refuseMs`, then serves again with the
   * same tree, sessions and zxid. Session clocks keep running. Resolves once serving again.
   */
  restart(refuseMs = 0): Promise<void> {
    this.ensureOpen();
    this.state = 'refusing';
    this.held = [];
    this.endPause();
    for (const conn of [...this.connections]) conn.abort('server restarting');
    this.rejectWaiters(() => new ConnectionLossError(undefined, 'server restarting'));
    return new Promise((resolve) => {
      const done = (): void => {
        this.restartEnds.delete(done);
        resolve();
      };
      this.restartEnds.add(done);
      this.later(refuseMs, () => {
        if (this.state === 'refusing') this.state = 'serving';
        done();
      });
    });
  }

  /** Closes the session's connection now. Returns whether there was one. */
  dropConnection(sessionId: bigint): boolean {
    const conn = this.sessionTable.get(sessionId)?.connection;
    if (conn === undefined) return false;
    conn.abort('connection dropped (fault injection)');
    return true;
  }

  /**
   * Delivers nothing either way for `ms` on the session's connections (a network partition):
   * requests are not received (so they do not keep the session alive), replies, notifications
   * and closes are held. Whatever is still open when the silence ends is delivered then.
   */
  silence(sessionId: bigint, ms: number): boolean {
    const s = this.sessionTable.get(sessionId);
    if (s === undefined) return false;
    const until = this.now() + Math.max(0, ms);
    if (until <= s.silencedUntil) return true;
    s.silencedUntil = until;
    if (Number.isFinite(ms)) this.later(until - this.now(), () => this.endSilence(s));
    return true;
  }

  private endSilence(s: Session): void {
    if (s.silencedUntil > this.now()) {
      // Extended meanwhile, or this timer fired early: Node timers can fire up to ~1 ms before
      // performance.now() says the delay has passed. Re-arming is harmless when a later timer exists.
      this.later(s.silencedUntil - this.now() + 1, () => this.endSilence(s));
      return;
    }
    s.silencedUntil = 0;
    const waiting = s.heldBySilence;
    s.heldBySilence = undefined;
    for (const c of waiting ?? []) c.flush();
    const conn = s.connection;
    if (conn !== undefined) {
      for (const h of conn.held.splice(0)) {
        if (this.paused || this.held.length > 0) this.held.push({ conn, ...h });
        else this.serve(conn, h.request, h.token, h.oversize);
      }
    }
    this.releaseWaiters();
  }

  /** Expires the session now: its ephemerals go, its connection closes. */
  expireSession(sessionId: bigint): boolean {
    const s = this.sessionTable.get(sessionId);
    if (s === undefined) return false;
    this.expire(s);
    return true;
  }

  /** The next request of the session is applied, then its connection drops before the reply. */
  loseNextReply(sessionId: bigint): boolean {
    const s = this.sessionTable.get(sessionId);
    if (s === undefined) return false;
    s.loseNextReply = true;
    return true;
  }

  /**
   * Stops answering for `ms`: requests and handshakes wait (they are received and served when the
   * pause ends, even for connections the client closed meanwhile), sessions that come due expire
   * when it ends. Resolves when the server answers again.
   */
  pause(ms: number): Promise<void> {
    this.ensureOpen();
    if (this.paused) this.endPause();
    this.paused = true;
    return new Promise((resolve) => {
      const timer = Number.isFinite(ms) ? this.later(Math.max(0, ms), () => this.endPause()) : undefined;
      this.pauseEnd = () => {
        if (timer !== undefined) this.clearTimer(timer);
        resolve();
      };
    });
  }

  private endPause(): void {
    if (!this.paused) return;
    this.paused = false;
    const end = this.pauseEnd;
    this.pauseEnd = undefined;
    for (const s of this.dueDuringPause.splice(0)) this.expire(s);
    const held = this.held;
    this.held = [];
    for (const h of held) {
      if (h.conn.silenced || h.conn.held.length > 0) h.conn.held.push(h);
      else this.serve(h.conn, h.request, h.token, h.oversize);
    }
    this.releaseWaiters();
    end?.();
  }

  // ---- introspection ----

  /** The last zxid, which rises with every write and never goes back. */
  get zxid(): bigint {
    return this.zxidCounter.last;
  }

  /** Live sessions with their ephemerals, like ZooKeeper's `dump`. */
  sessions(): SessionInfo[] {
    const now = this.now();
    return [...this.sessionTable].map((s) => {
      const at = this.wheel.expiryTime(s);
      return {
        sessionId: s.id,
        timeoutMs: s.timeoutMs,
        connected: s.connection !== undefined,
        ephemerals: [...(this.tree.ephemerals.get(s.id) ?? [])],
        watches: s.connection === undefined ? 0 : watchCount(s.connection),
        expiresInMs: at === undefined ? undefined : Math.max(0, at - now),
      };
    });
  }

  /** Watch entries per connected session. */
  watchCounts(): Map<bigint, number> {
    const out = new Map<bigint, number>();
    for (const c of this.connections) out.set(c.session.id, (out.get(c.session.id) ?? 0) + watchCount(c));
    return out;
  }

  /** The paths a session's connection watches, by kind. */
  watchesOf(sessionId: bigint): { data: string[]; child: string[] } {
    const conn = this.sessionTable.get(sessionId)?.connection;
    return {
      data: [...(conn?.watchModes('data')?.keys() ?? [])],
      child: [...(conn?.watchModes('child')?.keys() ?? [])],
    };
  }

  /** Nodes in the tree, the system nodes included (ZooKeeper's "Node count"). */
  get nodeCount(): number {
    return this.tree.nodes.size;
  }

  /** Open connections. */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** A copy of one node, or undefined. */
  node(path: string): NodeSnapshot | undefined {
    const n = this.tree.get(path);
    if (n === undefined) return undefined;
    return {
      path,
      data: n.data === null ? null : Buffer.from(n.data),
      stat: n.stat(),
      acl: n.acl.map((a) => ({ perms: a.perms, id: { ...a.id } })),
      children: [...n.children],
    };
  }

  /** A text dump of the sessions and their ephemerals. */
  dump(): string {
    const lines = [`zxid 0x${this.zxid.toString(16)}`, `sessions ${this.sessionTable.size}`];
    for (const s of this.sessions()) {
      lines.push(`0x${BigInt.asUintN(64, s.sessionId).toString(16)} timeout=${s.timeoutMs} connected=${s.connected} watches=${s.watches}`);
      for (const p of s.ephemerals) lines.push(`\t${p}`);
    }
    return lines.join('\n');
  }

  // ---- lifecycle ----

  get closed(): boolean {
    return this.state === 'closed';
  }

  /**
   * Closes every connection and stops every timer; pending restart() and pause() promises resolve.
   * The server cannot be used afterwards.
   */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.paused = false;
    this.held = [];
    this.pauseEnd?.();
    this.pauseEnd = undefined;
    for (const end of [...this.restartEnds]) end();
    // Closing is not a partition: every client hears of it now.
    for (const s of this.sessionTable) s.silencedUntil = 0;
    for (const conn of [...this.connections]) conn.abort('server closed');
    for (const s of this.sessionTable) {
      const held = s.heldBySilence;
      s.heldBySilence = undefined;
      for (const c of held ?? []) c.flush();
    }
    this.rejectWaiters(() => new ConnectionLossError(undefined, 'server closed'));
    clearInterval(this.reaper);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.wheel.close();
    this.sessionTable.clear();
    await Promise.all([...this.listeners].map((l) => l.close()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---- internals ----

  private ensureOpen(): void {
    if (this.state === 'closed') throw new Error('the embedded server is closed');
  }

  private ensureServing(): void {
    if (this.state === 'closed') throw new ConnectionLossError(undefined, 'server closed');
    if (this.state === 'refusing') throw new ConnectionLossError(undefined, 'connection refused (server restarting)');
  }

  private blocked(sessionId: bigint): boolean {
    if (this.paused) return true;
    if (sessionId === 0n) return false;
    const s = this.sessionTable.get(sessionId);
    return s !== undefined && s.silencedUntil > this.now();
  }

  /** Waits while a handshake could not be answered (pause, or the session is silenced). */
  private gate(sessionId: bigint, signal: AbortSignal | undefined): Promise<void> | undefined {
    if (!this.blocked(sessionId)) return undefined;
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => w.reject(new AbortError('connect aborted'));
      const done = (): void => {
        this.waiters.delete(w);
        signal?.removeEventListener('abort', onAbort);
      };
      const w: Waiter = {
        sessionId,
        resolve: () => {
          done();
          resolve();
        },
        reject: (err) => {
          done();
          reject(err);
        },
      };
      this.waiters.add(w);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private releaseWaiters(): void {
    for (const w of [...this.waiters]) if (!this.blocked(w.sessionId)) w.resolve();
  }

  private rejectWaiters(err: () => Error): void {
    for (const w of [...this.waiters]) w.reject(err());
  }

  private later(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, Math.min(ms, 0x7fffffff));
    this.timers.add(t);
    return t;
  }

  private clearTimer(t: NodeJS.Timeout): void {
    clearTimeout(t);
    this.timers.delete(t);
  }

  private reap(): void {
    if (this.state !== 'serving' || this.paused) return;
    if (this.tree.containers.size === 0 && this.tree.ttls.size === 0) return;
    for (const path of this.processor.reapCandidates(Date.now())) this.processor.reap(path);
  }
}

/** Creates an embedded server with ZooKeeper's semantics. */
export function createEmbeddedServer(options?: EmbeddedServerOptions): EmbeddedServer {
  return new EmbeddedServer(options);
}
