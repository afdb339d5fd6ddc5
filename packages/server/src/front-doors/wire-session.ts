/**
 * ZooKeeper's connection protocol (docs/zookeeper-wire-protocol.md §2–§3) over any link that carries whole frames: a TCP
 * or TLS socket (socket-link.ts) or a WebSocket (websocket-link.ts). The link only moves frames;
 * every rule lives here once, in front of the server's front door (front-door.ts):
 *
 * - the handshake: the first frame is a ConnectRequest, decoded here and answered here (the one
 *   place that encodes a ConnectResponse); an expired or unknown session gets ZooKeeper's zero
 *   answer, then a close. A link that has not completed it within handshakeTimeoutMs is dropped.
 * - requests: the header's xid and op travel with the request to the server and back with its
 *   reply (packed in one number, so a request allocates no token). A known op with an unreadable
 *   body goes to the pipeline as a record without fields (MARSHALLINGERROR); an unknown op too
 *   (UNIMPLEMENTED, then a close); a frame without a readable header drops the link.
 * - limits: a frame whose length exceeds maxBufferBytes is refused through the pipeline once the
 *   session is open (so injected faults see it) and drops the link before.
 * - flow: the link is not read while the session is being set up, while the peer does not read
 *   its output, while the server owes too many replies (globalOutstandingLimit) and during
 *   shutdown; frames read meanwhile wait in order.
 * - output: what the server delivers in one microtask is encoded into one buffer (frame-output.ts in
 *   @tenure/protocol) and leaves in one link write.
 * - shutdown and close: the server's close sends what is queued, then closes the link.
 *
 * Bad input costs that one link and nothing else.
 */
import {
  AbortError,
  EARLY_FLUSH_FRAMES,
  ErrorCode,
  ProtocolError,
  UnknownOpError,
  connectRequestHasReadOnly,
  decodeConnectRequest,
  decodeRequest,
  FrameOutput,
  encodeConnectResponse,
  frame,
  unrefTimer,
  writeNotificationFrame,
  writeReplyFrame,
  type CloseReason,
  type ConnectRequest,
  type Reply,
  type Request,
  type TimerHandle,
  type WatcherEvent,
} from '@tenure/protocol';
import type { ConnectionSink, ServerConnection } from '../semantics/server-connection.js';
import { opAbbreviation, type ConnectionStats, type TrafficStats } from './four-letter-words.js';
import type { AcceptResult, FrontDoor, PeerInfo } from './front-door.js';

/** Why a link is dropped; each link says it its own way (a reset, a WebSocket close code). */
export type LinkFailure = 'bad-input' | 'refused' | 'internal' | 'timeout' | 'gone';

/** What a wire session needs of the link under it. */
export interface WireLink {
  /** `/address:port`, for logs and `cons`. */
  readonly remote: string;
  /**
   * Writes one flush: `frames` whole frames (int32 length + payload each), back to back in `bytes`, which
   * the link may keep (it is never written over). Returns whether the peer is behind: then the link
   * calls `writable()` once it catches up.
   */
  write(bytes: Buffer, frames: number): boolean;
  pause(): void;
  resume(): void;
  /** Sends what was written, then closes (`reason` for links that carry one); keeps reading, and discarding, until the peer closes. */
  end(reason: string): void;
  /** Drops the link at once. */
  fail(why: LinkFailure): void;
}

/** Traffic totals over every session of a listener, for srvr/mntr. */
export type WireTotals = TrafficStats;

/** The listener a wire session belongs to. */
export interface WireDoor {
  readonly server: FrontDoor;
  readonly handshakeTimeoutMs: number;
  readonly totals: WireTotals;
  readonly sessions: Set<WireSession>;
}

const ZERO_PASSWD = Buffer.alloc(16);

// A request's reply needs its xid and op code; both travel in the server's token as one number
// (xid * 1024 + op + 512), so that a request allocates no token object.
const OP_SPAN = 1024;
const OP_BIAS = 512;
const tokenOf = (xid: number, op: number): number => xid * OP_SPAN + (op >= -OP_BIAS && op < OP_BIAS ? op + OP_BIAS : OP_BIAS);

// Why the link is not read (bits of `stops`).
const ACCEPTING = 1; // the server is setting the session up
const BACKPRESSURE = 2; // the peer does not read its output
const REFUSED = 4; // an oversized frame went to the pipeline, which closes the session
const THROTTLED = 8; // the server owes too many replies (globalOutstandingLimit)
const DRAINING = 16; // shutdown
const HOLD = THROTTLED | DRAINING;

// Phases of a session.
const HANDSHAKE = 0; // waiting for the ConnectRequest
const SETTING_UP = 1; // the server is accepting it
const OPEN = 2;
const CLOSED = 3;

export class WireSession implements ConnectionSink, ConnectionStats {
  // ---- ConnectionStats (cons, stat) ----
  readonly establishedAt = Date.now();
  received = 0;
  sent = 0;
  lastOp = 'NA';
  lastCxid = 0;
  lastZxid = -1n;
  lastResponseAt = 0;
  lastLatencyMs = 0;
  minLatencyMs = Infinity;
  maxLatencyMs = 0;
  latencySumMs = 0;
  latencyCount = 0;

  private phase = HANDSHAKE;
  private conn: ServerConnection | undefined;
  private stops = 0;
  /** Frames that arrived with the ConnectRequest, served once the session is set up. */
  private early: Buffer[] = [];
  /** Frames read but not yet handed over while throttled or draining. */
  private backlog: Buffer[] = [];
  /** The frames of the next flush, encoded in place. */
  private readonly out = new FrameOutput();
  private flushQueued = false;
  private repliesQueued = 0;
  /** When the first input not yet answered by a flush was read (for latency); 0 once a flush answered it. */
  private readAt = 0;
  private finished = false;
  private readonly abort = new AbortController();
  private readonly server: FrontDoor;
  /** Drops a link that never completes its handshake. */
  private readonly handshakeTimer: TimerHandle;

  constructor(
    private readonly door: WireDoor,
    private readonly link: WireLink,
    private readonly peer: PeerInfo | undefined,
  ) {
    this.server = door.server;
    door.sessions.add(this);
    this.handshakeTimer = unrefTimer(this.server.clock.setTimeout(() => this.fail('timeout'), door.handshakeTimeoutMs));
  }

  get remote(): string {
    return this.link.remote;
  }

  get sessionId(): bigint | undefined {
    return this.conn?.session.id;
  }

  get timeoutMs(): number | undefined {
    return this.conn?.session.timeoutMs;
  }

  get established(): boolean {
    return this.phase === OPEN && this.conn !== undefined;
  }

  get queuedFrames(): number {
    return this.out.frames;
  }

  /** Whether the link is being read (ZooKeeper's interest ops in `cons`). */
  get reading(): boolean {
    return this.phase !== CLOSED && this.stops === 0;
  }

  get closed(): boolean {
    return this.phase === CLOSED;
  }

  // ---- input (called by the link) ----

  /** The frames (payloads without their length) of one read. */
  frames(payloads: readonly Buffer[]): void {
    for (let i = 0; i < payloads.length; i++) {
      if (this.phase === CLOSED || (this.stops & REFUSED) !== 0) break;
      this.frame(payloads[i]!);
    }
  }

  /** One frame (its payload, without the length): a WebSocket message. */
  frame(payload: Buffer): void {
    if (this.phase === CLOSED || (this.stops & REFUSED) !== 0) return;
    // One clock read per flush, not per read: a WebSocket delivers each frame as its own read.
    if (this.readAt === 0) this.readAt = performance.now();
    try {
      const phase = this.phase;
      if (phase === OPEN) this.take(payload);
      else if (phase === HANDSHAKE) this.handshake(payload);
      else this.early.push(payload); // SETTING_UP
    } catch (err) {
      // Never let one connection take the server down.
      this.server.logger?.warn({ err, remote: this.link.remote }, 'connection failed');
      this.fail('internal');
    }
  }

  /** A frame announced more than maxBufferBytes: refused through the pipeline once open; before that, the link goes. */
  oversize(): void {
    if (this.phase === CLOSED || (this.stops & REFUSED) !== 0) return;
    const conn = this.conn;
    if (this.phase !== OPEN || conn === undefined) {
      this.fail('bad-input');
      return;
    }
    this.stop(REFUSED);
    this.count();
    this.server.receive(conn, null, tokenOf(0, 0), true);
  }

  /** A four-letter word took the place of the handshake: `answer` (what the link sends before it closes) sees the session as it was. */
  answerWord(answer: () => string): string {
    this.server.clock.clearTimeout(this.handshakeTimer);
    this.count();
    const text = answer();
    this.phase = CLOSED;
    this.abort.abort();
    return text;
  }

  /** The peer reads again after `write` said it was behind. */
  writable(): void {
    this.resume(BACKPRESSURE);
  }

  /** The peer closed its end before we closed ours: the client went away (its session lives on until it expires). */
  peerEnded(): void {
    if (this.phase !== CLOSED) this.fail('gone');
  }

  private count(): void {
    this.received++;
    this.door.totals.received++;
  }

  private handshake(payload: Buffer): void {
    let req: ConnectRequest;
    let withReadOnly: boolean;
    try {
      req = decodeConnectRequest(payload);
      withReadOnly = connectRequestHasReadOnly(payload);
    } catch {
      this.fail('bad-input');
      return;
    }
    this.count();
    this.server.clock.clearTimeout(this.handshakeTimer);
    this.phase = SETTING_UP;
    this.stop(ACCEPTING);
    const params = {
      sessionId: req.sessionId,
      passwd: req.passwd,
      lastZxidSeen: req.lastZxidSeen,
      timeoutMs: req.timeOut,
      readOnly: req.readOnly,
      signal: this.abort.signal,
    };
    this.server.accept(params, this, this.peer).then(
      (result) => this.accepted(result, withReadOnly),
      (err: unknown) => {
        // Closed, restarting, or the client has seen a newer zxid: close without an answer.
        if (!(err instanceof AbortError)) this.server.logger?.debug?.({ err, remote: this.link.remote }, 'handshake refused');
        this.fail('refused');
      },
    );
  }

  private accepted(result: AcceptResult, withReadOnly: boolean): void {
    try {
      if (this.phase === CLOSED) {
        if (result.kind === 'connected') result.connection.closeByClient();
        return;
      }
      if (result.kind === 'expired') {
        // ZooKeeper's answer for an expired or unknown session or a wrong password, then a close.
        this.writeNow(connectAnswer(0, 0n, ZERO_PASSWD, withReadOnly));
        this.end('session expired');
        return;
      }
      const conn = (this.conn = result.connection);
      this.writeNow(connectAnswer(result.timeoutMs, conn.session.id, conn.session.passwd, withReadOnly));
      this.phase = OPEN;
      const early = this.early;
      if (early.length === 0) this.readAt = 0; // the handshake is answered: latency counts from the next read
      this.early = [];
      for (const p of early) {
        if (this.phase !== OPEN || (this.stops & REFUSED) !== 0) break;
        this.take(p);
      }
      this.resume(ACCEPTING);
    } catch (err) {
      this.server.logger?.warn({ err, remote: this.link.remote }, 'connection failed');
      this.fail('internal');
    }
  }

  /** A request frame: handed over now, or kept (behind any already kept) while the server has us wait. */
  private take(payload: Buffer): void {
    if ((this.stops & HOLD) !== 0 || this.backlog.length > 0) this.backlog.push(payload);
    else this.request(payload);
  }

  private request(payload: Buffer): void {
    this.count();
    let header;
    let request: Request | { type: number } | null;
    try {
      ({ header, request } = decodeRequest(payload));
    } catch (err) {
      if (err instanceof ProtocolError && err.header !== undefined) {
        // Unknown op: the pipeline answers UNIMPLEMENTED and closes. Unreadable body of a known
        // op: a record with no fields, which the pipeline answers MARSHALLINGERROR.
        header = err.header;
        request = { type: header.type };
        if (!(err instanceof UnknownOpError)) this.server.logger?.debug?.({ err, remote: this.link.remote }, 'unreadable request body');
      } else {
        this.fail('bad-input');
        return;
      }
    }
    this.lastOp = opAbbreviation(header.type);
    if (header.xid > 0) this.lastCxid = header.xid;
    this.server.receive(this.conn!, request, tokenOf(header.xid, header.type));
  }

  // ---- ConnectionSink ----

  deliverReply(token: unknown, reply: Reply): void {
    if (this.phase === CLOSED) return;
    const t = token as number;
    const xid = Math.floor(t / OP_SPAN);
    const op = t - xid * OP_SPAN - OP_BIAS;
    try {
      writeReplyFrame(this.out, xid, reply.zxid, reply.err, op, reply.response);
    } catch (err) {
      this.server.logger?.warn({ err, op }, 'reply could not be encoded');
      writeReplyFrame(this.out, xid, reply.zxid, ErrorCode.MARSHALLINGERROR, op);
    }
    if (reply.zxid > 0n) this.lastZxid = reply.zxid;
    this.repliesQueued++;
    this.queued();
  }

  deliverEvent(event: WatcherEvent, zxid: bigint): void {
    if (this.phase === CLOSED) return;
    writeNotificationFrame(this.out, zxid, event);
    this.queued();
  }

  deliverClose(reason: CloseReason): void {
    if (this.phase === CLOSED) return;
    this.conn = undefined;
    this.flush();
    this.end(reason.message);
  }

  // ---- output ----

  /**
   * A frame was written to `out`: it leaves with the next flush, or now when a turn has already
   * produced EARLY_FLUSH_FRAMES of them: a peer that pipelines gets the first replies while the
   * rest are served, and works on them on its own core instead of waiting for the whole turn.
   */
  private queued(): void {
    if (this.out.frames >= EARLY_FLUSH_FRAMES && (this.stops & BACKPRESSURE) === 0) {
      this.flush();
      return;
    }
    if (!this.flushQueued) {
      this.flushQueued = true;
      // The server delivers a turn's output from one microtask; this one runs after it.
      queueMicrotask(this.flushBound);
    }
  }

  private readonly flushBound = (): void => {
    try {
      this.flush();
    } catch (err) {
      this.server.logger?.warn({ err, remote: this.link.remote }, 'write failed');
      this.fail('internal');
    }
  };

  private flush(): void {
    this.flushQueued = false;
    const n = this.out.frames;
    if (n === 0 || this.phase === CLOSED) return;
    const bytes = this.out.take();
    this.sent += n;
    this.door.totals.sent += n;
    if (this.repliesQueued > 0) this.noteLatency();
    if (this.link.write(bytes, n)) this.stop(BACKPRESSURE);
  }

  private noteLatency(): void {
    const ms = this.readAt === 0 ? 0 : Math.max(0, performance.now() - this.readAt);
    this.readAt = 0;
    const replies = this.repliesQueued;
    this.repliesQueued = 0;
    this.lastResponseAt = Date.now();
    this.lastLatencyMs = ms;
    addLatency(this, ms, replies);
    addLatency(this.door.totals, ms, replies);
  }

  /** Writes at once (handshake answers: nothing else is queued yet). */
  private writeNow(bytes: Buffer): void {
    this.sent++;
    this.door.totals.sent++;
    if (this.link.write(bytes, 1)) this.stop(BACKPRESSURE);
  }

  // ---- flow and close ----

  /** ConnectionSink: the server owes too many replies (globalOutstandingLimit). */
  pauseReading(): void {
    if (this.phase !== CLOSED) this.stop(THROTTLED);
  }

  /** ConnectionSink: the server takes requests from this connection again. */
  resumeReading(): void {
    if ((this.stops & THROTTLED) === 0) return;
    this.stops &= ~THROTTLED;
    // Not inside the server's delivery: the frames kept back go in a microtask, before any new read.
    queueMicrotask(this.serveBacklog);
  }

  private readonly serveBacklog = (): void => {
    try {
      while (this.backlog.length > 0 && this.phase === OPEN && (this.stops & (HOLD | REFUSED)) === 0) {
        this.request(this.backlog.shift()!);
      }
    } catch (err) {
      this.server.logger?.warn({ err, remote: this.link.remote }, 'connection failed');
      this.fail('internal');
      return;
    }
    if (this.stops === 0 && this.phase !== CLOSED) this.link.resume();
  };

  /** Shutdown: read nothing more; what was handed over is still answered. */
  drain(): void {
    if (this.phase !== CLOSED) this.stop(DRAINING);
  }

  private stop(why: number): void {
    this.stops |= why;
    this.link.pause();
  }

  private resume(why: number): void {
    if ((this.stops & why) === 0) return;
    this.stops &= ~why;
    if (this.stops === 0 && this.phase !== CLOSED) this.link.resume();
  }

  /** Sends what is queued, then closes the link. */
  private end(reason: string): void {
    if (this.phase === CLOSED) return;
    this.phase = CLOSED;
    this.abort.abort();
    this.stops = 0;
    this.link.end(reason);
  }

  /** Drops the link at once. */
  fail(why: LinkFailure): void {
    this.phase = CLOSED;
    this.link.fail(why);
    this.linkClosed();
  }

  /** The link is gone (called by the link, and by fail): the session lives on until it expires. */
  linkClosed(): void {
    this.phase = CLOSED;
    if (this.finished) return;
    this.finished = true;
    this.abort.abort();
    this.server.clock.clearTimeout(this.handshakeTimer);
    this.early = [];
    this.out.reset();
    this.backlog = [];
    const conn = this.conn;
    this.conn = undefined;
    conn?.closeByClient();
    this.door.sessions.delete(this);
  }
}

function addLatency(t: TrafficStats, ms: number, replies: number): void {
  if (ms < t.minLatencyMs) t.minLatencyMs = ms;
  if (ms > t.maxLatencyMs) t.maxLatencyMs = ms;
  t.latencySumMs += ms * replies;
  t.latencyCount += replies;
}

/** The ConnectResponse frame (the one place that encodes it). */
function connectAnswer(timeOut: number, sessionId: bigint, passwd: Buffer, withReadOnly: boolean): Buffer {
  return frame(encodeConnectResponse({ protocolVersion: 0, timeOut, sessionId, passwd, readOnly: false }, withReadOnly));
}
