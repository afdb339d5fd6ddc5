/**
 * The embedded server: ZooKeeper's data tree, sessions and watches in-process. Front doors (the
 * in-process transport, the TCP listener) reach it through the FrontDoor interface; injected
 * faults live in the fault gate (fault-gate.ts), introspection in server-introspection.ts.
 *
 * Requests are served in the order they arrive, each one synchronously; their replies and the
 * notifications they cause leave through each connection's outbox (see server-connection.ts).
 */
import type { ConnectParams, Id, Request, Transport } from '@tenure/protocol';
import { AbortError, ConnectionLossError, ErrorCode, OpCode } from '@tenure/protocol';
import { authenticate } from './acl-policy.js';
import { DataTree } from './data-tree.js';
import { FaultGate } from './fault-gate.js';
import type { AcceptResult, FrontDoor, PeerInfo, ServerLimits } from './front-door.js';
import { InProcessTransport } from './in-process-transport.js';
import { resolveOptions, type EmbeddedServerOptions, type Logger, type ResolvedOptions } from './options.js';
import { RequestProcessor, type ZxidCounter } from './request-processor.js';
import { ServerConnection, type ConnectionHost, type ConnectionSink } from './server-connection.js';
import { ServerIntrospection, type NodeSnapshot, type SessionInfo } from './server-introspection.js';
import { SessionTable, type Session } from './session-table.js';
import { SessionWheel, monotonicClock, type WheelClock } from './session-wheel.js';
import { TcpListener, type ListenAddress, type ListenOptions } from './tcp-listener.js';
import { TlsListener } from './tls-listener.js';
import { WatchRegistry } from './watch-registry.js';

type ServerSession = Session<ServerConnection>;

export class EmbeddedServer implements ConnectionHost, FrontDoor {
  readonly name: string;
  readonly options: Readonly<ResolvedOptions>;
  readonly limits: ServerLimits;
  readonly logger: Logger | undefined;
  readonly introspection: ServerIntrospection;
  private readonly zxidCounter: ZxidCounter = { last: 0n };
  private readonly tree: DataTree;
  private readonly watches = new WatchRegistry();
  private readonly sessionTable = new SessionTable<ServerConnection>();
  private readonly processor: RequestProcessor;
  private readonly wheel: SessionWheel<ServerSession>;
  private readonly faults: FaultGate;
  private readonly connections = new Set<ServerConnection>();
  private readonly reaper: NodeJS.Timeout;
  private isClosed = false;
  /** Connections with output to deliver at the next flush. */
  private due: ServerConnection[] = [];
  private readonly listeners = new Set<TcpListener>();
  /** Every connection starts authenticated as its address (shared until an auth adds to it). */
  private readonly baseIds: readonly Id[];

  constructor(options: EmbeddedServerOptions = {}, private readonly clock: WheelClock = monotonicClock) {
    this.options = resolveOptions(options);
    this.name = this.options.name;
    this.limits = Object.freeze({ maxBufferBytes: this.options.maxBufferBytes });
    this.logger = this.options.logger;
    this.baseIds = Object.freeze([Object.freeze({ scheme: 'ip', id: this.options.clientAddress })]);
    this.tree = new DataTree(this.options.ttlEnabled);
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
    });
    this.reaper = setInterval(() => this.reap(), this.options.containerCheckIntervalMs);
    this.reaper.unref();
  }

  // ---- front doors ----

  /** A transport that reaches this server in-process, with no network and no serialization. */
  transport(): Transport {
    return new InProcessTransport(this);
  }

  /**
   * Serves ZooKeeper's wire protocol on TCP (see tcp-listener.ts); any ZooKeeper client can connect.
   * With `tls`, serves it on TLS instead (tls-listener.ts): a verified client certificate
   * authenticates the connection as `x509:<subject>`. Call it again for more listeners (plaintext
   * and TLS side by side). Resolves with the bound address (port 0 picks a free one). close() stops it.
   */
  async listen(options: ListenOptions = {}): Promise<ListenAddress> {
    this.ensureOpen();
    const listener = options.tls ? new TlsListener(this, options.tls, options.handshakeTimeoutMs) : new TcpListener(this);
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
      this.zxidCounter.last++; // createSession is a transaction
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
    if (conn.closing || this.isClosed) return;
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
    return this.processor.killSession(s.id);
  }

  // ---- ConnectionHost ----

  detach(conn: ServerConnection): void {
    this.connections.delete(conn);
    this.watches.removeAll(conn);
    if (conn.session.connection === conn) conn.session.connection = undefined;
    if (this.faults.armed) this.faults.forgetConnection(conn);
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
   * Closes every connection and stops every timer; pending restart() and pause() promises resolve.
   * The server cannot be used afterwards.
   */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    // Closing is not a partition: every client hears of it now.
    this.faults.close(this.sessionTable, () => this.abortAll('server closed'));
    clearInterval(this.reaper);
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
    if (this.isClosed) throw new ConnectionLossError(undefined, 'server closed');
    if (this.faults.refusing) throw new ConnectionLossError(undefined, 'connection refused (server restarting)');
  }

  private reap(): void {
    if (this.isClosed || (this.faults.armed && this.faults.halted)) return;
    if (this.tree.containers.size === 0 && this.tree.ttls.size === 0) return;
    for (const path of this.processor.reapCandidates(Date.now())) this.processor.reap(path);
  }
}

/** Creates an embedded server with ZooKeeper's semantics. */
export function createEmbeddedServer(options?: EmbeddedServerOptions): EmbeddedServer {
  return new EmbeddedServer(options);
}
