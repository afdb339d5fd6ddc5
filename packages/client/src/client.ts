/**
 * The client: what CuratorFramework is to JVM services. One session over any transport, Curator's
 * connection states, retries, and ZooKeeper's full operation API with namespaces, protected
 * creates, guaranteed deletes, transactions and watches.
 *
 * A `Client` is a view: the root view (createClient) owns the session; `usingNamespace` views
 * share it with another path prefix.
 */
import {
  BadArgumentsError,
  ClosedError,
  CreateMode,
  ErrorCode,
  KeeperError,
  NoNodeError,
  NoWatcherError,
  OpCode,
  TimeoutError,
  WatcherType,
  isSequentialMode,
  validatePath,
  type ACL,
  type ClientInfo,
  type GetDataResponse,
  type Reply,
  type Request,
  type ResponseFor,
  type StatResponse,
  type Stat,
  type AuthFailedError,
  InvalidArgumentError,
  IllegalStateError,
  asError,
} from '@tenure/protocol';
import type { EventEmitter } from 'eventemitter3';
import type { TlsSetting } from '@tenure/zookeeper';
import type { Clock } from '@tenure/protocol';
import type { ClientCore, ClientEvents } from './client-core.js';
import { dataSize, requestChannel, traced } from './diagnostics.js';
import { ConnectionState, isErrorStateFor, type ErrorPolicy } from './connection-state.js';
import { checkModeAndTtl, createRequest, createWithParents, ensurePath, mapCreate, type CreateSpec, type Exec } from './create-node.js';
import { deleteTree, type ExecAny } from './delete-node.js';
import { checkPath } from './path-check.js';
import { aclFor } from './options.js';
import { PersistentWatchHandle, type PersistentWatch } from './persistent-watch.js';
import { newProtectedId, protectedCreate } from './protected-create.js';
import { checkRequestSize, toBuffer, type NodeData } from './request-size.js';
import { backoffMs, type RetryPolicy } from './retry-policies.js';
import { Transaction } from './transaction.js';
import type { PersistentWatchEvent, WatchCallback } from './watch-events.js';
import { WaitScope, type WaitOptions } from './wait-scope.js';
import { WatchTracker } from './watch-tracker.js';
import { childLogger, type Logger } from './logger.js';
import { compressed, decompressReads } from './compressed-ops.js';
import { CONFIG_NODE, type EnsembleConfig } from './ensemble-config.js';
import { configRequest, mapConfig, reconfigRequest, type ReconfigOptions } from './ensemble-ops.js';
import { parseHostList as parseConnectString } from './host-list.js';
import { NO_NAMESPACE, Namespace } from './namespace.js';
import { runDeleteTree, runWrite, type RetryAmbiguousWrites } from './write-outcome.js';

export type { WaitOptions } from './wait-scope.js';

const EMPTY = Buffer.alloc(0);

export interface OperationOptions {
  /** Aborts the operation (it rejects with AbortError; a request already sent may still apply). */
  signal?: AbortSignal;
  /** For a write whose reply is lost: the client's `retryAmbiguousWrites` for this call only. */
  retryAmbiguousWrites?: RetryAmbiguousWrites;
}

export interface CreateOptions extends OperationOptions {
  /** Default PERSISTENT. */
  mode?: CreateMode;
  /** Default: the aclProvider's, or OPEN_ACL_UNSAFE. */
  acl?: readonly ACL[];
  /** For the TTL modes. */
  ttlMs?: number;
  /** Create missing parents as persistent nodes. */
  createParents?: boolean;
  /** Create missing parents as containers (deleted by the server once empty). */
  createParentContainers?: boolean;
  /**
   * Curator's protected mode: the name becomes `_c_<uuid>-<name>` and a lost reply is recovered
   * by finding the node. `true` draws a new uuid; a string reuses that uuid (to re-create a node
   * under the same name).
   */
  protection?: boolean | string;
  /** Compress the data with the client's `compression` provider (Curator's `.compressed()`); default its `byDefault`. */
  compressed?: boolean;
}

export interface CreateResult {
  /** The created path (with the sequence suffix and protection prefix, if any). */
  path: string;
  stat: Stat;
}

export interface DeleteOptions extends OperationOptions {
  /** Default -1: any version. */
  version?: number;
  /** Delete the whole subtree first. */
  deletingChildren?: boolean;
  /**
   * Retry in the background after connection problems until the delete succeeds or the session
   * ends; the promise settles then. See `client.pendingDeletes`.
   */
  guaranteed?: boolean;
}

export interface WatchOptions extends OperationOptions {
  /** A one-shot watch: called once with the next change (kept across reconnects). */
  watch?: WatchCallback;
}

export interface VersionOptions extends OperationOptions {
  /** Default -1: any version. */
  version?: number;
}

export interface SetDataOptions extends VersionOptions {
  /** Compress the data with the client's `compression` provider (Curator's `.compressed()`); default its `byDefault`. */
  compressed?: boolean;
}

export interface GetDataOptions extends WatchOptions {
  /**
   * Decompress the data with the client's `compression` provider (Curator's `.decompressed()`);
   * default its `byDefault`. Data it cannot decompress rejects with DecompressionError (the path,
   * code 'BAD_COMPRESSED_DATA'); a node with no data reads as no data.
   */
  decompressed?: boolean;
}

export interface AddWatchOptions extends OperationOptions {
  /** Watch the whole subtree (PERSISTENT_RECURSIVE); default false (PERSISTENT). */
  recursive?: boolean;
  /** Receive events through this callback instead of the async iterator. */
  listener?: (event: PersistentWatchEvent) => void;
}

export interface RemoveWatchesOptions extends OperationOptions {
  /** Only this one-shot callback or persistent watch; default every watcher of the type on the path. */
  watcher?: WatchCallback | PersistentWatch;
  /** Remove on the client only (e.g. while disconnected). */
  local?: boolean;
  /** No NoWatcherError when nothing matched. */
  quietly?: boolean;
}

export type MultiReadOp = { type: 'getData'; path: string; decompressed?: boolean } | { type: 'getChildren'; path: string };
export type MultiReadResult =
  | { type: 'getData'; path: string; data: Buffer; stat: Stat }
  | { type: 'getChildren'; path: string; children: string[] }
  | { type: 'error'; path: string; error: KeeperError };

/** Shared reply mappers for the common calls without a watch (no closure per call). */
function mapGetData(r: Reply<GetDataResponse>, path: string | undefined): { data: Buffer; stat: Stat } {
  if (r.err !== 0) throw KeeperError.from(r.err, path);
  const res = r.response!;
  return { data: res.data ?? EMPTY, stat: res.stat };
}

function mapExists(r: Reply<StatResponse>, path: string | undefined): Stat | null {
  if (r.err === 0) return r.response!.stat;
  if (r.err === ErrorCode.NONODE) return null;
  throw KeeperError.from(r.err, path);
}

/** A setData or setACL reply's Stat. */
function stat(r: Reply<StatResponse>, path: string | undefined): Stat {
  if (r.err !== 0) throw KeeperError.from(r.err, path);
  return r.response!.stat;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const CONNECTED_STATES: readonly ConnectionState[] = [ConnectionState.CONNECTED, ConnectionState.RECONNECTED, ConnectionState.READ_ONLY];

export class Client {
  /** @internal */
  constructor(
    private readonly core: ClientCore,
    private readonly ns: Namespace,
    private readonly isRoot: boolean,
    /** Set on a `trackingWatches()` view: the watches `removeAllWatches()` takes back. */
    private readonly tracker: WatchTracker | null = null,
  ) {}

  // ---- events and state ----

  on<E extends keyof ClientEvents>(event: E, listener: ClientEvents[E]): this {
    this.core.emitter.on(event, listener as EventEmitter.EventListener<ClientEvents, E>);
    return this;
  }
  once<E extends keyof ClientEvents>(event: E, listener: ClientEvents[E]): this {
    this.core.emitter.once(event, listener as EventEmitter.EventListener<ClientEvents, E>);
    return this;
  }
  off<E extends keyof ClientEvents>(event: E, listener?: ClientEvents[E]): this {
    this.core.emitter.off(event, listener as EventEmitter.EventListener<ClientEvents, E> | undefined);
    return this;
  }

  /** The latest connection state; null before the first connection. */
  get state(): ConnectionState | null {
    return this.core.states.state;
  }
  /** True while a connection is up. */
  get isConnected(): boolean {
    return this.core.session.connection !== null;
  }
  /** The current session id, 0n while there is none (before connecting, and between LOST and RECONNECTED). */
  get sessionId(): bigint {
    return this.core.session.sessionId;
  }
  /** The session password (for tooling); a copy. */
  get sessionPassword(): Buffer {
    return Buffer.from(this.core.session.passwd);
  }
  /** Every session id this client held before the current one, oldest first. */
  get previousSessionIds(): readonly bigint[] {
    return this.core.session.previousSessionIds;
  }
  /** The timeout the server granted (0 before the first connection). */
  get negotiatedTimeoutMs(): number {
    return this.core.session.negotiatedTimeoutMs;
  }
  /** The server of the live connection, or null. */
  get connectedServer(): string | null {
    return this.core.session.connectedServer;
  }
  /** This view's namespace without the leading slash ('' for none). */
  get namespace(): string {
    return this.ns.name;
  }
  /** Paths whose guaranteed delete is still being retried. */
  get pendingDeletes(): readonly string[] {
    return this.core.deletes.paths.filter((p) => this.ns.contains(p)).map((p) => this.ns.fromServer(p));
  }
  get closed(): boolean {
    return this.core.closed;
  }
  get errorPolicy(): ErrorPolicy {
    return this.core.errorPolicy;
  }
  get sessionTimeoutMs(): number {
    return this.core.sessionTimeoutMs;
  }
  get connectionTimeoutMs(): number {
    return this.core.connectionTimeoutMs;
  }
  get retryPolicy(): RetryPolicy {
    return this.core.retryPolicy;
  }
  /** The clock behind the client's timers, for recipes that time things alongside it. */
  get clock(): Clock {
    return this.core.clock;
  }

  /** Whether recipes should treat `state` as an error under this client's errorPolicy. */
  isErrorState(state: ConnectionState): boolean {
    return isErrorStateFor(this.core.errorPolicy, state);
  }

  /**
   * Resolves with the state once the client is in `state` (or one of `states`): at once if it is
   * now, otherwise at the next matching stateChanged. CONNECTED means "connected": RECONNECTED
   * satisfies it too. Rejects with TimeoutError, AbortError, or ClosedError if the client closes.
   */
  waitForState(state: ConnectionState | readonly ConnectionState[], options: WaitOptions = {}): Promise<ConnectionState> {
    const targets = typeof state === 'string' ? [state] : [...state];
    if (targets.includes(ConnectionState.CONNECTED)) targets.push(ConnectionState.RECONNECTED);
    const current = this.core.states.state;
    if (current !== null && targets.includes(current)) return Promise.resolve(current);
    if (this.core.closed) return Promise.reject(new ClosedError('client'));
    const scope = new WaitScope('waitForState', options, {
      clock: this.core.clock,
      closed: this.core.closedSignal,
      timeoutError: (ms) => new TimeoutError(`state ${targets.join('|')} not reached within ${ms} ms`, ms),
    });
    if (scope.aborted) return Promise.reject(scope.reason);
    return new Promise<ConnectionState>((resolve, reject) => {
      const unobserve = this.core.states.observe((s) => {
        if (!targets.includes(s)) return;
        finish();
        resolve(s);
      });
      const onOver = (): void => {
        finish();
        reject(scope.reason);
      };
      const finish = (): void => {
        unobserve();
        scope.signal.removeEventListener('abort', onOver);
        scope.dispose();
      };
      scope.signal.addEventListener('abort', onOver, { once: true });
    });
  }

  // ---- the recipe kit ----

  /**
   * Aborts, with a ClosedError reason, when the client closes. One signal for the client's whole
   * life (it exists before start()), shared by its namespace and tracking views.
   */
  get closedSignal(): AbortSignal {
    return this.core.closedSignal;
  }

  /** The client's logger (silent unless one was injected); recipes log through `childLogger`. */
  get logger(): Logger {
    return this.core.logger;
  }

  /** A child of the client's logger with `bindings` (e.g. `{ recipe: 'mutex', path }`). */
  childLogger(bindings: Record<string, unknown>): Logger {
    return childLogger(this.core.logger, bindings);
  }

  /**
   * The one waiting primitive: a scope whose `signal` joins `options.signal`, `options.timeoutMs`
   * on the client's clock and the client's close; its reason is the typed error (AbortError,
   * TimeoutError, ClosedError). Dispose it (`using`, or `dispose()`) when the wait ends.
   * `what` names the wait in its errors.
   */
  waitScope(options: WaitOptions | undefined, what: string): WaitScope {
    return new WaitScope(what, options, { clock: this.core.clock, closed: this.core.closedSignal });
  }

  /**
   * Waits for `task` (a promise, or a function given the wait's signal) under `options`: it
   * settles as the task does, or rejects with TimeoutError, AbortError or ClosedError.
   */
  async wait<T>(
    task: PromiseLike<T> | ((signal: AbortSignal) => PromiseLike<T>),
    options: WaitOptions | undefined,
    what: string,
  ): Promise<T> {
    using scope = this.waitScope(options, what);
    scope.check();
    return await scope.race(typeof task === 'function' ? task(scope.signal) : task);
  }

  /**
   * The pause before attempt `attempt` (0, 1, ...) of work a recipe retries until it succeeds or
   * closes, under `policy` (default: the client's retry policy). See RetryPolicy.delayMs.
   */
  backoffMs(attempt: number, policy: RetryPolicy = this.core.retryPolicy): number {
    return backoffMs(policy, attempt);
  }

  /**
   * A view of this client (same session and namespace) that remembers every watch set through it:
   * `removeAllWatches()` takes them all back, on the server too (Curator's
   * newWatcherRemoveCuratorFramework). A recipe sets its watches through one and calls it on close.
   */
  trackingWatches(): Client {
    return new Client(this.core, this.ns, false, new WatchTracker(this.core.registry));
  }

  /**
   * On a `trackingWatches()` view: removes every watch set through it that is still registered
   * (one-shot callbacks get their *WatchRemoved event; persistent watches close) and re-syncs the
   * server's watches on those paths. Elsewhere it does nothing. Never rejects.
   */
  async removeAllWatches(): Promise<void> {
    const tracker = this.tracker;
    if (tracker === null) return;
    const { paths, persistent } = tracker.takeAll();
    await Promise.all([
      ...paths.map((full) => this.core.resyncWatches(full, undefined).catch(() => {})),
      ...persistent.map((w) => w.close().catch(() => {})),
    ]);
  }

  /** How many watches set through this tracking view are still registered (0 on other views). */
  get trackedWatchCount(): number {
    return this.tracker?.size ?? 0;
  }

  /**
   * The servers this client connects to: its transport's (a connect string's hosts), then the
   * ensemble's client addresses as tracking sees the config change (see `hostsChanged`).
   */
  get hosts(): readonly string[] {
    return this.core.hosts;
  }

  // ---- dynamic ensembles (ZooKeeper 3.5+) ----

  /**
   * The ensemble's config, from /zookeeper/config read outside any chroot and namespace (as
   * Curator's getConfig): members, version (hex) and the raw text. A standalone server's is empty.
   * A `watch` fires once when the config changes.
   */
  getConfig(options?: WatchOptions): Promise<EnsembleConfig> {
    return requestChannel.hasSubscribers
      ? traced('getConfig', CONFIG_NODE, () => this.#getConfig(options), this.core)
      : this.#getConfig(options);
  }

  #getConfig(options?: WatchOptions): Promise<EnsembleConfig> {
    const watch = options?.watch;
    return this.core.run(configRequest(watch !== undefined), options?.signal, CONFIG_NODE, mapConfig, (r) => {
      if (r.err === 0 && watch) {
        this.core.registry.addOneShot('data', CONFIG_NODE, watch, NO_NAMESPACE);
        this.tracker?.addOneShot('data', CONFIG_NODE, watch);
      }
    });
  }

  /**
   * ZooKeeper's reconfig: incremental (`joining` server lines, `leaving` ids) or the whole new
   * membership (`members`), applied only at version `fromConfig` when given. Resolves to the new
   * config. Fails with ReconfigDisabledError (reconfigEnabled=false), ReconfigInProgressError,
   * NewConfigNoQuorumError, BadVersionError (fromConfig is stale), NoAuthError (not a super user),
   * UnimplementedError (a standalone server with reconfig enabled). Not retried after a lost reply.
   */
  reconfig(options: ReconfigOptions): Promise<EnsembleConfig> {
    return requestChannel.hasSubscribers
      ? traced('reconfig', CONFIG_NODE, () => this.#reconfig(options), this.core)
      : this.#reconfig(options);
  }

  #reconfig(options: ReconfigOptions): Promise<EnsembleConfig> {
    try {
      const req = reconfigRequest(options);
      // A reconfig is not idempotent (a second join fails, a second leave too): one attempt.
      return this.core.once(req, options.signal, CONFIG_NODE, mapConfig, this.core.session.epoch);
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  /**
   * Replaces the host list with `connectString`'s hosts (its chroot, if any, is ignored: the
   * client keeps its own), as the Java client's updateServerList: sessions rebalance onto the new
   * list by ZooKeeper's probabilistic rule, so some move to added servers and a client whose
   * server left moves off it, keeping its session. Emits `hostsChanged`.
   */
  updateServerList(connectString: string): void {
    if (this.core.closed) throw new ClosedError('client');
    if (!this.core.hostListed) throw new IllegalStateError('updateServerList: this transport has no host list (in-process, WebSocket)');
    const { hosts } = parseConnectString(connectString);
    this.core.setHosts(hosts, 'updateServerList');
  }

  // ---- lifecycle ----

  /**
   * Connects. Resolves once connected (after SASL, with the `sasl` option); rejects with
   * TimeoutError after `timeoutMs` (default connectionTimeoutMs) or AbortError, and with TlsError
   * (host and reason) once every host has refused the TLS handshake. If it rejects before any
   * connection, the client stops trying and may be started again (after `updateTls`, say). With
   * `sasl`, a refusal (wrong password, unknown user) rejects at once with AuthFailedError, for good.
   */
  async start(options: WaitOptions = {}): Promise<void> {
    const core = this.core;
    if (core.authFailure) throw core.authFailure;
    let onTls: ((e: Error) => void) | undefined;
    // Every host refused TLS: that answer, not a timeout later.
    const refused = new Promise<never>((_, reject) => core.emitter.once('tlsError', (onTls = reject)));
    core.start();
    // A SASL refusal ends the wait at once: the client will not connect.
    const signal = options.signal ? AbortSignal.any([options.signal, core.authFailedSignal]) : core.authFailedSignal;
    try {
      await Promise.race([
        this.waitForState(CONNECTED_STATES, { ...options, signal, timeoutMs: options.timeoutMs ?? core.connectionTimeoutMs }),
        refused,
      ]);
    } catch (err) {
      // Read again: the SASL exchange may have set it meanwhile (TypeScript still narrows it to null).
      const authFailure = core.authFailure as AuthFailedError | null;
      if (authFailure) throw authFailure;
      await core.abandonStart();
      throw err;
    } finally {
      core.emitter.off('tlsError', onTls);
    }
  }

  /**
   * New TLS options (or a function returning them) for connections opened from now on, e.g. a
   * renewed client certificate; the open connection keeps its own. A wait after refused
   * handshakes ends at once. Throws TypeError on a client created without `tls`.
   */
  updateTls(tls: TlsSetting): void {
    this.core.updateTls(tls);
  }

  /**
   * Closes the session (its ephemerals and watches go at once on the server), ends persistent
   * watches, stops every timer. On a namespace view this does nothing: the root client owns the session.
   */
  async close(): Promise<void> {
    if (this.isRoot) await this.core.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** A view of the same session with another namespace (absolute, as in Curator; '' for none). */
  usingNamespace(namespace: string | null): Client {
    return new Client(this.core, new Namespace(namespace), false, this.tracker);
  }

  // ---- reads ----

  /** The node's Stat, or null when it does not exist. A `watch` fires on its creation, change or deletion. */
  exists(path: string, options?: WatchOptions): Promise<Stat | null> {
    return requestChannel.hasSubscribers
      ? traced('exists', path, () => this.#exists(path, options), this.core)
      : this.#exists(path, options);
  }

  #exists(path: string, options?: WatchOptions): Promise<Stat | null> {
    try {
      const full = this.full(path);
      const watch = options?.watch;
      if (watch === undefined) return this.core.run({ type: OpCode.exists, path: full, watch: false }, options?.signal, path, mapExists);
      return this.core.run({ type: OpCode.exists, path: full, watch: true }, options?.signal, path, mapExists, (r) => {
        if (r.err === 0) this.addOneShot('data', full, watch);
        else if (r.err === ErrorCode.NONODE) this.addOneShot('exist', full, watch);
      });
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  getData(path: string, options?: GetDataOptions): Promise<{ data: Buffer; stat: Stat }> {
    const read = requestChannel.hasSubscribers
      ? traced('getData', path, () => this.#getData(path, options), this.core)
      : this.#getData(path, options);
    const compression = this.core.compression;
    if (!compression.applies(options?.decompressed)) return read;
    return read.then(async (r) => ({ data: await compression.decompress(path, r.data), stat: r.stat }));
  }

  #getData(path: string, options?: WatchOptions): Promise<{ data: Buffer; stat: Stat }> {
    try {
      const full = this.full(path);
      const watch = options?.watch;
      if (watch === undefined) return this.core.run({ type: OpCode.getData, path: full, watch: false }, options?.signal, path, mapGetData);
      return this.core.run({ type: OpCode.getData, path: full, watch: true }, options?.signal, path, mapGetData, (r) => {
        if (r.err === 0) this.addOneShot('data', full, watch);
      });
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  /** The children's names (unsorted) and the parent's Stat. A `watch` fires when the children change or the node goes. */
  getChildren(path: string, options?: WatchOptions): Promise<{ children: string[]; stat: Stat }> {
    return requestChannel.hasSubscribers
      ? traced('getChildren', path, () => this.#getChildren(path, options), this.core)
      : this.#getChildren(path, options);
  }

  #getChildren(path: string, options?: WatchOptions): Promise<{ children: string[]; stat: Stat }> {
    try {
      const full = this.full(path);
      const watch = options?.watch;
      return this.core.run(
        { type: OpCode.getChildren2, path: full, watch: watch !== undefined },
        options?.signal,
        path,
        (r) => {
          if (r.err !== 0) throw KeeperError.from(r.err, path);
          return r.response!;
        },
        watch &&
          ((r) => {
            if (r.err === 0) this.addOneShot('child', full, watch);
          }),
      );
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  getACL(path: string, options?: OperationOptions): Promise<{ acl: ACL[]; stat: Stat }> {
    return requestChannel.hasSubscribers
      ? traced('getACL', path, () => this.#getACL(path, options), this.core)
      : this.#getACL(path, options);
  }

  #getACL(path: string, options?: OperationOptions): Promise<{ acl: ACL[]; stat: Stat }> {
    return this.simple(
      path,
      (full) => ({ type: OpCode.getACL, path: full }),
      options,
      (r) => r.response!,
    );
  }

  /** Descendants of `path`, not counting the node itself. */
  getAllChildrenNumber(path: string, options?: OperationOptions): Promise<number> {
    return requestChannel.hasSubscribers
      ? traced('getAllChildrenNumber', path, () => this.#getAllChildrenNumber(path, options), this.core)
      : this.#getAllChildrenNumber(path, options);
  }

  #getAllChildrenNumber(path: string, options?: OperationOptions): Promise<number> {
    return this.simple(
      path,
      (full) => ({ type: OpCode.getAllChildrenNumber, path: full }),
      options,
      (r) => r.response!.totalNumber,
    );
  }

  /** This session's ephemerals whose path starts with `prefixPath` (default: all in the namespace). */
  getEphemerals(prefixPath = '/', options?: OperationOptions): Promise<string[]> {
    return requestChannel.hasSubscribers
      ? traced('getEphemerals', prefixPath, () => this.#getEphemerals(prefixPath, options), this.core)
      : this.#getEphemerals(prefixPath, options);
  }

  #getEphemerals(prefixPath = '/', options?: OperationOptions): Promise<string[]> {
    try {
      if (typeof prefixPath !== 'string' || !prefixPath.startsWith('/')) validatePath(prefixPath);
      const ns = this.ns;
      const prefix = ns.prefix === '' ? prefixPath : prefixPath === '/' ? ns.prefix : ns.prefix + prefixPath;
      return this.simple(
        'getEphemerals',
        () => ({ type: OpCode.getEphemerals, prefixPath: prefix }),
        options,
        (r) => r.response!.ephemerals.filter((p) => ns.contains(p)).map((p) => ns.fromServer(p)),
        false,
      );
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  /** Several getData / getChildren in one request (ZooKeeper 3.6+); each op succeeds or fails on its own. */
  multiRead(ops: readonly MultiReadOp[], options?: OperationOptions): Promise<MultiReadResult[]> {
    const read = requestChannel.hasSubscribers
      ? traced('multiRead', undefined, () => this.#multiRead(ops, options), this.core)
      : this.#multiRead(ops, options);
    const compression = this.core.compression;
    if (!ops.some((op) => op.type === 'getData' && compression.applies(op.decompressed))) return read;
    return read.then((results) => decompressReads(compression, ops, results));
  }

  #multiRead(ops: readonly MultiReadOp[], options?: OperationOptions): Promise<MultiReadResult[]> {
    try {
      if (ops.length === 0) return Promise.resolve([]);
      const reqOps = ops.map((op) => {
        const path = this.full(op.path);
        if (op.type === 'getData') return { type: OpCode.getData, path, watch: false } as const;
        if (op.type === 'getChildren') return { type: OpCode.getChildren, path, watch: false } as const;
        throw new InvalidArgumentError(`multiRead: unknown op type ${String((op as { type: unknown }).type)}`);
      });
      return this.simple(
        'multiRead',
        () => ({ type: OpCode.multiRead, ops: reqOps }),
        options,
        (r) =>
          r.response!.results.map((res, i): MultiReadResult => {
            const path = ops[i]!.path;
            if (res.type === OpCode.getData) return { type: 'getData', path, data: res.data ?? EMPTY, stat: res.stat };
            if (res.type === OpCode.getChildren) return { type: 'getChildren', path, children: res.children };
            const code = res.type === OpCode.error ? res.err : ErrorCode.MARSHALLINGERROR;
            return { type: 'error', path, error: KeeperError.from(code, path) };
          }),
        false,
      );
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  /** The identities the server associates with this connection (ZooKeeper 3.7+). */
  whoAmI(options?: OperationOptions): Promise<ClientInfo[]> {
    return requestChannel.hasSubscribers ? traced('whoAmI', undefined, () => this.#whoAmI(options), this.core) : this.#whoAmI(options);
  }

  #whoAmI(options?: OperationOptions): Promise<ClientInfo[]> {
    return this.simple(
      'whoAmI',
      () => ({ type: OpCode.whoAmI }),
      options,
      (r) => r.response!.clientInfo,
      false,
    );
  }

  /** Waits until the server this client talks to has caught up with the leader on `path`. */
  sync(path: string, options?: OperationOptions): Promise<void> {
    return requestChannel.hasSubscribers ? traced('sync', path, () => this.#sync(path, options), this.core) : this.#sync(path, options);
  }

  #sync(path: string, options?: OperationOptions): Promise<void> {
    return this.simple(
      path,
      (full) => ({ type: OpCode.sync, path: full }),
      options,
      () => undefined,
    );
  }

  // ---- writes ----

  create(path: string, data?: NodeData | null, options: CreateOptions = {}): Promise<CreateResult> {
    if (this.core.compression.applies(options.compressed)) {
      return compressed(this.core.compression, path, data, 'create', (buf) => this.create(path, buf, { ...options, compressed: false }));
    }
    return requestChannel.hasSubscribers
      ? traced('create', path, () => this.#create(path, data, options), this.core, dataSize(data))
      : this.#create(path, data, options);
  }

  #create(path: string, data?: NodeData | null, options: CreateOptions = {}): Promise<CreateResult> {
    try {
      const core = this.core;
      const ns = this.ns;
      const mode = options.mode ?? CreateMode.PERSISTENT;
      checkPath(path, isSequentialMode(mode));
      const ttl = checkModeAndTtl(path, mode, options.ttlMs);
      const full = ns.toServer(path);
      const acl = options.acl ?? aclFor(core.aclProvider, full);
      const buf = toBuffer(data, 'create');
      checkRequestSize(full, buf, acl, core.maxBufferBytes, options.protection ? 40 : 0);
      const parents = options.createParentContainers ? 'container' : options.createParents ? 'persistent' : 'none';
      const signal = options.signal;
      const strip = (r: { path: string; stat: Stat }): CreateResult => ({ path: ns.fromServer(r.path), stat: r.stat });
      const outcome = options.retryAmbiguousWrites;
      if (!options.protection && parents === 'none' && ns.prefix === '') {
        return runWrite(core, createRequest(full, buf, acl, mode, ttl), signal, path, 'create', mapCreate(path), outcome);
      }
      const spec: CreateSpec = { path: full, data: buf, mode, acl, ttl, parents, parentAcl: (p) => aclFor(core.aclProvider, p) };
      const protection = options.protection;
      if (typeof protection === 'string' && !UUID.test(protection)) {
        throw new BadArgumentsError(
          path,
          `protection must be true or a UUID (as Curator's protected ids are), got ${JSON.stringify(protection)}`,
        );
      }
      const protectedId = typeof protection === 'string' ? protection.toLowerCase() : protection ? newProtectedId() : undefined;
      const run = (): Promise<{ path: string; stat: Stat }> =>
        protectedId !== undefined
          ? protectedCreate(core, spec, protectedId, path, signal)
          : createWithParents(
              // The node itself is resolved by proof after a lost reply; its parents are ensured, so any answer will do.
              (req, map) =>
                req.path === full ? runWrite(core, req, signal, path, 'create', map, outcome) : core.run(req, signal, path, map),
              spec,
              path,
            );
      return run().then(strip, async (err: unknown) => {
        // In a namespace, a missing namespace node is created (as a container, as Curator does) on demand.
        if (!(err instanceof NoNodeError) || ns.prefix === '' || parents !== 'none') throw err;
        const created = await ensurePath(this.exec(signal, path), ns.prefix, true, (p) => aclFor(core.aclProvider, p));
        if (!created) throw err;
        return strip(await run());
      });
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  /** Deletes a node; see DeleteOptions for deletingChildren and guaranteed. */
  delete(path: string, options: DeleteOptions = {}): Promise<void> {
    return requestChannel.hasSubscribers
      ? traced('delete', path, () => this.#delete(path, options), this.core)
      : this.#delete(path, options);
  }

  #delete(path: string, options: DeleteOptions = {}): Promise<void> {
    try {
      const core = this.core;
      const full = this.full(path);
      if (full === '/' || full === '/zookeeper') throw new KeeperError(ErrorCode.BADARGUMENTS, path, 'cannot delete a system node');
      const version = options.version ?? -1;
      const signal = options.signal;
      const mapDelete = (r: { err: number }): void => {
        if (r.err !== 0) throw KeeperError.from(r.err, path);
      };
      if (options.guaranteed) {
        const attempt = (epoch: number): Promise<void> => {
          const exec: ExecAny = (req, map) => core.once(req, undefined, path, map, epoch);
          return options.deletingChildren
            ? deleteTree(exec, full, version, path)
            : exec({ type: OpCode.delete, path: full, version }, mapDelete);
        };
        core.check('delete');
        return core.deletes.run(full, attempt, signal);
      }
      if (options.deletingChildren) {
        core.check('delete');
        return runDeleteTree(core, full, version, path, signal, options.retryAmbiguousWrites);
      }
      return runWrite(core, { type: OpCode.delete, path: full, version }, signal, path, 'delete', mapDelete, options.retryAmbiguousWrites);
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  setData(path: string, data: NodeData | null, options?: SetDataOptions): Promise<Stat> {
    if (this.core.compression.applies(options?.compressed)) {
      return compressed(this.core.compression, path, data, 'setData', (buf) => this.setData(path, buf, { ...options, compressed: false }));
    }
    return requestChannel.hasSubscribers
      ? traced('setData', path, () => this.#setData(path, data, options), this.core, dataSize(data))
      : this.#setData(path, data, options);
  }

  #setData(path: string, data: NodeData | null, options?: VersionOptions): Promise<Stat> {
    try {
      const full = this.full(path);
      const buf = toBuffer(data, 'setData');
      checkRequestSize(full, buf, null, this.core.maxBufferBytes);
      const req = { type: OpCode.setData, path: full, data: buf, version: options?.version ?? -1 } as const;
      return runWrite(this.core, req, options?.signal, path, 'setData', (r) => stat(r, path), options?.retryAmbiguousWrites);
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  /** Sets the ACL; `version` is compared with the node's aversion. */
  setACL(path: string, acl: readonly ACL[], options?: VersionOptions): Promise<Stat> {
    return requestChannel.hasSubscribers
      ? traced('setACL', path, () => this.#setACL(path, acl, options), this.core)
      : this.#setACL(path, acl, options);
  }

  #setACL(path: string, acl: readonly ACL[], options?: VersionOptions): Promise<Stat> {
    try {
      const req = { type: OpCode.setACL, path: this.full(path), acl: acl as ACL[], version: options?.version ?? -1 } as const;
      return runWrite(this.core, req, options?.signal, path, 'setACL', (r) => stat(r, path), options?.retryAmbiguousWrites);
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  /** A multi-op transaction: `client.transaction().create(..).setData(..).check(..).commit()`. */
  transaction(): Transaction {
    return new Transaction(this.core, this.ns, (p) => aclFor(this.core.aclProvider, p));
  }

  /**
   * Adds credentials now and on every later connection (e.g. addAuth('digest', 'user:secret')).
   * Credentials the server refuses (AuthFailedError) are not kept.
   */
  addAuth(scheme: string, auth: Buffer | string, options: OperationOptions = {}): Promise<void> {
    return requestChannel.hasSubscribers
      ? traced('addAuth', undefined, () => this.#addAuth(scheme, auth, options), this.core)
      : this.#addAuth(scheme, auth, options);
  }

  async #addAuth(scheme: string, auth: Buffer | string, options: OperationOptions): Promise<void> {
    await this.core.addAuth(scheme, typeof auth === 'string' ? Buffer.from(auth, 'utf8') : auth, options.signal);
  }

  // ---- watches ----

  /**
   * A persistent watch (ZooKeeper 3.6+): every change to `path` (or, with `recursive`, to its
   * subtree) until closed, as an async iterable. It survives reconnects, and yields `reset` after
   * LOST or when events may have been missed.
   */
  addWatch(path: string, options: AddWatchOptions = {}): Promise<PersistentWatch> {
    return requestChannel.hasSubscribers
      ? traced('addWatch', path, () => this.#addWatch(path, options), this.core)
      : this.#addWatch(path, options);
  }

  async #addWatch(path: string, options: AddWatchOptions = {}): Promise<PersistentWatch> {
    const full = this.full(path);
    const recursive = options.recursive ?? false;
    const core = this.core;
    const handle = new PersistentWatchHandle(path, full, recursive, this.ns, (h) => this.unregisterPersistent(h), options.listener);
    await core.run({ type: OpCode.addWatch, path: full, mode: recursive ? 1 : 0 }, options.signal, path, (r) => {
      if (r.err !== 0) throw KeeperError.from(r.err, path);
      core.registry.addPersistent(full, recursive, handle);
    });
    this.tracker?.addPersistent(handle);
    return handle;
  }

  /**
   * Removes watches of `type` (WatcherType: Children, Data, Any, Persistent, PersistentRecursive)
   * on `path`: all of them or one `watcher`. Removed one-shot callbacks receive DataWatchRemoved /
   * ChildWatchRemoved; removed persistent watches end. The server is told unless `local`.
   */
  removeWatches(path: string, type: WatcherType, options: RemoveWatchesOptions = {}): Promise<void> {
    return requestChannel.hasSubscribers
      ? traced('removeWatches', path, () => this.#removeWatches(path, type, options), this.core)
      : this.#removeWatches(path, type, options);
  }

  async #removeWatches(path: string, type: WatcherType, options: RemoveWatchesOptions = {}): Promise<void> {
    const full = this.full(path);
    const core = this.core;
    core.check('removeWatches');
    const registry = core.registry;
    const { watcher } = options;
    let removed = 0;
    if (type === WatcherType.Data || type === WatcherType.Children || type === WatcherType.Any) {
      if (watcher === undefined || typeof watcher === 'function') removed += registry.removeOneShot(full, type, watcher);
    }
    const dropPersistent = (recursive: boolean): void => {
      for (const s of registry.persistentAt(full, recursive)) {
        if (watcher !== undefined && (s as unknown) !== watcher) continue;
        registry.removePersistent(full, recursive, s);
        s.end();
        removed++;
      }
    };
    if (type === WatcherType.Persistent || type === WatcherType.Any) dropPersistent(false);
    if (type === WatcherType.PersistentRecursive || type === WatcherType.Any) dropPersistent(true);
    if (removed === 0 && !options.quietly) throw new NoWatcherError(path);
    if (options.local || removed === 0) return;
    await this.core.resyncWatches(full, options.signal);
  }

  // ---- internals ----

  private addOneShot(kind: 'data' | 'exist' | 'child', full: string, watch: WatchCallback): void {
    this.core.registry.addOneShot(kind, full, watch, this.ns);
    this.tracker?.addOneShot(kind, full, watch);
  }

  private full(path: string): string {
    return this.ns.toServer(checkPath(path));
  }

  /** A request whose only failure mode is its error code. `build` gets the server path. */
  private simple<R extends Request, T>(
    path: string,
    build: (full: string) => R,
    options: OperationOptions | undefined,
    ok: (reply: { response: ResponseFor<R> | undefined }) => T,
    isNodePath = true,
  ): Promise<T> {
    try {
      const req = build(isNodePath ? this.full(path) : path);
      return this.core.run(req, options?.signal, path, (r) => {
        if (r.err !== 0) throw KeeperError.from(r.err, path);
        return ok(r);
      });
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  private exec(signal: AbortSignal | undefined, path: string): Exec {
    return (req, map) => this.core.run(req, signal, path, map);
  }

  /** The last persistent handle of its mode on a path closed: tell the server, if we are connected. */
  private async unregisterPersistent(h: PersistentWatchHandle): Promise<void> {
    if (!this.core.registry.removePersistent(h.fullPath, h.recursive, h)) return;
    await this.core.resyncWatches(h.fullPath, undefined);
  }
}

export type { PersistentWatch };
