/**
 * The embedded server: a facade over ZooKeeper's semantics (semantics/), its front doors
 * (front-doors/), injected faults and introspection (ops/) and the data dir (storage/). Front doors
 * reach it through the FrontDoor interface (accept, receive); the dispatch of a request is
 * semantics/dispatch.ts, and what connections ask of the server is semantics/connection-host.ts.
 */
import type { ConnectParams, Id, Transport } from '@tenure/protocol';
import {
  AbortError,
  ConnectionLossError,
  IllegalStateError,
  OpCode,
  systemClock,
  unrefTimer,
  type Clock,
  type TimerHandle,
} from '@tenure/protocol';
import { ConnectionLimits } from './front-doors/connection-limits.js';
import type { AcceptResult, FrontDoor, PeerInfo, ServerLimits } from './front-doors/front-door.js';
import { InProcessTransport } from './front-doors/in-process-transport.js';
import { TcpListener, type ListenAddress, type ListenOptions } from './front-doors/tcp-listener.js';
import { TlsListener } from './front-doors/tls-listener.js';
import type { WebSocketAddress, WebSocketEndpointOptions } from './front-doors/websocket-endpoint.js';
import { WebSocketListener } from './front-doors/ws-listener.js';
import { FaultGate } from './ops/fault-gate.js';
import { ServerIntrospection, type NodeSnapshot, type SessionInfo } from './ops/server-introspection.js';
import { resolveOptions, type EmbeddedServerOptions, type Logger, type ResolvedOptions, type StorageEvent } from './options.js';
import { SaslAuthenticator } from './security/sasl-auth.js';
import { ServerConnections } from './semantics/connection-host.js';
import { DataTree } from './semantics/data-tree.js';
import { Dispatch } from './semantics/dispatch.js';
import { RequestProcessor, type ZxidCounter } from './semantics/request-processor.js';
import { ServerConnection, type ConnectionSink } from './semantics/server-connection.js';
import { SessionTable, type Session } from './semantics/session-table.js';
import { SessionWheel } from './semantics/session-wheel.js';
import { WatchRegistry } from './semantics/watch-registry.js';
import { ReplicatedFront } from './replicated/replicated-front.js';
import type { ReplicatedStore } from './replicated/replicated-store.js';
import { DataDirStorage } from './storage/data-dir-storage.js';
import { Durability, type StorageStats } from './storage/durability.js';
import { sessionPassword } from './storage/session-password.js';
import { StorageFailedError } from './storage/storage-errors.js';

type ServerSession = Session<ServerConnection>;

export class EmbeddedServer implements FrontDoor {
  readonly name: string;
  readonly options: Readonly<ResolvedOptions>;
  readonly limits: ServerLimits;
  readonly logger: Logger | undefined;
  readonly introspection: ServerIntrospection;
  /** maxClientCnxns, globalOutstandingLimit and the traffic counts metrics read (connection-limits.ts). */
  readonly connectionLimits: ConnectionLimits;
  private readonly zxidCounter: ZxidCounter = { last: 0n };
  private readonly tree: DataTree;
  private readonly processor: RequestProcessor;
  private readonly watches = new WatchRegistry();
  private readonly sessionTable: SessionTable<ServerConnection>;
  /** The data dir, or undefined for a server in memory (storage/). */
  private readonly storage: Durability | undefined;
  private readonly wheel: SessionWheel<ServerSession>;
  private readonly faults: FaultGate;
  /** What every connection asks of the server (semantics/connection-host.ts). */
  private readonly connections: ServerConnections;
  /** Serves one request (semantics/dispatch.ts). */
  private readonly dispatch: Dispatch;
  private reaper: TimerHandle | undefined = undefined;
  /** The clock of session expiry, the reaper, wall time (ctime, mtime, TTLs), handshake timeouts and injected faults. */
  readonly clock: Clock;
  /** Wall time and the clock's reading at construction: wall time moves with the clock. */
  private readonly wallAtStart = Date.now();
  private readonly clockAtStart: number;
  private isClosed = false;
  /** shutdown() began: no new handshakes. */
  private draining = false;
  private readonly listeners = new Set<TcpListener | WebSocketListener>();
  /** Every connection starts authenticated as its address (shared until an auth adds to it). */
  private readonly baseIds: readonly Id[];
  /** With a replicated store (createReplicatedServer): the tree mirrors the store, writes go to it. */
  private readonly replica: ReplicatedFront | undefined;

  constructor(options: EmbeddedServerOptions = {}, store?: ReplicatedStore) {
    this.options = resolveOptions(options);
    this.clock = options.clock ?? systemClock;
    const clock = this.clock;
    this.clockAtStart = clock.now();
    this.name = this.options.name;
    this.limits = Object.freeze({
      maxBufferBytes: this.options.maxBufferBytes,
      maxClientCnxns: this.options.maxClientCnxns,
      globalOutstandingLimit: this.options.globalOutstandingLimit,
    });
    this.connectionLimits = new ConnectionLimits(this.options.maxClientCnxns, this.options.globalOutstandingLimit);
    this.logger = this.options.logger;
    this.baseIds = Object.freeze([Object.freeze({ scheme: 'ip', id: this.options.clientAddress })]);
    const dir = this.options.storage === undefined ? undefined : new DataDirStorage(this.options.storage, this.options.ttlEnabled);
    // Recovered now (a corrupt dir throws DataDirCorruptError naming the file and offset).
    this.tree = dir?.recovered.tree ?? new DataTree(this.options.ttlEnabled);
    this.zxidCounter.last = dir?.recovered.lastZxid ?? 0n;
    this.sessionTable = new SessionTable<ServerConnection>(
      store !== undefined ? (id) => store.sessionPassword(id) : dir === undefined ? undefined : sessionPassword,
    );
    // On the process clock wall time is Date.now() itself; any other clock moves it (wallNow()).
    const wallNow = clock === systemClock ? Date.now : (): number => this.wallNow();
    const processor = (this.processor = new RequestProcessor(this.tree, this.watches, this.zxidCounter, this.options, wallNow));
    // With a replicated store the store expires sessions (a lease), never this wheel.
    this.wheel = new SessionWheel(this.options.tickMs, (due) => (store === undefined ? this.dispatch.due(due) : undefined), clock);
    this.faults = new FaultGate({
      clock,
      session: (id) => this.sessionTable.get(id),
      serve: (conn, request, token, oversize) => this.dispatch.serve(conn, request, token, oversize),
      expire: (s) => this.dispatch.expire(s),
    });
    this.connections = new ServerConnections(this.connectionLimits, this.watches, this.faults, this.zxidCounter, this.logger);
    this.storage =
      dir === undefined
        ? undefined
        : new Durability(dir, {
            visible: (zxid) => this.connections.durable(zxid),
            failed: () => {
              this.connections.storageFailed();
              this.connections.abortAll('storage failed');
            },
            logger: this.logger,
            onStorageEvent: this.options.onStorageEvent,
          });
    if (dir !== undefined) this.connections.durableZxid = dir.recovered.lastZxid;
    this.dispatch = new Dispatch({
      tree: this.tree,
      processor,
      zxid: this.zxidCounter,
      sessions: this.sessionTable,
      wheel: this.wheel,
      sasl: new SaslAuthenticator(this.options.sasl),
      faults: this.faults,
      options: this.options,
      log: dir,
      wallNow,
    });
    this.introspection = new ServerIntrospection({
      config: this.options,
      zxid: this.zxidCounter,
      tree: this.tree,
      sessions: this.sessionTable,
      wheel: this.wheel,
      connections: this.connections.open,
      clock,
      limits: this.connectionLimits,
      shared: store !== undefined,
    });
    this.replica =
      store === undefined
        ? undefined
        : new ReplicatedFront({
            store,
            tree: this.tree,
            watches: this.watches,
            zxid: this.zxidCounter,
            sessions: this.sessionTable,
            dispatch: this.dispatch,
            options: this.options,
            wallNow,
            unreachable: () => this.connections.abortAll('the store is unreachable'),
          });
    if (store === undefined) this.armReaper();
    if (this.storage !== undefined) this.startStorage(this.storage);
  }

  /** Loads the replicated store's namespace into the mirror (createReplicatedServer). */
  async openReplica(): Promise<void> {
    await this.replica?.open();
    this.armReaper();
  }

  /** Wall time on the server's clock: Date.now() at construction plus the clock's advance since. */
  private wallNow(): number {
    return Math.floor(this.wallAtStart + (this.clock.now() - this.clockAtStart));
  }

  /** Restores the sessions (their clocks start now) and starts the log. */
  private startStorage(storage: Durability): void {
    for (const [id, timeoutMs] of storage.dir.recovered.sessions) {
      this.wheel.touch(this.sessionTable.restore(id, timeoutMs), timeoutMs);
    }
    storage.start(() => {
      const sessions = new Map<bigint, number>();
      for (const s of this.sessionTable) if (!s.closing) sessions.set(s.id, s.timeoutMs);
      return { tree: this.tree, sessions };
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
      if (result?.kind === 'connected' && !result.connection.closed) this.connections.add(result.connection, address);
      else this.connectionLimits.release(address);
    }
  }

  private async handshake(params: ConnectParams, sink: ConnectionSink, peer: PeerInfo | undefined): Promise<AcceptResult> {
    const { signal } = params;
    await (this.faults.armed ? this.faults.handshake(params.sessionId, signal) : undefined);
    if (signal?.aborted) throw new AbortError('connect aborted');
    this.ensureServing();
    if (this.replica !== undefined) return this.replicatedHandshake(params, sink, peer);
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
        this.dispatch.log(session.id, zxid, OpCode.createSession, this.wallNow(), { type: OpCode.createSession, timeOut: timeoutMs });
        // The client hears of its session only once the session is on disk.
        await this.storage.durable(zxid);
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
    const conn = new ServerConnection(this.connections, session, sink, o.clientAddress, ids);
    session.connection = conn;
    return { kind: 'connected', connection: conn, timeoutMs };
  }

  /** The handshake with a replicated store: sessions are the store's (any server re-attaches any of them). */
  private async replicatedHandshake(params: ConnectParams, sink: ConnectionSink, peer: PeerInfo | undefined): Promise<AcceptResult> {
    const replica = this.replica!;
    // As a ZooKeeper server without a quorum: no session is served while the store is out of reach.
    if (!replica.reachable) throw new ConnectionLossError(undefined, 'the store is unreachable');
    await replica.catchUp(params.lastZxidSeen);
    this.ensureServing();
    if (params.lastZxidSeen > this.zxidCounter.last) {
      throw new ConnectionLossError(undefined, `client has seen zxid ${params.lastZxidSeen}, this server is at ${this.zxidCounter.last}`);
    }
    const o = this.options;
    const timeoutMs = Math.min(o.maxSessionTimeoutMs, Math.max(o.minSessionTimeoutMs, Math.trunc(params.timeoutMs) || 0));
    let session: ServerSession | undefined;
    if (params.sessionId === 0n) session = await replica.createSession(timeoutMs);
    else {
      session = this.sessionTable.validate(params.sessionId, Buffer.from(params.passwd ?? []));
      if (session === undefined) return { kind: 'expired' };
      session.connection?.abort('session re-attached on another connection');
      await replica.claimSession(session);
    }
    this.ensureServing();
    if (session.closing) return { kind: 'expired' };
    const ids = peer?.x509Subject === undefined ? this.baseIds : [{ scheme: 'x509', id: peer.x509Subject }, ...this.baseIds];
    const conn = new ServerConnection(this.connections, session, sink, o.clientAddress, ids);
    session.connection = conn;
    return { kind: 'connected', connection: conn, timeoutMs: session.timeoutMs };
  }

  /**
   * A request arrived on `conn`. `token` comes back with its reply. `oversize` marks a request
   * larger than maxBufferBytes: the connection closes without an answer, as ZooKeeper does.
   */
  receive(conn: ServerConnection, request: unknown, token: unknown, oversize = false): void {
    if (conn.closing || this.isClosed || this.storage?.failure !== undefined) return;
    if (!oversize) this.connectionLimits.received(conn, (request as { type?: number } | null)?.type ?? -1);
    if (this.faults.armed && this.faults.holds(conn, request, token, oversize)) return;
    if (this.replica !== undefined) this.replica.serve(conn, request, token, oversize);
    else this.dispatch.serve(conn, request, token, oversize);
  }

  // ---- storage (storage/) ----

  /** The storage's failure, when the log could not be written or synced. */
  get failure(): Error | undefined {
    return this.storage?.failure;
  }

  /** Group commits, txns logged and snapshots taken since open (with a data dir). */
  get storageStats(): StorageStats | undefined {
    return this.storage?.stats;
  }

  /** Listens to the storage's events (as `onStorageEvent`) besides the option; returns the unsubscribe. */
  onStorage(listener: (event: StorageEvent) => void): () => void {
    return this.storage?.onStorage(listener) ?? (() => false);
  }

  /** Takes a snapshot now (with a data dir); resolves when it is on disk. */
  async snapshot(): Promise<void> {
    await this.storage?.dir.snapshot();
  }

  /** Purges old snapshots and logs as `autopurge` says (with a data dir). */
  purge(): { snapshots: string[]; logs: string[] } {
    return this.storage?.dir.purgeNow() ?? { snapshots: [], logs: [] };
  }

  // ---- fault injection (fault-gate.ts) ----

  /**
   * Closes every connection and refuses new ones for `refuseMs`, then serves again with the
   * same tree, sessions and zxid. Session clocks keep running. Resolves once serving again.
   */
  restart(refuseMs = 0): Promise<void> {
    this.ensureOpen();
    return this.faults.restart(refuseMs, () => this.connections.abortAll('server restarting'));
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

  /**
   * Presents a dynamic ensemble config in /zookeeper/config, as a ZooKeeper 3.5+ ensemble holds it
   * after a reconfig: the `server.N=host:q:e:role;clientHost:clientPort` lines, then
   * `version=<hex zxid>`; data watchers get NodeDataChanged. For tests of clients that follow the
   * ensemble (one embedded server behind several addresses, e.g. FaultProxies, plays the members).
   * Returns the version. Not with `storage` (the change is not logged): IllegalStateError there.
   */
  setEnsembleConfig(servers: readonly string[]): string {
    this.ensureOpen();
    if (this.storage !== undefined) throw new IllegalStateError('setEnsembleConfig: not with a data dir (the change would not be logged)');
    return this.processor.announceConfig(servers);
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
        await this.storage.dir.close();
      } catch (err) {
        this.storage.fail(err instanceof Error ? err : new StorageFailedError(err));
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    // Closing is not a partition: every client hears of it now.
    this.faults.close(this.sessionTable, () => this.connections.abortAll('server closed'));
    if (this.reaper !== undefined) this.clock.clearTimeout(this.reaper);
    this.reaper = undefined;
    this.wheel.close();
    this.sessionTable.clear();
    await this.replica?.close();
    await Promise.all([...this.listeners].map((l) => l.close()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---- internals ----

  private ensureOpen(): void {
    if (this.isClosed) throw new IllegalStateError('the embedded server is closed');
  }

  private ensureServing(): void {
    if (this.isClosed || this.draining) throw new ConnectionLossError(undefined, 'server closed');
    if (this.storage?.failure !== undefined) throw new ConnectionLossError(undefined, 'server storage failed');
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
    if (this.replica !== undefined) this.replica.reap().catch(() => undefined);
    else this.dispatch.reap();
  }
}

/**
 * Creates an embedded server whose tree, sessions and sequence counters live in a replicated store
 * (@tenure/etcd's etcd store): it mirrors the store's namespace, serves reads from the mirror and
 * commits writes to the store. Several servers over one store serve one namespace. Resolves once
 * the namespace is loaded. Fault injection (restart, pause, silence...) is not served in this form.
 */
export async function createReplicatedServer(store: ReplicatedStore, options?: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const server = new EmbeddedServer(options, store);
  try {
    await server.openReplica();
  } catch (err) {
    await server.close();
    throw err;
  }
  return server;
}

/** Creates an embedded server with ZooKeeper's semantics. */
export function createEmbeddedServer(options?: EmbeddedServerOptions): EmbeddedServer {
  return new EmbeddedServer(options);
}
