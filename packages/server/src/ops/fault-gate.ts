/**
 * The fault gate: every fault the embedded server injects, and all of their state. It acts only
 * on the server side of connections, so clients see what a network or a real server would show.
 *
 * - restart: handshakes are refused for a while (the server closes every connection meanwhile).
 * - pause: requests and handshakes wait in arrival order; sessions that come due expire at its end.
 * - silence (per session): nothing in either direction; requests wait per connection, output waits
 *   unflushed in the connection's outbox, handshakes for the session wait.
 * - loseNextReply (per session): the next request is applied, then the connection drops unanswered.
 * - dropConnection, expireSession: act at once and keep no state.
 *
 * The serve path reads `armed`, a plain field, at each point a fault could act and goes on at once
 * when it is false, so an unfaulted server pays one boolean read there. `armed` is true whenever
 * any fault state is held; the gate's own checks then decide.
 */
import { AbortError, ConnectionLossError, type Clock, type TimerHandle } from '@tenure/protocol';
import type { ServerConnection } from '../semantics/server-connection.js';
import type { Session } from '../semantics/session-table.js';

type ServerSession = Session<ServerConnection>;

/** What the gate needs from the server. */
export interface FaultHost {
  /** The server's clock: fault durations are read and timed on it. */
  readonly clock: Clock;
  /** The live session with this id. */
  session(id: bigint): ServerSession | undefined;
  /** Serves a request the gate held back. */
  serve(conn: ServerConnection, request: unknown, token: unknown, oversize: boolean): void;
  /** Expires a session now (its ephemerals go, its connection closes). */
  expire(s: ServerSession): void;
}

interface HeldRequest {
  request: unknown;
  token: unknown;
  oversize: boolean;
}

interface PausedRequest extends HeldRequest {
  conn: ServerConnection;
}

interface Silence {
  /** Monotonic ms until which the session's traffic is held. */
  until: number;
  /** Connections whose output waits for the silence to end (one may be closed already). */
  parked: Set<ServerConnection> | undefined;
}

/** A handshake waiting for a pause or a silence to end. */
interface Waiter {
  sessionId: bigint;
  resolve(): void;
  reject(err: Error): void;
}

export class FaultGate {
  /** Some fault state is held: the serve path must ask (set by the gate only). */
  armed = false;
  /** Handshakes are refused (restart). */
  refusing = false;
  private paused = false;
  private pauseEnd: (() => void) | undefined;
  /** Requests that arrived during a pause, in arrival order. */
  private pausedRequests: PausedRequest[] = [];
  /** Sessions that came due during a pause; they expire when it ends. */
  private dueDuringPause: ServerSession[] = [];
  private readonly silences = new Map<ServerSession, Silence>();
  /** Requests that arrived while their session was silenced, served when the silence ends. */
  private readonly heldBySilence = new WeakMap<ServerConnection, HeldRequest[]>();
  /** Sessions whose next reply is lost. */
  private readonly losing = new Set<ServerSession>();
  private readonly waiters = new Set<Waiter>();
  /** Resolves pending restart() promises (close() ends them too). */
  private readonly restartEnds = new Set<() => void>();
  private readonly timers = new Set<TimerHandle>();

  constructor(private readonly host: FaultHost) {}

  private rearm(): void {
    this.armed = this.refusing || this.paused || this.pausedRequests.length > 0 || this.silences.size > 0 || this.losing.size > 0;
  }

  // ---- asked by the serve path (only while armed) ----

  /** Whether the gate takes this request: drops it (restart) or holds it (pause, silence). */
  holds(conn: ServerConnection, request: unknown, token: unknown, oversize: boolean): boolean {
    if (this.refusing) return true;
    if (this.paused || this.pausedRequests.length > 0) {
      this.pausedRequests.push({ conn, request, token, oversize });
      return true;
    }
    if (this.waitsForSilence(conn)) {
      this.holdForSilence(conn, { request, token, oversize });
      return true;
    }
    return false;
  }

  /** Whether the connection's output waits for a silence; if so it is flushed when the silence ends. */
  parksOutput(conn: ServerConnection): boolean {
    const silence = this.silences.get(conn.session);
    if (silence === undefined || !(silence.until > this.host.clock.now())) return false;
    (silence.parked ??= new Set()).add(conn);
    return true;
  }

  /** Whether the session's reply is to be lost; true at most once per loseNextReply. */
  losesReply(s: ServerSession): boolean {
    if (!this.losing.delete(s)) return false;
    this.rearm();
    return true;
  }

  /** Whether a session that came due must wait for the pause to end before it expires. */
  defersExpiry(s: ServerSession): boolean {
    if (!this.paused) return false;
    this.dueDuringPause.push(s);
    return true;
  }

  /** Whether the server does no background work (reaping) now. */
  get halted(): boolean {
    return this.refusing || this.paused;
  }

  /** Waits while a handshake could not be answered (pause, or the session is silenced). */
  handshake(sessionId: bigint, signal: AbortSignal | undefined): Promise<void> | undefined {
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

  /** A connection closed: requests it had held are never served. */
  forgetConnection(conn: ServerConnection): void {
    this.heldBySilence.delete(conn);
  }

  /** A session ended: it serves no more requests, so nothing is left to lose. */
  forgetSession(s: ServerSession): void {
    if (this.losing.delete(s)) this.rearm();
  }

  // ---- injected ----

  /**
   * Refuses handshakes for `refuseMs` after `closeAll` (the server closing every connection);
   * ends a pause and drops what it held. Resolves once handshakes are accepted again.
   */
  restart(refuseMs: number, closeAll: () => void): Promise<void> {
    this.refusing = true;
    this.armed = true;
    this.pausedRequests = [];
    this.endPause();
    closeAll();
    this.rejectWaiters(() => new ConnectionLossError(undefined, 'server restarting'));
    return new Promise((resolve) => {
      const done = (): void => {
        this.restartEnds.delete(done);
        resolve();
      };
      this.restartEnds.add(done);
      this.later(refuseMs, () => {
        this.refusing = false;
        this.rearm();
        done();
      });
    });
  }

  /** Closes the session's connection now. Returns whether there was one. */
  dropConnection(sessionId: bigint): boolean {
    const conn = this.host.session(sessionId)?.connection;
    if (conn === undefined) return false;
    conn.abort('connection dropped (fault injection)');
    return true;
  }

  /** Holds the session's traffic both ways for `ms` (see EmbeddedServer.silence). */
  silence(sessionId: bigint, ms: number): boolean {
    const s = this.host.session(sessionId);
    if (s === undefined) return false;
    const until = this.host.clock.now() + Math.max(0, ms);
    const silence = this.silences.get(s);
    if (silence !== undefined && until <= silence.until) return true;
    if (silence === undefined) this.silences.set(s, { until, parked: undefined });
    else silence.until = until;
    this.armed = true;
    if (Number.isFinite(ms)) this.later(until - this.host.clock.now(), () => this.endSilence(s));
    return true;
  }

  /** Expires the session now. Returns whether it was live. */
  expireSession(sessionId: bigint): boolean {
    const s = this.host.session(sessionId);
    if (s === undefined) return false;
    this.host.expire(s);
    return true;
  }

  /** Arms loseNextReply for the session. Returns whether it is live. */
  loseNextReply(sessionId: bigint): boolean {
    const s = this.host.session(sessionId);
    if (s === undefined) return false;
    this.losing.add(s);
    this.armed = true;
    return true;
  }

  /** Stops answering for `ms` (see EmbeddedServer.pause). Resolves when the server answers again. */
  pause(ms: number): Promise<void> {
    if (this.paused) this.endPause();
    this.paused = true;
    this.armed = true;
    return new Promise((resolve) => {
      const timer = Number.isFinite(ms) ? this.later(Math.max(0, ms), () => this.endPause()) : undefined;
      this.pauseEnd = () => {
        if (timer !== undefined) this.clearTimer(timer);
        resolve();
      };
    });
  }

  /**
   * The server is closing: pending pause and restart promises resolve, the live sessions'
   * silences lift so that `closeAll` (closing every connection) is heard now, waiting handshakes
   * are refused and every fault timer stops.
   */
  close(liveSessions: Iterable<ServerSession>, closeAll: () => void): void {
    this.paused = false;
    this.pausedRequests = [];
    this.pauseEnd?.();
    this.pauseEnd = undefined;
    for (const end of [...this.restartEnds]) end();
    const lifted: Silence[] = [];
    for (const s of liveSessions) {
      const silence = this.silences.get(s);
      if (silence === undefined) continue;
      this.silences.delete(s);
      lifted.push(silence);
    }
    closeAll();
    for (const silence of lifted) for (const c of silence.parked ?? []) c.flush();
    this.rejectWaiters(() => new ConnectionLossError(undefined, 'server closed'));
    for (const t of this.timers) this.host.clock.clearTimeout(t);
    this.timers.clear();
    this.rearm();
  }

  // ---- internals ----

  private isSilenced(s: ServerSession): boolean {
    const silence = this.silences.get(s);
    return silence !== undefined && silence.until > this.host.clock.now();
  }

  /** The connection's session is silenced, or requests it sent then still wait (they go first). */
  private waitsForSilence(conn: ServerConnection): boolean {
    if (this.isSilenced(conn.session)) return true;
    const held = this.heldBySilence.get(conn);
    return held !== undefined && held.length > 0;
  }

  private holdForSilence(conn: ServerConnection, h: HeldRequest): void {
    const held = this.heldBySilence.get(conn);
    if (held === undefined) this.heldBySilence.set(conn, [h]);
    else held.push(h);
  }

  private endSilence(s: ServerSession): void {
    const silence = this.silences.get(s);
    if (silence === undefined) {
      // A stale timer of a silence that was extended and has ended since.
      this.releaseWaiters();
      return;
    }
    if (silence.until > this.host.clock.now()) {
      // Extended meanwhile, or this timer fired early: Node timers can fire up to ~1 ms before
      // performance.now() says the delay has passed. Re-arming is harmless when a later timer exists.
      this.later(silence.until - this.host.clock.now() + 1, () => this.endSilence(s));
      return;
    }
    this.silences.delete(s);
    for (const c of silence.parked ?? []) c.flush();
    const conn = s.connection;
    const held = conn === undefined ? undefined : this.heldBySilence.get(conn);
    if (conn !== undefined && held !== undefined) {
      for (const h of held.splice(0)) {
        if (this.paused || this.pausedRequests.length > 0) this.pausedRequests.push({ conn, ...h });
        else this.host.serve(conn, h.request, h.token, h.oversize);
      }
    }
    this.releaseWaiters();
    this.rearm();
  }

  private endPause(): void {
    if (!this.paused) return;
    this.paused = false;
    const end = this.pauseEnd;
    this.pauseEnd = undefined;
    for (const s of this.dueDuringPause.splice(0)) this.host.expire(s);
    const paused = this.pausedRequests;
    this.pausedRequests = [];
    for (const h of paused) {
      if (this.waitsForSilence(h.conn)) this.holdForSilence(h.conn, h);
      else this.host.serve(h.conn, h.request, h.token, h.oversize);
    }
    this.releaseWaiters();
    this.rearm();
    end?.();
  }

  private blocked(sessionId: bigint): boolean {
    if (this.paused) return true;
    if (sessionId === 0n) return false;
    const s = this.host.session(sessionId);
    return s !== undefined && this.isSilenced(s);
  }

  private releaseWaiters(): void {
    for (const w of [...this.waiters]) if (!this.blocked(w.sessionId)) w.resolve();
  }

  private rejectWaiters(err: () => Error): void {
    for (const w of [...this.waiters]) w.reject(err());
  }

  private later(ms: number, fn: () => void): TimerHandle {
    const t = this.host.clock.setTimeout(
      () => {
        this.timers.delete(t);
        fn();
      },
      Math.min(ms, 0x7fffffff),
    );
    this.timers.add(t);
    return t;
  }

  private clearTimer(t: TimerHandle): void {
    this.host.clock.clearTimeout(t);
    this.timers.delete(t);
  }
}
