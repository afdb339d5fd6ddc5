/**
 * What every view of a client (the root and its `usingNamespace` views) shares: the session, the
 * watch registry, the state dispatcher, the retry policy and the background work (guaranteed
 * deletes, orphan clean-up). It runs requests: a fast path straight onto the live connection, and
 * a slow path that waits for a connection and retries under the policy.
 */
import { Compression, type CompressionProvider } from './compression.js';
import { EventEmitter } from 'eventemitter3';
import {
  AuthFailedError,
  ClosedError,
  ErrorCode,
  KeeperError,
  OpCode,
  SessionExpiredError,
  WatcherType,
  type TlsError,
  isRetryableCode,
  type Connection,
  type Reply,
  type Request,
  type ResponseFor,
  type Transport,
  InvalidArgumentError,
  IllegalStateError,
} from '@tenure/protocol';
import { systemClock, type Clock } from '@tenure/protocol';
import type { ConnectionState, ErrorPolicy } from './connection-state.js';
import { NotStartedError } from './errors.js';
import { GuaranteedDeletes } from './guaranteed-delete.js';
import { silentLogger, type Logger } from './logger.js';
import { unlimitedListeners } from './node-builtins.js';
import { DEFAULTS, positive, type AclProvider, type ClientOptions } from './options.js';
import { backoffMs, isRetryableError, type RetryPolicy } from './retry-policies.js';
import { runWithRetry } from './retry-loop.js';
import { saslMechanism } from './sasl.js';
import { CLOSE_WAIT_MS, Session, hex, type AuthInfo } from './session.js';
import { setWatchesBatches } from './set-watches.js';
import { StateDispatcher } from './state-dispatcher.js';
import { raceSignal, sleep, typedReason } from './wait-scope.js';
import { WatchRegistry } from './watch-registry.js';
import { CONFIG_NODE } from './ensemble-config.js';
import { configRequest, mapConfig } from './ensemble-ops.js';
import { EnsembleTracker } from './ensemble-tracker.js';
import { NO_NAMESPACE } from './namespace.js';
import { checkRetryAmbiguousWrites, type RetryAmbiguousWrites } from './write-outcome.js';

export interface ClientEvents {
  stateChanged: (state: ConnectionState) => void;
  /**
   * SASL was refused (a wrong password, an unknown user): the client has stopped connecting for
   * good and no new connection state follows; operations fail with AuthFailedError. Close it.
   */
  authFailed: (error: AuthFailedError) => void;
  /**
   * Every host refused the TLS handshake in a row (unknown CA, expired certificate, host name
   * mismatch, missing client certificate). Before the first connection start() rejects with it;
   * on a running client the session keeps its state and tries again after a pause (2 s, doubling
   * to 60 s) or at once after updateTls(); the session is LOST if that outlasts its timeout.
   */
  tlsError: (error: TlsError) => void;
  /**
   * The host list changed (ensemble tracking saw a new config, or updateServerList): `previous`
   * and `hosts` are the lists before and after. The client may then move to another server.
   */
  hostsChanged: (change: HostsChange) => void;
}

export interface HostsChange {
  previous: readonly string[];
  hosts: readonly string[];
}

/** Maps a reply to an operation's result; throws for error codes. Runs as the reply arrives. */
export type ReplyMapper<R extends Request, T> = (reply: Reply<ResponseFor<R>>, path: string | undefined) => T;
/** Runs synchronously as a reply comes off the wire, ahead of any later event (watch registration). */
export type ReplyHook<R extends Request> = (reply: Reply<ResponseFor<R>>) => void;

export class ClientCore {
  readonly emitter = new EventEmitter<ClientEvents>();
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: WatchRegistry;
  readonly states: StateDispatcher;
  readonly session: Session;
  readonly deletes: GuaranteedDeletes;
  readonly retryPolicy: RetryPolicy;
  readonly sessionTimeoutMs: number;
  readonly connectionTimeoutMs: number;
  readonly errorPolicy: ErrorPolicy;
  readonly aclProvider: AclProvider | undefined;
  readonly maxBufferBytes: number;
  /** What `compressed` / `decompressed` calls use. */
  readonly compression: Compression;
  /** How a non-idempotent write whose reply was lost is retried (write-outcome.ts). */
  readonly retryAmbiguousWrites: RetryAmbiguousWrites;
  /** Sent first thing on every connection; addAuth adds to it. */
  private readonly authInfo: AuthInfo[];
  private started = false;
  private isClosed = false;
  /** Set when SASL was refused; `start()` rejects with it. */
  authFailure: AuthFailedError | null = null;
  /** Aborts (with `authFailure`) when SASL is refused. */
  private readonly authFailedController = new AbortController();
  /** Aborts, with the AuthFailedError, when SASL is refused (start() waits on it). */
  readonly authFailedSignal: AbortSignal = this.authFailedController.signal;
  /** The servers the client connects to: the transport's, then as the ensemble changes. */
  hosts: readonly string[];
  /** Set when ensemble tracking runs (on by default where the transport has a host list). */
  readonly tracker: EnsembleTracker | null;
  /** The transport's hosts are `host:port` addresses the client may replace (the ZooKeeper transport). */
  readonly hostListed: boolean;
  /** Aborted first thing in close(): the public `client.closedSignal`. */
  private readonly closing = new AbortController();
  /** Aborted at close once in-flight guaranteed deletes had their chance: stops background work. */
  private readonly lifetime = new AbortController();
  private readonly background = new Set<Promise<unknown>>();
  private readonly transport: Transport & { updateTls?(tls: unknown): void };

  /** `defaultCompression`: the entry's gzip (node:zlib, or CompressionStream in the browser entry). */
  constructor(transport: Transport, opts: ClientOptions, defaultCompression: () => CompressionProvider) {
    this.clock = opts.clock ?? systemClock;
    this.logger = opts.logger ?? silentLogger;
    this.sessionTimeoutMs = positive('sessionTimeoutMs', opts.sessionTimeoutMs, DEFAULTS.sessionTimeoutMs);
    this.connectionTimeoutMs = positive('connectionTimeoutMs', opts.connectionTimeoutMs, DEFAULTS.connectionTimeoutMs);
    this.maxBufferBytes = positive('maxBufferBytes', opts.maxBufferBytes, DEFAULTS.maxBufferBytes);
    this.retryPolicy = opts.retryPolicy ?? DEFAULTS.retryPolicy();
    const policy = opts.errorPolicy ?? 'standard';
    if (policy !== 'standard' && policy !== 'session')
      throw new InvalidArgumentError(`errorPolicy must be 'standard' or 'session', got ${String(policy)}`);
    this.errorPolicy = policy;
    this.aclProvider = opts.aclProvider;
    this.compression = new Compression(opts.compression, defaultCompression);
    this.retryAmbiguousWrites = checkRetryAmbiguousWrites(opts.retryAmbiguousWrites);
    this.hosts = Object.freeze([...transport.hosts]);
    // Every pending wait and lease of every recipe on this client listens to it.
    unlimitedListeners(this.closing.signal);
    this.authInfo = [...(opts.authInfo ?? [])];
    this.registry = new WatchRegistry(this.logger);
    this.states = new StateDispatcher((s) => this.emitter.emit('stateChanged', s), this.logger);
    this.deletes = new GuaranteedDeletes(this);
    this.session = new Session({
      transport,
      sessionTimeoutMs: this.sessionTimeoutMs,
      canBeReadOnly: opts.canBeReadOnly ?? false,
      authInfo: this.authInfo,
      clock: this.clock,
      logger: this.logger,
      registry: this.registry,
      states: this.states,
      onSessionEnded: (epoch) => this.deletes.sessionEnded(epoch),
      sasl: opts.sasl === undefined ? undefined : saslMechanism(opts.sasl),
      onAuthFailed: (error) => {
        this.authFailure = error;
        this.authFailedController.abort(error);
        this.emitter.emit('authFailed', error);
      },
      onTlsRefused: (error) => this.emitter.emit('tlsError', error),
      random: opts.random,
    });
    this.transport = transport;
    this.hostListed = hasHostList(transport);
    this.tracker = opts.ensembleTracker !== false && this.hostListed ? this.newTracker() : null;
  }

  private newTracker(): EnsembleTracker {
    const tracker = new EnsembleTracker({
      logger: this.logger,
      readConfig: (watch, signal) =>
        this.run(configRequest(watch !== undefined), signal, CONFIG_NODE, mapConfig, (r) => {
          if (r.err === 0 && watch) this.registry.addOneShot('data', CONFIG_NODE, watch, NO_NAMESPACE);
        }),
      spawn: (what, task) => this.spawn(what, task),
      apply: (hosts) => this.setHosts(hosts, 'ensemble config'),
    });
    this.states.observe((s) => tracker.stateChanged(s));
    return tracker;
  }

  /**
   * Replaces the host list (ensemble tracking, updateServerList): emits hostsChanged and lets the
   * session move off its server by ZooKeeper's rebalancing rule. An unchanged set does nothing.
   */
  setHosts(hosts: readonly string[], why: string): void {
    const previous = this.hosts;
    const next = [...new Set(hosts)];
    if (next.length === 0) return;
    if (next.length === previous.length && next.every((h) => previous.includes(h))) return;
    this.hosts = Object.freeze(next);
    this.logger.info({ previous, hosts: next, why }, 'host list changed');
    this.emitter.emit('hostsChanged', { previous, hosts: this.hosts });
    this.session.updateHosts(next);
  }

  /** Aborts with ClosedError when close() begins. */
  get closedSignal(): AbortSignal {
    return this.closing.signal;
  }

  get lifetimeSignal(): AbortSignal {
    return this.lifetime.signal;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Throws unless operations may be issued. */
  check(what: string): void {
    if (this.isClosed) throw new ClosedError('client');
    if (!this.started) throw new NotStartedError(what);
  }

  // ---- lifecycle ----

  /** Lets operations in and starts connecting (the session connects once). */
  start(): void {
    if (this.isClosed) throw new ClosedError('client');
    this.started = true;
    this.session.run();
  }

  /** start() gave up before any connection: stop trying, so that it may be called again. */
  async abandonStart(): Promise<void> {
    if (this.states.connectedOnce || this.isClosed) return;
    this.started = false;
    await this.session.halt();
  }

  /** Hands new TLS options to the transport and ends a pause after refused handshakes. */
  updateTls(tls: unknown): void {
    if (typeof this.transport.updateTls !== 'function') throw new IllegalStateError('updateTls: the client was created without tls');
    this.transport.updateTls(tls);
    this.session.tlsUpdated();
  }

  /**
   * Adds credentials for this and every later connection; sends them now when connected.
   * Credentials the server refuses are not kept (AuthFailedError).
   */
  async addAuth(scheme: string, auth: Buffer, signal: AbortSignal | undefined): Promise<void> {
    this.check('addAuth');
    const entry = { scheme, auth };
    this.authInfo.push(entry);
    const conn = this.session.connection;
    if (conn === null) return; // sent first thing on the next connection
    const reply = await this.send(conn, { type: OpCode.auth, authType: 0, scheme, auth }, signal, scheme);
    if (reply.err !== 0) {
      const i = this.authInfo.indexOf(entry);
      if (i >= 0) this.authInfo.splice(i, 1);
      throw new AuthFailedError(undefined, `scheme ${scheme}`);
    }
  }

  /**
   * Runs one request with retries. `path` names the operation in errors. `map` runs when the reply
   * arrives (before any later event is dispatched) and throws for error codes.
   */
  run<R extends Request, T>(
    req: R,
    signal: AbortSignal | undefined,
    path: string | undefined,
    map: ReplyMapper<R, T>,
    onReply?: ReplyHook<R>,
  ): Promise<T> {
    if (this.isClosed) return Promise.reject(new ClosedError('client'));
    if (!this.started) return Promise.reject(new NotStartedError(path ?? 'operation'));
    const session = this.session;
    const conn = session.connection;
    const epoch = session.epoch;
    if (conn === null || signal !== undefined) return this.slow(req, signal, path, map, epoch, undefined, onReply);
    const sentAt = session.noteSend();
    return conn.send(req, onReply).then(
      (reply) => {
        session.answered(sentAt, reply.zxid);
        if (reply.err !== 0 && isRetryableCode(reply.err)) {
          return this.slow(req, signal, path, map, epoch, { error: KeeperError.from(reply.err, path), startedAt: sentAt }, onReply);
        }
        return map(reply, path);
      },
      (error: unknown) => this.slow(req, signal, path, map, epoch, { error: named(error, path), startedAt: sentAt }, onReply),
    );
  }

  private slow<R extends Request, T>(
    req: R,
    signal: AbortSignal | undefined,
    path: string | undefined,
    map: ReplyMapper<R, T>,
    epoch: number,
    firstFailure?: { error: unknown; startedAt: number },
    onReply?: ReplyHook<R>,
  ): Promise<T> {
    return this.retry(() => this.once(req, signal, path, map, epoch, onReply), signal, path, firstFailure);
  }

  /** Runs `attempt` under the client's retry policy. */
  retry<T>(
    attempt: () => Promise<T>,
    signal: AbortSignal | undefined,
    path: string | undefined,
    firstFailure?: { error: unknown; startedAt: number },
  ): Promise<T> {
    return runWithRetry(
      attempt,
      {
        policy: this.retryPolicy,
        clock: this.clock,
        signal,
        stopped: () => this.isClosed,
        onRetry: (error, retryCount, sleepMs) => this.logger.debug({ err: error, path, retryCount, sleepMs }, 'retrying'),
      },
      firstFailure,
    );
  }

  /**
   * One attempt: waits for a connection (up to connectionTimeoutMs; SessionExpired when the session
   * of `epoch` has been lost), sends once and maps the reply. Retryable failures are thrown as is.
   */
  async once<R extends Request, T>(
    req: R,
    signal: AbortSignal | undefined,
    path: string | undefined,
    map: ReplyMapper<R, T>,
    epoch: number,
    onReply?: ReplyHook<R>,
  ): Promise<T> {
    const conn = await this.session.waitForConnection(epoch, this.connectionTimeoutMs, signal, path);
    const reply = await this.send(conn, req, signal, path, onReply);
    if (reply.err !== 0 && isRetryableCode(reply.err)) throw KeeperError.from(reply.err, path);
    return map(reply, path);
  }

  /** Sends on `conn`, keeping the session's timing; rejects at once when `signal` aborts. */
  send<R extends Request>(
    conn: Connection,
    req: R,
    signal: AbortSignal | undefined,
    path: string | undefined,
    onReply?: ReplyHook<R>,
  ): Promise<Reply<ResponseFor<R>>> {
    // A bare race on the caller's signal: a whole scope (a controller and its listeners) per
    // request showed up in the embedded lock cycle's profile.
    if (signal?.aborted) return Promise.reject(typedReason(signal, path ?? 'operation'));
    const session = this.session;
    const sentAt = session.noteSend();
    // A caller that aborted before the reply gets no watch: the server may have set one the
    // registry never records, so the client re-syncs that path's server-side watches instead.
    const hook: ReplyHook<R> | undefined =
      onReply && signal
        ? (reply) => {
            if (!signal.aborted) onReply(reply);
            else if ((req as { watch?: boolean }).watch === true)
              // eslint-disable-next-line @typescript-eslint/no-floating-promises -- never rejects without a signal (failures are logged)
              void this.resyncWatches((req as unknown as { path: string }).path, undefined);
          }
        : onReply;
    const p = conn.send(req, hook).then(
      (reply) => {
        session.answered(sentAt, reply.zxid);
        return reply;
      },
      (error: unknown) => {
        throw named(error, path);
      },
    );
    return signal ? raceSignal(p, signal, path ?? 'operation') : p;
  }

  /**
   * Makes the server's watches on `full` match the registry again after some were removed: one
   * removeWatches(Any), then SetWatches for whatever kinds we still hold there (with lastZxid, so a
   * change in between still fires them). Removing by kind is not enough: ZooKeeper 3.8 refuses the
   * persistent types and removes a persistent watch along with a data or child one on the same path.
   * Only on a live connection: watches die with their connection, and the next one re-registers
   * only what the registry holds.
   */
  async resyncWatches(full: string, signal: AbortSignal | undefined): Promise<void> {
    const conn = this.session.connection;
    if (conn === null || this.isClosed) return;
    const keep = this.registry.listsFor(full);
    const requests: Request[] = [
      { type: OpCode.removeWatches, path: full, watcherType: WatcherType.Any },
      ...setWatchesBatches(keep, this.session.lastZxid),
    ];
    try {
      const replies = await Promise.all(requests.map((req) => this.send(conn, req, signal, full)));
      for (const [i, reply] of replies.entries()) {
        if (reply.err !== 0 && reply.err !== ErrorCode.NOWATCHER) {
          this.logger.warn({ path: full, op: requests[i]!.type, err: reply.err }, 'removing a watch on the server failed');
        }
      }
    } catch (err) {
      if (signal?.aborted) throw err;
      this.logger.debug({ err, path: full }, 'removeWatches not answered (the connection went, and its watches with it)');
    }
  }

  /**
   * Background work that must outlive its caller (orphan clean-up): retried, paced by `backoff`,
   * until it succeeds, fails for good, `until()` says stop, or the client closes.
   */
  spawn(what: string, task: (signal: AbortSignal) => Promise<void>, until: () => boolean = () => false): Promise<void> {
    const signal = this.lifetime.signal;
    const p = (async () => {
      for (let attempt = 0; !signal.aborted && !until(); attempt++) {
        try {
          await task(signal);
          return;
        } catch (err) {
          if (signal.aborted || err instanceof ClosedError || until()) return;
          // A lost session does not end background work: it goes on in the next one.
          if (!isRetryableError(err) && !(err instanceof SessionExpiredError)) {
            this.logger.warn({ err, what }, 'background task failed');
            return;
          }
          await this.backoff(attempt, signal);
        }
      }
    })();
    this.background.add(p);
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- never rejects: the task's errors are caught and logged above
    void p.finally(() => this.background.delete(p));
    return p;
  }

  /**
   * The pause before retry `attempt` (0, 1, ...) of background work: the retry policy's backoff
   * (backoffMs), as Curator's background retries go through its policy. Ends early, without
   * rejecting, when `signal` aborts.
   */
  backoff(attempt: number, signal: AbortSignal): Promise<void> {
    return sleep(this.clock, backoffMs(this.retryPolicy, attempt), signal).catch(() => {});
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.logger.info({ sessionId: hex(this.session.sessionId) }, 'closing');
    this.closing.abort(new ClosedError('client'));
    // Guaranteed deletes in flight on a live connection get one read timeout to land.
    if (this.session.connection !== null) await this.deletes.flush(Math.min(Math.max(100, this.session.readTimeoutMs), CLOSE_WAIT_MS));
    this.lifetime.abort(new ClosedError('client'));
    this.registry.clear();
    await this.session.close();
    this.deletes.clear();
    await Promise.allSettled([...this.background]);
    this.emitter.removeAllListeners();
  }
}

/** Gives a transport's path-less error the operation's path. */
function named(error: unknown, path: string | undefined): unknown {
  if (error instanceof KeeperError && error.path === undefined && path !== undefined) {
    const e = KeeperError.from(error.keeperCode, path);
    (e as { cause?: unknown }).cause = error;
    return e;
  }
  return error;
}

/** A transport whose hosts are `host:port` addresses (the ZooKeeper transport), which tracking may replace. */
function hasHostList(transport: Transport): boolean {
  return typeof (transport as { chroot?: unknown }).chroot === 'string' && transport.hosts.length > 0;
}
