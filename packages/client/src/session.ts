/**
 * The session and its connection state machine: the one place that decides CONNECTED, SUSPENDED,
 * RECONNECTED, LOST and READ_ONLY, and that owns every timer of a connection.
 *
 * Timing rules (the same for every transport; T = the negotiated session timeout):
 * - read timeout R = 2/3 T. After R/2 without sending, send a ping. After R without receiving
 *   anything, the connection is dead: close it and report SUSPENDED.
 * - LOST deadline: T after the send time of the last request or ping the server answered (a
 *   successful re-attach counts, from the send time of its handshake). This is no later than the
 *   server can expire the session, so a lease holder learns of its loss before a successor can be
 *   granted its lease.
 * - A handshake answered "expired" is LOST at once.
 * - After LOST the old session is never resumed. One best-effort connection sends closeSession with
 *   the old id and password (its ephemerals go at once), then a new session is opened: RECONNECTED.
 * - Each connection attempt, handshake included, times out after T / (number of hosts). Attempts
 *   back off with jitter, capped at min(1 s, T/3); hosts are tried in a shuffled order.
 * - After every (re)connect: the SASL exchange (with the `sasl` option; CONNECTED / RECONNECTED
 *   only once it succeeded), then auth packets, then SetWatches batches, then waiting requests.
 *   A SASL refusal stops the session for good (Java's AUTH_FAILED): no more connections and no new
 *   connection state; `onAuthFailed` tells the client.
 * - A refused TLS handshake (TlsError) is not a connection loss: see tls-refusals.ts.
 */
import {
  AbortError,
  AuthFailedError,
  ClosedError,
  ConnectionLossError,
  OpCode,
  SessionExpiredError,
  TlsError,
  type CloseReason,
  type Connection,
  type ConnectionHandlers,
  type ConnectResult,
  type Transport,
  type WatcherEvent,
} from '@tenure/protocol';
import type { Clock, TimerHandle } from '@tenure/protocol';
import { HostProvider } from './host-provider.js';
import { reconnectCapMs, reconnectDelayMs } from './host-ring.js';
import type { Logger } from './logger.js';
import { runSaslExchange, type SaslMechanism } from './sasl.js';
import { setWatchesBatches } from './set-watches.js';
import type { StateDispatcher } from './state-dispatcher.js';
import { TlsRefusals, type TlsRefusalListener } from './tls-refusals.js';
import { WaitScope, sleep, typedReason } from './wait-scope.js';
import type { WatchRegistry } from './watch-registry.js';

export interface AuthInfo {
  scheme: string;
  auth: Buffer | string;
}

export interface SessionConfig {
  transport: Transport;
  sessionTimeoutMs: number;
  canBeReadOnly: boolean;
  authInfo: AuthInfo[];
  clock: Clock;
  logger: Logger;
  registry: WatchRegistry;
  states: StateDispatcher;
  /** Called when a session ends (LOST or close), after the LOST state was posted. */
  onSessionEnded: (epoch: number) => void;
  /** Run on every new connection before it is used (the client's `sasl` option). */
  sasl?: SaslMechanism | undefined;
  /** SASL was refused: the session has stopped connecting for good. */
  onAuthFailed?: ((error: AuthFailedError) => void) | undefined;
  /** Every host refused the TLS handshake in a row (see tls-refusals.ts). */
  onTlsRefused?: TlsRefusalListener;
  /** The random source of host shuffling and rebalancing (tests inject a seeded one). */
  random?: () => number;
}

const ZERO_PASSWD = Buffer.alloc(16);
/** ZooKeeper's client pings at least this often, whatever the timeout. */
const MAX_PING_INTERVAL_MS = 10_000;
/** close() waits at most this long for closeSession's answer (and for guaranteed deletes in flight). */
export const CLOSE_WAIT_MS = 2000;
/** A re-attach after LOST only to send closeSession is worth at most this long. */
const CLOSE_OLD_SESSION_BUDGET_MS = 1000;

/** One connection attempt and, if it succeeds, the connection's life. */
class Link {
  conn: Connection | null = null;
  alive = true;
  establishedAt = 0;
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;
  constructor() {
    this.closed = new Promise((r) => (this.resolveClosed = r));
  }
  markClosed(): boolean {
    if (!this.alive) return false;
    this.alive = false;
    this.resolveClosed();
    return true;
  }
}

interface Waiter {
  epoch: number;
  path: string | undefined;
  resolve(conn: Connection): void;
  reject(err: Error): void;
}

/** `failed`: SASL was refused; nothing more is attempted until close(). */
type Phase = 'latent' | 'running' | 'failed' | 'closing' | 'closed';

export class Session {
  /** The current session id, 0n while there is none. */
  sessionId = 0n;
  passwd: Buffer = ZERO_PASSWD;
  negotiatedTimeoutMs = 0;
  connectedServer: string | null = null;
  /** Every session id this client has held, oldest first (the current one last). */
  readonly sessionIds: bigint[] = [];
  /** Highest zxid of a reply to a request (pings excluded): lastZxidSeen and SetWatches' relativeZxid. */
  lastZxid = 0n;
  /** Bumped at each LOST: an operation started in an older epoch fails with SessionExpired. */
  epoch = 0;
  /** The live connection, or null. Read on every operation (the fast path). */
  connection: Connection | null = null;

  private phase: Phase = 'latent';
  private lastSend = 0;
  private lastRecv = 0;
  /** Send time of the last request or ping the server answered. */
  private lastAnswered = 0;
  /** Highest zxid of any reply, pings included: every event up to it has been delivered. */
  private seenZxid = 0n;
  private readonly cfg: SessionConfig;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly hosts: HostProvider;
  private link: Link | null = null;
  private readTimeout = 0;
  private pingAfter = 0;
  private heartbeatTimer: TimerHandle | null = null;
  private lostTimer: TimerHandle | null = null;
  private probeTimer: TimerHandle | null = null;
  private probeDelay = 100;
  private loopAbort: AbortController | null = null;
  private loop: Promise<void> | null = null;
  private readonly waiters = new Set<Waiter>();
  private oldSession: { id: bigint; passwd: Buffer } | null = null;
  private needReset = false;
  private seenRwServer = false;
  private closing: Promise<void> | null = null;
  /** Why the session stopped in phase `failed`. */
  private authError: AuthFailedError | null = null;
  private readonly refusals = new TlsRefusals();
  /** A rebalancing move is under way (updateHosts). */
  private moving = false;

  constructor(cfg: SessionConfig) {
    this.cfg = cfg;
    this.clock = cfg.clock;
    this.log = cfg.logger;
    this.hosts = new HostProvider(cfg.transport.hosts, cfg.random);
  }

  /** Session ids held before the current one, oldest first. */
  get previousSessionIds(): bigint[] {
    return this.sessionId === 0n ? [...this.sessionIds] : this.sessionIds.slice(0, -1);
  }

  get readTimeoutMs(): number {
    return this.readTimeout;
  }

  // ---- lifecycle ----

  /** Starts connecting (once). */
  run(): void {
    if (this.phase !== 'latent') return;
    this.phase = 'running';
    this.loop = this.connectLoop().catch((err: unknown) => {
      this.log.error({ err }, 'the connect loop failed');
    });
  }

  /** Stops connecting without closing a session (start() timed out before any connection). */
  async halt(): Promise<void> {
    if (this.phase !== 'running' || this.sessionId !== 0n) return;
    this.phase = 'latent';
    this.loopAbort?.abort(new AbortError('client start abandoned'));
    await this.loop;
    this.loop = null;
  }

  /** Closes the session (closeSession on the live connection) and stops every timer. */
  close(): Promise<void> {
    return (this.closing ??= this.doClose());
  }

  private async doClose(): Promise<void> {
    const wasRunning = this.phase === 'running';
    this.phase = 'closing';
    this.loopAbort?.abort(new ClosedError('client'));
    this.clearTimer('lostTimer');
    this.clearTimer('probeTimer');
    this.rejectWaiters(() => new ClosedError('client'));
    const link = this.link;
    const conn = link?.conn;
    if (link && conn && !conn.closed) {
      try {
        // A live server answers at once; a dead one must not hold close() for long.
        using scope = new WaitScope(
          'closeSession',
          { timeoutMs: Math.min(Math.max(this.readTimeout, 100), CLOSE_WAIT_MS) },
          { clock: this.clock },
        );
        await scope.race(conn.send({ type: OpCode.closeSession }));
      } catch (err) {
        this.log.debug({ err }, 'closeSession got no answer');
      }
      this.dropLink(link, 'client closed');
    } else if (wasRunning && this.sessionId !== 0n) {
      await this.closeOldSession({ id: this.sessionId, passwd: this.passwd });
    }
    if (this.link) this.dropLink(this.link, 'client closed');
    this.clearTimer('heartbeatTimer');
    await this.loop;
    this.loop = null;
    const ended = this.sessionId !== 0n;
    this.phase = 'closed';
    if (ended) this.cfg.onSessionEnded(this.epoch);
  }

  // ---- the operations' side ----

  /** Marks a send; returns its time, to be passed to `answered`. */
  noteSend(): number {
    const t = this.clock.now();
    this.lastSend = t;
    return t;
  }

  /** Marks a reply to a request sent at `sentAt`. */
  answered(sentAt: number, zxid: bigint): void {
    this.lastRecv = this.clock.now();
    if (sentAt > this.lastAnswered) this.lastAnswered = sentAt;
    if (zxid > this.lastZxid) {
      this.lastZxid = zxid;
      if (zxid > this.seenZxid) this.seenZxid = zxid;
    }
  }

  /**
   * The connection for an operation of `epoch`: at once when connected, otherwise after waiting up
   * to `timeoutMs` (then ConnectionLoss, which the retry policy may retry). SessionExpired when the
   * session the operation began in has been lost; ClosedError after close.
   */
  waitForConnection(epoch: number, timeoutMs: number, signal: AbortSignal | undefined, path?: string): Promise<Connection> {
    if (this.phase === 'closing' || this.phase === 'closed') return Promise.reject(new ClosedError('client'));
    if (this.phase === 'failed') return Promise.reject(this.refusedFor(path));
    if (epoch !== this.epoch) return Promise.reject(new SessionExpiredError(path));
    if (this.connection !== null) return Promise.resolve(this.connection);
    const scope = new WaitScope(
      path ?? 'operation',
      { timeoutMs, signal },
      {
        clock: this.clock,
        timeoutError: (ms) => new ConnectionLossError(path, `not connected within connectionTimeoutMs (${ms} ms)`),
      },
    );
    return scope.until<Connection>((resolve, reject) => {
      const waiter: Waiter = { epoch, path, resolve, reject };
      this.waiters.add(waiter);
      return () => this.waiters.delete(waiter);
    });
  }

  /**
   * A new host list (ensemble tracking, updateServerList). When ZooKeeper's rebalancing says
   * move, the live connection is closed and the session re-attached on the host `next()` draws:
   * SUSPENDED, then RECONNECTED with the same session.
   */
  updateHosts(hosts: readonly string[]): boolean {
    const current = this.connectedServer;
    const move = this.hosts.update(hosts, current);
    const link = this.link;
    if (move && link?.conn && current !== null && this.phase === 'running' && !this.moving) {
      this.log.info({ sessionId: hex(this.sessionId), server: current }, 'rebalancing onto the new host list');
      this.moving = true;
      this.moveOff(link, !hosts.includes(current))
        .catch((err: unknown) => this.log.warn({ err }, 'rebalancing failed'))
        .finally(() => (this.moving = false));
    }
    return move;
  }

  /**
   * Moves the session to the host the rebalancing draws: the session is re-attached there first
   * and the links swapped without SUSPENDED (as the read-only probe does). When no candidate
   * answers, a server that left the list is dropped (the connect loop goes on, SUSPENDED then
   * RECONNECTED); one that stays is kept.
   */
  private async moveOff(old: Link, mustLeave: boolean): Promise<void> {
    for (let i = 0; i < this.hosts.count && this.hosts.moving; i++) {
      const host = this.hosts.next();
      if (this.link !== old || this.phase !== 'running') return;
      if (host === this.connectedServer) continue;
      if (await this.swap(old, host, 'moving to')) return;
    }
    if (mustLeave && this.link === old) this.dropLink(old, 'its server left the host list');
  }

  /** New TLS options: a pause after refused handshakes ends now. */
  tlsUpdated(): void {
    this.refusals.wakeUp();
  }

  // ---- the connect loop ----

  private async connectLoop(): Promise<void> {
    let failures = 0;
    while (this.phase === 'running') {
      const abort = new AbortController();
      this.loopAbort = abort;
      try {
        if (this.oldSession) {
          const old = this.oldSession;
          this.oldSession = null;
          await this.closeOldSession(old, abort.signal);
          failures = 0;
          continue;
        }
        if (failures > 0) {
          await sleep(this.clock, reconnectDelayMs(failures, this.timeoutBase()), abort.signal);
        }
        const outcome = await this.attempt(this.hosts.next(), abort.signal);
        if (outcome === 'authFailed') break;
        if (outcome instanceof TlsError) {
          failures++;
          if (this.refusals.refused(this.hosts.count)) {
            this.cfg.onTlsRefused?.(outcome);
            await this.refusals.pause(this.clock, abort.signal);
          }
          continue;
        }
        this.refusals.reset();
        if (outcome === 'failed') {
          failures++;
          continue;
        }
        if (outcome === 'expired') {
          failures = 0;
          continue;
        }
        // Connected: wait until there is no live link (a read-only probe may swap links meanwhile).
        let link: Link | null = outcome;
        while (link !== null) {
          await link.closed;
          link = this.link;
        }
        const lived = this.clock.now() - outcome.establishedAt;
        failures = lived >= reconnectCapMs(this.timeoutBase()) ? 0 : failures + 1;
      } catch (err) {
        // The pause or attempt was aborted: by LOST (go on), by close or halt (the loop ends).
        if (!(err instanceof AbortError) && !(err instanceof ClosedError)) {
          this.log.warn({ err }, 'connect loop error');
          failures++;
        }
      } finally {
        if (this.loopAbort === abort) this.loopAbort = null;
      }
    }
  }

  /** The timeout that paces connecting: the negotiated one once known. */
  private timeoutBase(): number {
    return this.negotiatedTimeoutMs > 0 ? this.negotiatedTimeoutMs : this.cfg.sessionTimeoutMs;
  }

  /** What one connection attempt may take, handshake included: T / (number of hosts). */
  private perHostMs(): number {
    return Math.max(1, Math.floor(this.timeoutBase() / this.hosts.count));
  }

  /**
   * The session a new connection asks to re-attach, 0n for a new one. A session made on a
   * read-only server is re-attached only once a read-write server has been seen in it.
   */
  private reattachId(): bigint {
    return this.seenRwServer || !this.cfg.canBeReadOnly ? this.sessionId : 0n;
  }

  /** One `transport.connect` to `host` for session `sessionId` (0n: a new one), bounded by `scope`. */
  private connect(
    host: string,
    sessionId: bigint,
    passwd: Buffer,
    readOnly: boolean,
    scope: WaitScope,
    handlers: ConnectionHandlers,
  ): Promise<ConnectResult> {
    return this.cfg.transport.connect(
      host,
      {
        sessionId,
        passwd: sessionId === 0n ? ZERO_PASSWD : passwd,
        lastZxidSeen: this.lastZxid,
        timeoutMs: this.cfg.sessionTimeoutMs,
        readOnly,
        signal: scope.signal,
      },
      handlers,
    );
  }

  private async attempt(host: string, loopSignal: AbortSignal): Promise<Link | 'failed' | 'expired' | 'authFailed' | TlsError> {
    const requested = this.reattachId();
    const link = new Link();
    const sentAt = this.clock.now();
    let result: ConnectResult;
    {
      using scope = new WaitScope(
        `connecting to ${host || 'the server'}`,
        { timeoutMs: this.perHostMs(), signal: loopSignal },
        { clock: this.clock },
      );
      try {
        result = await this.connect(host, requested, this.passwd, this.cfg.canBeReadOnly, scope, {
          onEvent: (ev, zxid) => this.onEvent(link, ev, zxid),
          onClose: (reason) => this.onLinkClosed(link, reason.message, reason),
        });
        if (result.kind === 'connected' && this.cfg.sasl) await this.authenticate(result.connection, this.cfg.sasl, scope);
      } catch (err) {
        if (err instanceof AuthFailedError && !loopSignal.aborted && this.phase === 'running') {
          this.authFailed(err);
          return 'authFailed';
        }
        if (loopSignal.aborted) throw typedReason(loopSignal);
        if (err instanceof TlsError) {
          this.log.error({ err, host: err.host, reason: err.reason }, `TLS handshake refused: ${err.message}`);
          return err;
        }
        if (unresolved(err)) this.log.warn({ err, host }, `cannot resolve ${host}: skipped`);
        else this.log.debug({ err, host }, 'connection attempt failed');
        return 'failed';
      }
    }
    // The session may have been lost, or the client closed, while the handshake ran.
    if (this.phase !== 'running' || requested !== this.reattachId() || loopSignal.aborted) {
      if (result.kind === 'connected') result.connection.close();
      if (loopSignal.aborted) throw typedReason(loopSignal);
      return 'failed';
    }
    if (result.kind === 'expired') {
      if (requested === 0n) return 'failed';
      this.log.warn({ sessionId: hex(requested) }, 'the server reports the session expired');
      this.sessionLost('expired', false);
      return 'expired';
    }
    const conn = result.connection;
    if (!link.alive || conn.closed) {
      conn.close();
      return 'failed';
    }
    this.onConnected(link, conn, sentAt, requested);
    return link;
  }

  private onConnected(link: Link, conn: Connection, sentAt: number, requested: bigint): void {
    if (requested !== 0n && conn.sessionId !== requested) {
      // Not something a ZooKeeper server does, but a new id means the old session is gone.
      this.log.warn({ requested: hex(requested), got: hex(conn.sessionId) }, 'the server gave a different session');
      this.sessionLost('replaced', false);
    }
    const now = this.clock.now();
    link.conn = conn;
    link.establishedAt = now;
    this.link = link;
    this.connection = conn;
    this.connectedServer = conn.server;
    if (conn.sessionId !== this.sessionId) {
      this.sessionId = conn.sessionId;
      this.passwd = conn.passwd;
      this.sessionIds.push(conn.sessionId);
    }
    if (!conn.readOnly) this.seenRwServer = true;
    this.negotiatedTimeoutMs = conn.negotiatedTimeoutMs;
    this.readTimeout = Math.max(1, Math.floor((this.negotiatedTimeoutMs * 2) / 3));
    this.pingAfter = Math.max(1, Math.min(Math.floor(this.readTimeout / 2), MAX_PING_INTERVAL_MS));
    this.lastAnswered = sentAt;
    this.lastRecv = now;
    this.lastSend = now;
    this.log.info(
      { sessionId: hex(this.sessionId), server: conn.server, timeoutMs: this.negotiatedTimeoutMs, readOnly: conn.readOnly },
      'connected',
    );
    this.armHeartbeat();
    this.clearTimer('lostTimer');
    this.armLostTimer();
    this.sendAuth(conn);
    this.resendWatches(conn);
    this.cfg.states.connected(conn.readOnly, this.sessionId);
    if (this.connection !== conn) return; // a state listener closed the client or the link
    for (const w of [...this.waiters]) w.resolve(conn);
    if (conn.readOnly) this.scheduleProbe();
  }

  private onLinkClosed(link: Link, why: string, reason?: CloseReason): void {
    if (!link.markClosed()) return;
    if (link.conn === null) return; // closed during the handshake: the attempt sees it
    if (this.link === link) {
      this.link = null;
      this.connection = null;
      this.connectedServer = null;
      this.clearTimer('heartbeatTimer');
      this.clearTimer('probeTimer');
    }
    if (this.phase !== 'running') return;
    // The transport's typed error (e.g. ProtocolError for a malformed frame) is passed on, not only its text.
    this.log.info({ sessionId: hex(this.sessionId), why, kind: reason?.kind, err: reason?.error }, 'disconnected');
    this.cfg.states.suspended(this.sessionId);
  }

  /** Closes a link ourselves and reports it at once (the transport's onClose is then ignored). */
  private dropLink(link: Link, why: string): void {
    const conn = link.conn;
    this.onLinkClosed(link, why);
    conn?.close();
  }

  private onEvent(link: Link, ev: WatcherEvent, zxid: bigint): void {
    if (!link.alive || link !== this.link) return;
    this.lastRecv = this.clock.now();
    // Every event up to this zxid has been delivered (ZooKeeper 3.9+ and the embedded server send it).
    if (zxid > this.seenZxid) this.seenZxid = zxid;
    this.cfg.registry.dispatch(ev.type, ev.path, zxid);
  }

  // ---- timers ----

  private armHeartbeat(): void {
    if (this.heartbeatTimer !== null) this.clock.clearTimeout(this.heartbeatTimer);
    const due = Math.min(this.lastRecv + this.readTimeout, this.lastSend + this.pingAfter);
    this.heartbeatTimer = this.clock.setTimeout(() => this.onHeartbeat(), Math.max(1, due - this.clock.now()));
  }

  private onHeartbeat(): void {
    this.heartbeatTimer = null;
    const link = this.link;
    const conn = link?.conn;
    if (!link || !conn) return;
    const now = this.clock.now();
    if (now - this.lastRecv >= this.readTimeout) {
      this.log.warn({ sessionId: hex(this.sessionId), silentMs: Math.round(now - this.lastRecv) }, 'read timeout: the connection is dead');
      this.dropLink(link, 'read timeout');
      return;
    }
    if (now - this.lastSend >= this.pingAfter) this.ping(conn);
    this.armHeartbeat();
  }

  private ping(conn: Connection): void {
    const sentAt = this.noteSend();
    conn.send({ type: OpCode.ping }).then(
      (reply) => {
        if (this.connection !== conn) return;
        this.lastRecv = this.clock.now();
        if (sentAt > this.lastAnswered) this.lastAnswered = sentAt;
        if (reply.zxid > this.seenZxid) this.seenZxid = reply.zxid;
      },
      () => {},
    );
  }

  /** Lazily armed: fires at the earliest possible deadline and re-arms if it moved on meanwhile. */
  private armLostTimer(): void {
    if (this.lostTimer !== null || this.sessionId === 0n || this.negotiatedTimeoutMs <= 0) return;
    const due = this.lastAnswered + this.negotiatedTimeoutMs;
    this.lostTimer = this.clock.setTimeout(() => this.onLostTimer(), Math.max(0, due - this.clock.now()));
  }

  private onLostTimer(): void {
    this.lostTimer = null;
    if (this.sessionId === 0n || this.phase !== 'running') return;
    const due = this.lastAnswered + this.negotiatedTimeoutMs;
    if (this.clock.now() < due) return this.armLostTimer();
    this.log.warn({ sessionId: hex(this.sessionId), timeoutMs: this.negotiatedTimeoutMs }, 'no answer within the session timeout: LOST');
    this.sessionLost('deadline', true);
  }

  private clearTimer(name: 'heartbeatTimer' | 'lostTimer' | 'probeTimer'): void {
    const t = this[name];
    if (t !== null) {
      this.clock.clearTimeout(t);
      this[name] = null;
    }
  }

  // ---- session loss ----

  private sessionLost(why: string, closeOld: boolean): void {
    if (this.sessionId === 0n) return;
    const old = { id: this.sessionId, passwd: this.passwd };
    this.clearTimer('lostTimer');
    if (this.link) this.dropLink(this.link, `session lost (${why})`);
    this.sessionId = 0n;
    this.passwd = ZERO_PASSWD;
    // A session made on a read-only server is local to it: it is re-attached only once a
    // read-write server has been seen in that session (ZooKeeper's seenRwServerBefore).
    this.seenRwServer = false;
    const endedEpoch = this.epoch;
    this.epoch++;
    this.needReset = true;
    if (closeOld) this.oldSession = old;
    // An attempt in flight would re-attach the old session, which must never be resumed.
    this.loopAbort?.abort(new AbortError('session lost'));
    this.cfg.states.lost(old.id);
    this.rejectWaiters((w) => (w.epoch !== this.epoch ? new SessionExpiredError(w.path) : null));
    this.cfg.onSessionEnded(endedEpoch);
  }

  /** Best effort: one connection with the old id only to send closeSession, so its ephemerals go now. */
  private async closeOldSession(old: { id: bigint; passwd: Buffer }, signal?: AbortSignal): Promise<void> {
    const budget = Math.min(CLOSE_OLD_SESSION_BUDGET_MS, this.perHostMs());
    using scope = new WaitScope('closing the old session', { timeoutMs: budget, signal }, { clock: this.clock });
    try {
      const r = await this.connect(this.hosts.next(), old.id, old.passwd, false, scope, { onEvent: () => {}, onClose: () => {} });
      if (r.kind === 'connected') {
        try {
          // A server that requires SASL (enforce.auth) serves closeSession only after it.
          if (this.cfg.sasl) await this.authenticate(r.connection, this.cfg.sasl, scope);
          await scope.race(r.connection.send({ type: OpCode.closeSession }));
          this.log.info({ sessionId: hex(old.id) }, 'closed the old session');
        } finally {
          r.connection.close();
        }
      }
    } catch (err) {
      this.log.debug({ err, sessionId: hex(old.id) }, 'could not close the old session');
    }
  }

  // ---- after a (re)connect ----

  /** The SASL exchange on a fresh connection, bounded by the attempt's scope; closes it on failure. */
  private async authenticate(conn: Connection, mechanism: SaslMechanism, scope: WaitScope): Promise<void> {
    try {
      await scope.race(runSaslExchange(conn, mechanism));
      this.log.debug({ server: conn.server, mechanism: mechanism.name }, 'SASL authenticated');
    } catch (err) {
      conn.close();
      throw err;
    }
  }

  /** SASL was refused: stop connecting for good, without a connection state (Java's AUTH_FAILED). */
  private authFailed(error: AuthFailedError): void {
    this.phase = 'failed';
    this.authError = error;
    this.log.error({ err: error, sessionId: hex(this.sessionId) }, 'SASL authentication failed: the client stops connecting');
    this.clearTimer('lostTimer');
    this.clearTimer('probeTimer');
    this.clearTimer('heartbeatTimer');
    this.rejectWaiters((w) => this.refusedFor(w.path));
    // The server's session (if any) expires on its own; work bound to it here ends now.
    if (this.sessionId !== 0n) this.cfg.onSessionEnded(this.epoch);
    this.cfg.onAuthFailed?.(error);
  }

  /** What an operation gets once SASL has been refused. */
  private refusedFor(path: string | undefined): AuthFailedError {
    const e = new AuthFailedError(path, 'SASL authentication was refused; the client no longer connects');
    (e as { cause?: unknown }).cause = this.authError;
    return e;
  }

  private sendAuth(conn: Connection): void {
    for (const a of this.cfg.authInfo) {
      const auth = typeof a.auth === 'string' ? Buffer.from(a.auth, 'utf8') : a.auth;
      conn.send({ type: OpCode.auth, authType: 0, scheme: a.scheme, auth }).then(
        (reply) => {
          if (reply.err !== 0) this.log.error({ scheme: a.scheme, err: reply.err }, 'authentication failed');
        },
        () => {},
      );
    }
  }

  private resendWatches(conn: Connection): void {
    const registry = this.cfg.registry;
    const reset = this.needReset;
    this.needReset = false;
    if (registry.isEmpty) return;
    const seenBefore = this.seenZxid;
    const batches = setWatchesBatches(registry.collect(), this.lastZxid);
    let last: Promise<bigint> | null = null;
    for (const b of batches) {
      const sentAt = this.noteSend();
      last = conn.send(b).then((reply) => {
        if (this.connection === conn) this.answered(sentAt, reply.zxid);
        if (reply.err !== 0) this.log.warn({ err: reply.err }, 're-registering watches failed');
        return reply.zxid;
      });
      last.catch(() => {});
    }
    this.log.debug({ batches: batches.length, watches: registry.size }, 're-registered watches');
    if (!registry.hasPersistent) return;
    if (reset) {
      // A new session: anything may have changed. The reset follows the SetWatches on the wire,
      // so reads made in reaction to it see every change the re-registered watches miss.
      registry.resetPersistent('LOST');
      return;
    }
    // Same session: persistent watches get no catch-up events, so say so if the server moved on.
    last?.then(
      (zxid) => {
        if (this.connection === conn && zxid > seenBefore) registry.resetPersistent('RECONNECTED');
      },
      () => {},
    );
  }

  // ---- read-only servers ----

  /** While on a read-only server, look for a read-write one (100 ms, doubling to 60 s). */
  private scheduleProbe(): void {
    if (this.hosts.count < 2 || this.probeTimer !== null) return;
    this.probeTimer = this.clock.setTimeout(() => {
      this.probeTimer = null;
      this.probe().catch((err: unknown) => this.log.warn({ err }, 'read-write probe failed'));
    }, this.probeDelay);
    this.probeDelay = Math.min(this.probeDelay * 2, 60_000);
  }

  private async probe(): Promise<void> {
    const old = this.link;
    if (!old?.conn?.readOnly || this.phase !== 'running') return;
    try {
      if (await this.swap(old, this.hosts.nextOther(this.connectedServer), 'probing')) this.probeDelay = 100;
    } finally {
      if (this.link?.conn?.readOnly) this.scheduleProbe();
    }
  }

  /**
   * Re-attaches the session on a read-write server at `host` and, if that works while `old` is
   * still the live link, swaps to it without SUSPENDED: the old link dies quietly, the new one
   * reports RECONNECTED (nothing when the state already is). Any failure leaves `old` as it is.
   */
  private async swap(old: Link, host: string, what: string): Promise<boolean> {
    const requested = this.reattachId();
    const link = new Link();
    const sentAt = this.clock.now();
    using scope = new WaitScope(`${what} ${host}`, { timeoutMs: this.perHostMs() }, { clock: this.clock });
    try {
      const r = await this.connect(host, requested, this.passwd, false, scope, {
        onEvent: (ev, zxid) => this.onEvent(link, ev, zxid),
        onClose: (reason) => this.onLinkClosed(link, reason.message),
      });
      if (r.kind !== 'connected') return false;
      // A refusal here is a failed swap: the old link, authenticated, goes on.
      if (this.cfg.sasl && !r.connection.readOnly) await this.authenticate(r.connection, this.cfg.sasl, scope);
      if (r.connection.readOnly || this.link !== old || this.phase !== 'running' || !link.alive || requested !== this.reattachId()) {
        r.connection.close();
        return false;
      }
      old.markClosed();
      this.clearTimer('heartbeatTimer');
      old.conn?.close();
      this.onConnected(link, r.connection, sentAt, requested);
      return true;
    } catch (err) {
      this.log.debug({ err, host }, `${what} ${host} failed`);
      return false;
    }
  }

  // ---- helpers ----

  private rejectWaiters(errorFor: (w: Waiter) => Error | null): void {
    for (const w of [...this.waiters]) {
      const e = errorFor(w);
      if (e) w.reject(e);
    }
  }
}

export function hex(id: bigint): string {
  return '0x' + BigInt.asUintN(64, id).toString(16);
}

const DNS_FAILURES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA']);

/** A connect that failed because the host name did not resolve (the transport's error has the DNS error as cause). */
function unresolved(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' && DNS_FAILURES.has(cause.code);
}
