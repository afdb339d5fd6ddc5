/**
 * The embedded server: ZooKeeper's data tree, sessions and watches in-process. Front doors (the
 * in-process transport, the TCP listener) reach it through the FrontDoor interface; injected
 * faults live in the fault gate (fault-gate.ts), introspection in server-introspection.ts.
 *
 * Requests are served in the order they arrive, each one synchronously; their replies and the
 * notifications they cause leave through each connection's outbox (see server-connection.ts).
 */
import type { ConnectParams, Id, Request, Transport } from '@tenure/protocol';
import {
  AbortError,
  ConnectionLossError,
  ErrorCode,
  OpCode,
  systemClock,
  unrefTimer,
  type Clock,
  type TimerHandle,
} from '@tenure/protocol';
import { authenticate } from './security/acl-policy.js';
import { ConnectionLimits } from './front-doors/connection-limits.js';
import { DataTree } from './semantics/data-tree.js';
import { FaultGate } from './ops/fault-gate.js';
import type { AcceptResult, FrontDoor, PeerInfo, ServerLimits } from './front-doors/front-door.js';
import { InProcessTransport } from './front-doors/in-process-transport.js';
import { resolveOptions, type EmbeddedServerOptions, type Logger, type ResolvedOptions, type StorageEvent } from './options.js';
import { RequestProcessor, type ZxidCounter } from './semantics/request-processor.js';
import { ServerConnection, type ConnectionHost, type ConnectionSink } from './semantics/server-connection.js';
import { ServerIntrospection, type NodeSnapshot, type SessionInfo } from './ops/server-introspection.js';
import { SaslAuthenticator } from './security/sasl-auth.js';
import { SessionTable, type Session } from './semantics/session-table.js';
import { SessionWheel } from './semantics/session-wheel.js';
import { TcpListener, type ListenAddress, type ListenOptions } from './front-doors/tcp-listener.js';
import { TlsListener } from './front-doors/tls-listener.js';
import type { WebSocketAddress, WebSocketEndpointOptions } from './front-doors/websocket-endpoint.js';
import { WebSocketListener } from './front-doors/ws-listener.js';
import { WatchRegistry } from './semantics/watch-registry.js';
import { DataDirStorage } from './storage/data-dir-storage.js';
import { sessionPassword } from './storage/session-password.js';
import { captureRequest } from './storage/txn-capture.js';
import type { TxnBody } from './storage/txn-records.js';

/** Output of a server in memory is never held for the log. */
const ALWAYS_VISIBLE = (1n << 63n) - 1n;

type ServerSession = Session<ServerConnection>;

export class EmbeddedServer implements ConnectionHost, FrontDoor {
  readonly name: string;
  readonly options: Readonly<ResolvedOptions>;
  readonly limits: ServerLimits;
  readonly logger: Logger | undefined;
  readonly introspection: ServerIntrospection;
  /** maxClientCnxns, globalOutstandingLimit and the traffic counts metrics read (connection-limits.ts). */
  readonly connectionLimits: ConnectionLimits;
  private readonly zxidCounter: ZxidCounter = { last: 0n };
  private readonly tree: DataTree;
  private readonly watches = new WatchRegistry();
  private readonly sessionTable: SessionTable<ServerConnection>;
  /** The data dir, or undefined for a server in memory (storage/). */
  private readonly storage: DataDirStorage | undefined;
  /** Everything up to this zxid is on disk; output that reveals a later one waits. */
  private durableZxid = ALWAYS_VISIBLE;
  private readonly waitingForLog = new Set<ServerConnection>();
  private readonly durableWaiters: Array<{ zxid: bigint; resolve: () => void }> = [];
  private storageFailure: Error | undefined;
  private readonly processor: RequestProcessor;
  private readonly wheel: SessionWheel<ServerSession>;
  private readonly faults: FaultGate;
  private readonly connections = new Set<ServerConnection>();
  /** The client address each connection holds a maxClientCnxns slot for. */
  private readonly slots = new Map<ServerConnection, string>();
  private reaper: TimerHandle | undefined;
  private readonly clock: Clock;
  private isClosed = false;
  /** shutdown() began: no new handshakes. */
  private draining = false;
  /** Connections with output to deliver at the next flush. */
  private due: ServerConnection[] = [];
  private readonly listeners = new Set<TcpListener | WebSocketListener>();
  /** Every connection starts authenticated as its address (shared until an auth adds to it). */
  private readonly baseIds: readonly Id[];
  private readonly saslAuth: SaslAuthenticator;

  constructor(options: EmbeddedServerOptions = {}) {
    this.options = resolveOptions(options);
    this.clock = options.clock ?? systemClock;
    const clock = this.clock;
    this.name = this.options.name;
    this.limits = Object.freeze({
      maxBufferBytes: this.options.maxBufferBytes,
      maxClientCnxns: this.options.maxClientCnxns,
      globalOutstandingLimit: this.options.globalOutstandingLimit,
    });
    this.connectionLimits = new ConnectionLimits(this.options.maxClientCnxns, this.options.globalOutstandingLimit);
    this.logger = this.options.logger;
    this.baseIds = Object.freeze([Object.freeze({ scheme: 'ip', id: this.options.clientAddress })]);
    if (this.options.storage !== undefined) {
      // Recovers the dir now (throws DataDirCorruptError naming the file and offset).
      this.storage = new DataDirStorage(this.options.storage, this.options.ttlEnabled);
      this.tree = this.storage.recovered.tree;
      this.zxidCounter.last = this.storage.recovered.lastZxid;
      this.durableZxid = this.storage.recovered.lastZxid;
      this.sessionTable = new SessionTable<ServerConnection>(sessionPassword);
    } else {
      this.storage = undefined;
      this.tree = new DataTree(this.options.ttlEnabled);
      this.sessionTable = new SessionTable<ServerConnection>();
    }
    this.saslAuth = new SaslAuthenticator(this.options.sasl);
    this.processor = new RequestProcessor(this.tree, this.watches, this.zxidCounter, this.options);
    this.wheel = new SessionWheel(this.options.tickMs, (due) => this.onDue(due), clock);
    this.faults = new FaultGate({
      now: () => this.clock.now(),
      session: (id) => this.sessionTable.get(id),
      serve: (conn, request, token, oversize) => this.serve(conn, request, token, oversize),
      expire: (s) => this.expire(s),
    });
    this.introspection = new ServerIntrospection({
      config: this.options,
      zxid: this.zxidCounter,
      tree: this.tree,
      sessions: this.sessionTable,
      wheel: this.wheel,
      connections: this.connections,
      clock,
      limits: this.connectionLimits,
    });
    this.armReaper();
    if (this.storage !== undefined) this.startStorage(this.storage);
  }

  /** Restores the sessions (their clocks start now) and hands the storage its hooks. */
  private startStorage(storage: DataDirStorage): void {
    for (const [id, timeoutMs] of storage.recovered.sessions) {
      this.wheel.touch(this.sessionTable.restore(id, timeoutMs), timeoutMs);
    }
    storage.start({
      state: () => {
        const sessions = new Map<bigint, number>();
        for (const s of this.sessionTable) if (!s.closing) sessions.set(s.id, s.timeoutMs);
        return { tree: this.tree, sessions };
      },
      durable: (zxid) => this.onDurable(zxid),
      failed: (err) => this.onStorageFailure(err),
      warn: (obj, msg) => this.options.logger?.warn(obj, msg),
      snapshotted: (info) => this.emitStorage({ kind: 'snapshot', ...info }),
    });
  }

  // ---- front doors ----

  /** A transport that reaches this server in-process, with no network and no serialization. */
  transport(): Transport {
    return new InProcessTransport(this);
  }

  /**
   * Serves ZooKeeper's wire protocol on TCP (see tcp-listener.ts); any ZooKeeper client can connect.
   * With `tls`, serves it on TLS instead (tls-listener.ts): a verified client certificate
   * authenticates the connection as `x509:<subject>`. With `webSocket`, serves it on WebSocket
   * instead, one frame per binary message (see ws-listener.ts); with `tls` too, on `wss://`
   * (a verified client certificate is `x509:<subject>` there too). `listen` may be called again for
   * each listener wanted (plaintext, TLS and WebSocket side by side). Resolves with the bound
   * address (port 0 picks a free one). close() stops it.
   */
  async listen(options: ListenOptions & { webSocket: WebSocketEndpointOptions }): Promise<WebSocketAddress>;
  async listen(options?: ListenOptions): Promise<ListenAddress>;
  async listen(options: ListenOptions & { webSocket?: WebSocketEndpointOptions } = {}): Promise<ListenAddress> {
    this.ensureOpen();
    const listener = options.webSocket
      ? new WebSocketListener(this, options.webSocket, options.tls)
      : options.tls
        ? new TlsListener(this, options.tls, options.handshakeTimeoutMs)
        : new TcpListener(this);
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
   * Performs a handshake for a front door. Rejects with ConnectionLossError when the server is
   * closed, refusing connections (restart) or the client has seen a zxid this server has not; with
   * AbortError when `params.signal` aborts.
   */
  async accept(params: ConnectParams, sink: ConnectionSink, peer?: PeerInfo): Promise<AcceptResult> {
    const { signal } = params;
    if (signal?.aborted) throw new AbortError('connect aborted');
    this.ensureServing();
    // maxClientCnxns first, as ZooKeeper refuses the socket before reading its ConnectRequest.
    const address = peer?.address ?? this.options.clientAddress;
    const refused = this.connectionLimits.admit(address);
    if (refused !== undefined) {
      this.logger?.warn({ address, maxClientCnxns: this.options.maxClientCnxns }, refused);
      throw new ConnectionLossError(undefined, refused);
    }
    let result: AcceptResult | undefined;
    try {
      result = await this.handshake(params, sink, peer);
      return result;
    } finally {
      if (result?.kind === 'connected' && !result.connection.closed) this.slots.set(result.connection, address);
      else this.connectionLimits.release(address);
    }
  }

  private async handshake(params: ConnectParams, sink: ConnectionSink, peer: PeerInfo | undefined): Promise<AcceptResult> {
    const { signal } = params;
    await (this.faults.armed ? this.faults.handshake(params.sessionId, signal) : undefined);
    if (signal?.aborted) throw new AbortError('connect aborted');
    this.ensureServing();
    if (params.lastZxidSeen > this.zxidCounter.last) {
      throw new ConnectionLossError(undefined, `client has seen zxid ${params.lastZxidSeen}, this server is at ${this.zxidCounter.last}`);
    }
    const o = this.options;
    const timeoutMs = Math.min(o.maxSessionTimeoutMs, Math.max(o.minSessionTimeoutMs, Math.trunc(params.timeoutMs) || 0));
    let session: ServerSession | undefined;
    if (params.sessionId === 0n) {
      session = this.sessionTable.create(timeoutMs);
      const zxid = ++this.zxidCounter.last; // createSession is a transaction
      if (this.storage !== undefined) {
        this.log(session.id, zxid, OpCode.createSession, Date.now(), { type: OpCode.createSession, timeOut: timeoutMs });
        // The client hears of its session only once the session is on disk.
        await this.durable(zxid);
        this.ensureServing();
      }
    } else {
      session = this.sessionTable.validate(params.sessionId, Buffer.from(params.passwd ?? []));
      if (session === undefined) return { kind: 'expired' };
      session.connection?.abort('session re-attached on another connection');
      session.timeoutMs = timeoutMs;
    }
    this.wheel.touch(session, timeoutMs);
    const ids = peer?.x509Subject === undefined ? this.baseIds : [{ scheme: 'x509', id: peer.x509Subject }, ...this.baseIds];
    const conn = new ServerConnection(this, session, sink, o.clientAddress, ids);
    session.connection = conn;
    this.connections.add(conn);
    return { kind: 'connected', connection: conn, timeoutMs };
  }

  /**
   * A request arrived on `conn`. `token` comes back with its reply. `oversize` marks a request
   * larger than maxBufferBytes: the connection closes without an answer, as ZooKeeper does.
   */
  receive(conn: ServerConnection, request: unknown, token: unknown, oversize = false): void {
    if (conn.closing || this.isClosed || this.storageFailure !== undefined) return;
    if (!oversize) this.connectionLimits.received(conn, (request as { type?: number } | null)?.type ?? -1);
    if (this.faults.armed && this.faults.holds(conn, request, token, oversize)) return;
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
    if (type === OpCode.sasl) {
      const out = this.saslAuth.handle(conn, request as { token?: unknown });
      if (out.ids) conn.addAuthIds(out.ids);
      conn.pushReply(token, out.reply);
      if (out.close !== undefined) conn.closeAfterFlush(out.close);
      return;
    }
    this.wheel.touch(session, session.timeoutMs);
    if (type === OpCode.ping) {
      conn.pushReply(token, { zxid: this.zxidCounter.last, err: 0, response: undefined });
      return;
    }
    const lose = this.faults.armed && this.faults.losesReply(session);
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
    const before = this.zxidCounter.last;
    try {
      outcome = this.processor.process(conn, request as Request);
    } catch (err) {
      this.options.logger?.warn({ err, request }, 'request failed');
      outcome = { reply: { zxid: this.zxidCounter.last, err: ErrorCode.MARSHALLINGERROR, response: undefined } };
    }
    if (this.storage !== undefined && this.zxidCounter.last !== before) {
      const now = Date.now();
      let c;
      try {
        c = captureRequest(this.tree, request as Request, outcome.reply, conn.authIds, now);
      } catch (err) {
        this.options.logger?.warn({ err, request }, 'could not derive the txn; logging an error txn');
        c = { type: OpCode.error, body: { type: OpCode.error, err: outcome.reply.err } as TxnBody, time: now };
      }
      this.log(session.id, this.zxidCounter.last, c.type, c.time, c.body);
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
    const ids = authenticate(scheme, auth, conn.clientAddr, this.options.superDigest, conn.authIds);
    if (ids === undefined) {
      conn.pushReply(token, { zxid: 0n, err: ErrorCode.AUTHFAILED, response: undefined });
      conn.closeAfterFlush(`authentication failed for scheme ${JSON.stringify(scheme)}`);
      return;
    }
    conn.addAuthIds(ids);
    conn.pushReply(token, { zxid: 0n, err: 0, response: undefined });
  }

  // ---- sessions ----

  private onDue(due: ServerSession[]): void {
    for (const s of due) {
      if (!(this.faults.armed && this.faults.defersExpiry(s))) this.expire(s);
    }
  }

  private expire(s: ServerSession): void {
    if (s.closing) return;
    this.endSession(s);
    s.connection?.abort('session expired');
  }

  /** closeSession and expiry: delete the ephemerals at one zxid and forget the session. */
  private endSession(s: ServerSession): bigint {
    s.closing = true;
    this.wheel.remove(s);
    this.sessionTable.delete(s.id);
    if (this.faults.armed) this.faults.forgetSession(s);
    const paths = this.storage === undefined ? [] : [...(this.tree.ephemerals.get(s.id) ?? [])];
    const zxid = this.processor.killSession(s.id);
    if (this.storage !== undefined)
      this.log(s.id, zxid, OpCode.closeSession, Date.now(), { type: OpCode.closeSession, paths2Delete: paths });
    return zxid;
  }

  // ---- storage (storage/) ----

  /** Appends a txn to the data dir's log. */
  private log(clientId: bigint, zxid: bigint, type: number, time: number, body: TxnBody): void {
    this.storage?.append({ clientId, cxid: 0, zxid, time, type }, body);
  }

  /** Resolves once everything up to `zxid` is on disk; rejects when the log failed. */
  private durable(zxid: bigint): Promise<void> {
    if (this.storageFailure !== undefined) return Promise.reject(new ConnectionLossError(undefined, 'storage failed'));
    if (zxid <= this.durableZxid) return Promise.resolve();
    return new Promise((resolve) => this.durableWaiters.push({ zxid, resolve }));
  }

  private onDurable(zxid: bigint): void {
    this.durableZxid = zxid;
    const s = this.storage!;
    this.emitStorage({ kind: 'durable', zxid, commits: s.logStats.commits, txns: s.logStats.txns, syncMs: s.logStats.syncMs });
    for (const conn of this.waitingForLog) this.scheduleFlush(conn);
    this.waitingForLog.clear();
    let kept = 0;
    for (const w of this.durableWaiters) {
      if (w.zxid <= zxid) w.resolve();
      else this.durableWaiters[kept++] = w;
    }
    this.durableWaiters.length = kept;
  }

  /** The log cannot be written: nothing more is answered; what was not on disk is never shown. */
  private onStorageFailure(err: Error): void {
    if (this.storageFailure !== undefined) return;
    this.storageFailure = err;
    this.options.logger?.warn({ err }, 'the txn log could not be written or synced; the server stops answering');
    this.waitingForLog.clear();
    this.abortAll('storage failed');
    for (const w of this.durableWaiters.splice(0)) w.resolve(); // accept() then finds the server failed
    this.emitStorage({ kind: 'failed', error: err });
  }

  /** The storage's failure, when the log could not be written or synced. */
  get failure(): Error | undefined {
    return this.storageFailure;
  }

  /** Group commits, txns logged and snapshots taken since open (with a data dir). */
  get storageStats():
    | {
        durableZxid: bigint;
        commits: number;
        txns: number;
        snapshots: number;
        recovered: { replayed: number; snapshotZxid: bigint | undefined };
      }
    | undefined {
    const s = this.storage;
    if (s === undefined) return undefined;
    return {
      durableZxid: this.durableZxid,
      commits: s.logStats.commits,
      txns: s.logStats.txns,
      snapshots: s.stats.snapshots,
      recovered: { replayed: s.recovered.replayed, snapshotZxid: s.recovered.snapshotZxid },
    };
  }

  private readonly storageListeners = new Set<(event: StorageEvent) => void>();

  private emitStorage(event: StorageEvent): void {
    this.options.onStorageEvent?.(event);
    for (const l of this.storageListeners) l(event);
  }

  /** Listens to the storage's events (as `onStorageEvent`) besides the option; returns the unsubscribe. */
  onStorage(listener: (event: StorageEvent) => void): () => void {
    this.storageListeners.add(listener);
    return () => this.storageListeners.delete(listener);
  }

  /** Takes a snapshot now (with a data dir); resolves when it is on disk. */
  async snapshot(): Promise<void> {
    await this.storage?.snapshot();
  }

  /** Purges old snapshots and logs as `autopurge` says (with a data dir). */
  purge(): { snapshots: string[]; logs: string[] } {
    return this.storage?.purgeNow() ?? { snapshots: [], logs: [] };
  }

  // ---- ConnectionHost ----

  detach(conn: ServerConnection): void {
    this.connections.delete(conn);
    this.connectionLimits.forget(conn);
    const address = this.slots.get(conn);
    if (address !== undefined) {
      this.slots.delete(conn);
      this.connectionLimits.release(address);
    }
    this.watches.removeAll(conn);
    if (conn.session.connection === conn) conn.session.connection = undefined;
    if (this.faults.armed) this.faults.forgetConnection(conn);
  }

  delivered(conn: ServerConnection, replies: number, events: number): void {
    this.connectionLimits.delivered(conn, replies, events);
  }

  sinkError(err: unknown): void {
    this.options.logger?.warn({ err }, 'a connection callback threw');
  }

  now(): number {
    return this.clock.now();
  }

  holdsOutput(conn: ServerConnection): boolean {
    return this.faults.armed && this.faults.parksOutput(conn);
  }

  outputZxid(): bigint {
    return this.zxidCounter.last;
  }

  visibleZxid(): bigint {
    return this.durableZxid;
  }

  awaitDurable(conn: ServerConnection): void {
    if (this.storageFailure === undefined) this.waitingForLog.add(conn);
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

  // ---- fault injection (fault-gate.ts) ----

  /**
   * Closes every connection and refuses new ones for `refuseMs`, then serves again with the
   * same tree, sessions and zxid. Session clocks keep running. Resolves once serving again.
   */
  restart(refuseMs = 0): Promise<void> {
    this.ensureOpen();
    return this.faults.restart(refuseMs, () => this.abortAll('server restarting'));
  }

  /** Closes the session's connection now. Returns whether there was one. */
  dropConnection(sessionId: bigint): boolean {
    return this.faults.dropConnection(sessionId);
  }

  /**
   * Delivers nothing either way for `ms` on the session's connections (a network partition):
   * requests are not received (so they do not keep the session alive), replies, notifications
   * and closes are held. Whatever is still open when the silence ends is delivered then.
   */
  silence(sessionId: bigint, ms: number): boolean {
    return this.faults.silence(sessionId, ms);
  }

  /** Expires the session now: its ephemerals go, its connection closes. */
  expireSession(sessionId: bigint): boolean {
    return this.faults.expireSession(sessionId);
  }

  /** The next request of the session is applied, then its connection drops before the reply. */
  loseNextReply(sessionId: bigint): boolean {
    return this.faults.loseNextReply(sessionId);
  }

  /**
   * Stops answering for `ms`: requests and handshakes wait (they are received and served when the
   * pause ends, even for connections the client closed meanwhile), sessions that come due expire
   * when it ends. Resolves when the server answers again.
   */
  pause(ms: number): Promise<void> {
    this.ensureOpen();
    return this.faults.pause(ms);
  }

  // ---- introspection (server-introspection.ts) ----

  /** The last zxid, which rises with every write and never goes back. */
  get zxid(): bigint {
    return this.zxidCounter.last;
  }

  /** Live sessions with their ephemerals, like ZooKeeper's `dump`. */
  sessions(): SessionInfo[] {
    return this.introspection.sessions();
  }

  /** Watch entries per connected session. */
  watchCounts(): Map<bigint, number> {
    return this.introspection.watchCounts();
  }

  /** The paths a session's connection watches, by kind. */
  watchesOf(sessionId: bigint): { data: string[]; child: string[] } {
    return this.introspection.watchesOf(sessionId);
  }

  /** Nodes in the tree, the system nodes included (ZooKeeper's "Node count"). */
  get nodeCount(): number {
    return this.introspection.nodeCount;
  }

  /** Open connections. */
  get connectionCount(): number {
    return this.introspection.connectionCount;
  }

  /** A copy of one node, or undefined. */
  node(path: string): NodeSnapshot | undefined {
    return this.introspection.node(path);
  }

  /** A text dump of the sessions and their ephemerals. */
  dump(): string {
    return this.introspection.dump();
  }

  // ---- lifecycle ----

  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * A graceful close (SIGTERM): stops taking connections and reading requests, waits until every
   * request received has been answered (at most `timeoutMs`, default 5,000), then close().
   */
  async shutdown(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.isClosed) return;
    this.draining = true;
    // Each listener stops taking connections and reading requests (one without stopAccepting is
    // closed with the rest below).
    for (const l of this.listeners as Iterable<{ stopAccepting?(): void }>) l.stopAccepting?.();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.connectionLimits.idle(),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, options.timeoutMs ?? 5000))),
    ]);
    clearTimeout(timer);
    // The last replies leave in the flush microtask that answered them; let it run.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await this.close();
  }

  /**
   * Closes every connection and stops every timer; pending restart() and pause() promises resolve.
   * The server cannot be used afterwards.
   */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    if (this.storage !== undefined) {
      // Answer what is in flight: the log is written and synced, then the held output goes.
      try {
        await this.storage.close();
      } catch (err) {
        this.onStorageFailure(err instanceof Error ? err : new Error(String(err)));
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    // Closing is not a partition: every client hears of it now.
    this.faults.close(this.sessionTable, () => this.abortAll('server closed'));
    if (this.reaper !== undefined) this.clock.clearTimeout(this.reaper);
    this.reaper = undefined;
    this.wheel.close();
    this.sessionTable.clear();
    await Promise.all([...this.listeners].map((l) => l.close()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---- internals ----

  private abortAll(message: string): void {
    for (const conn of [...this.connections]) conn.abort(message);
  }

  private ensureOpen(): void {
    if (this.isClosed) throw new Error('the embedded server is closed');
  }

  private ensureServing(): void {
    if (this.isClosed || this.draining) throw new ConnectionLossError(undefined, 'server closed');
    if (this.storageFailure !== undefined) throw new ConnectionLossError(undefined, 'server storage failed');
    if (this.faults.refusing) throw new ConnectionLossError(undefined, 'connection refused (server restarting)');
  }

  /** One reaper pass every containerCheckIntervalMs, on the server's clock. */
  private armReaper(): void {
    this.reaper = unrefTimer(
      this.clock.setTimeout(() => {
        if (this.isClosed) return;
        this.reap();
        this.armReaper();
      }, this.options.containerCheckIntervalMs),
    );
  }

  private reap(): void {
    if (this.isClosed || (this.faults.armed && this.faults.halted)) return;
    if (this.tree.containers.size === 0 && this.tree.ttls.size === 0) return;
    for (const path of this.processor.reapCandidates(Date.now())) {
      const before = this.zxidCounter.last;
      this.processor.reap(path);
      if (this.zxidCounter.last !== before)
        this.log(0n, this.zxidCounter.last, OpCode.deleteContainer, Date.now(), { type: OpCode.deleteContainer, path });
    }
  }
}

/** Creates an embedded server with ZooKeeper's semantics. */
export function createEmbeddedServer(options?: EmbeddedServerOptions): EmbeddedServer {
  return new EmbeddedServer(options);
}
