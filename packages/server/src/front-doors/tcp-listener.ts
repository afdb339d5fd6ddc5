/**
 * The server on TCP: ZooKeeper's wire protocol (wire doc §2–§3) in front of the same front door
 * (front-door.ts: accept, receive) the in-process transport uses. A socket is only a codec here:
 * frames are decoded into the records the in-process transport hands over, and what the server
 * delivers through the ConnectionSink is encoded back. Sessions, ordering, faults and the
 * maxBuffer rule stay behind the front door, so both front doors behave alike.
 *
 * A fresh connection whose first 4 bytes spell a four-letter word gets a text answer and is closed
 * (§6.10). Bad input closes that one connection and nothing else: an undecodable handshake, a
 * frame length below 0 or above maxBufferBytes, a request shorter than its header. A known op with
 * an unreadable body is answered MARSHALLINGERROR and an unknown op UNIMPLEMENTED then a close,
 * both through the request pipeline, as ZooKeeper does.
 *
 * Output is coalesced: the server delivers what a batch of requests produced in one microtask, and
 * everything a connection got in it leaves in one socket write.
 *
 * The TLS listener (tls-listener.ts) is this listener on a `tls.Server`: the same connection
 * handler (SocketConnection) serves both, and only the socket it is handed differs, along with
 * what the front door learns of the peer (a verified client certificate's subject).
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import {
  AbortError,
  ErrorCode,
  FrameLengthError,
  FrameReader,
  ProtocolError,
  UnknownOpError,
  connectRequestHasReadOnly,
  decodeConnectRequest,
  decodeRequest,
  encodeConnectResponse,
  encodeNotificationFrame,
  encodeReplyFrame,
  fourLetterWord,
  frame,
  type CloseReason,
  type ConnectRequest,
  type Reply,
  type Request,
  type WatcherEvent,
} from '@tenure/protocol';
import type { AcceptResult, FrontDoor, PeerInfo } from './front-door.js';
import { answerFourLetterWord, opAbbreviation, type ConnectionStats } from './four-letter-words.js';
import type { ConnectionSink, ServerConnection } from '../semantics/server-connection.js';
import type { TlsListenOptions } from './tls-listener.js';

export interface ListenOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default '127.0.0.1' (an embedded server is local unless asked otherwise). */
  host?: string;
  backlog?: number;
  /**
   * A connection that has not completed a ConnectRequest (or a four-letter word) by then is closed,
   * as ZooKeeper closes sessionless connections (zookeeper.nio.sessionlessCnxnTimeout). Default 10,000 ms.
   */
  handshakeTimeoutMs?: number;
  /** Serve TLS on this port (ZooKeeper's secureClientPort) instead of plaintext; see TlsListenOptions. */
  tls?: TlsListenOptions;
}

/** Where a listener is bound. */
export interface ListenAddress extends AddressInfo {
  /** `host:port` for a ZooKeeper connect string (`[v6]:port` for IPv6). */
  connectString: string;
}

/** Below this many queued bytes the frames of one turn are copied into one buffer; above, writev. */
const COALESCE_BYTES = 64 * 1024;
/** A connection whose peer does not read stops being read once this much output is queued. */
const WRITE_HIGH_WATER = 4 * 1024 * 1024;
/** How long a closed connection waits for its peer to close before the socket is destroyed. */
const LINGER_MS = 2000;
const ZERO_PASSWD = Buffer.alloc(16);

// A request's reply needs its xid and op code; both travel in the server's token as one number
// (xid * 1024 + op + 512), so that a request allocates no token object.
const OP_SPAN = 1024;
const OP_BIAS = 512;
const tokenOf = (xid: number, op: number): number => xid * OP_SPAN + (op >= -OP_BIAS && op < OP_BIAS ? op + OP_BIAS : OP_BIAS);

type Stop = 'accepting' | 'backpressure' | 'refused' | 'throttled' | 'draining';

const FIRST = 0; // nothing read yet: a four-letter word or a ConnectRequest
const HANDSHAKE = 1; // reading the ConnectRequest frame
const ACCEPTING = 2; // the server is setting the session up; the socket is not read
const OPEN = 3;
const CLOSED = 4;

export class TcpListener {
  protected readonly netServer: Server;
  readonly sockets = new Set<SocketConnection>();
  readonly startedAt = Date.now();
  /** Totals over every connection this listener served, for srvr/mntr. */
  readonly totals = { received: 0, sent: 0, minLatencyMs: Infinity, maxLatencyMs: 0, latencySumMs: 0, latencyCount: 0 };
  private address: ListenAddress | undefined;
  private closing: Promise<void> | undefined;
  handshakeTimeoutMs = 10_000;

  /** `netServer`: a server of the caller's (the TLS listener's) that hands its sockets to `adopt`. */
  constructor(
    readonly server: FrontDoor,
    netServer?: Server,
  ) {
    this.netServer = netServer ?? createServer({ noDelay: true }, (socket) => this.adopt(socket, { address: socket.remoteAddress }));
    this.netServer.on('error', (err) => this.server.logger?.warn({ err }, 'listener error'));
  }

  listen(options: ListenOptions = {}): Promise<ListenAddress> {
    const host = options.host ?? '127.0.0.1';
    if (options.handshakeTimeoutMs !== undefined) this.handshakeTimeoutMs = options.handshakeTimeoutMs;
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.netServer.once('error', onError);
      this.netServer.listen({ port: options.port ?? 0, host, backlog: options.backlog }, () => {
        this.netServer.off('error', onError);
        const a = this.netServer.address() as AddressInfo;
        const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
        this.address = { ...a, connectString: `${h}:${a.port}` };
        resolve(this.address);
      });
    });
  }

  get bound(): ListenAddress | undefined {
    return this.address;
  }

  /**
   * Shutdown's first step: takes no new connections and reads no more requests; what was received
   * is still answered.
   */
  stopAccepting(): void {
    for (const s of this.sockets) s.drain();
    // The port closes at once; close()'s callback would wait for every open socket to end.
    if (this.netServer.listening) this.netServer.close();
  }

  /** Stops listening and destroys every socket (sessions were aborted by the server already). */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      for (const s of [...this.sockets]) s.destroy();
      if (!this.netServer.listening) resolve();
      else this.netServer.close(() => resolve());
    });
    return this.closing;
  }

  /** Serves a connected socket (plaintext, or TLS once its handshake is done). */
  protected adopt(socket: Socket, peer?: PeerInfo): void {
    if (this.closing !== undefined || this.server.closed) {
      socket.destroy();
      return;
    }
    this.sockets.add(new SocketConnection(this, socket, peer));
  }

  recordLatency(ms: number, replies: number): void {
    const t = this.totals;
    if (ms < t.minLatencyMs) t.minLatencyMs = ms;
    if (ms > t.maxLatencyMs) t.maxLatencyMs = ms;
    t.latencySumMs += ms * replies;
    t.latencyCount += replies;
  }
}

/** One TCP or TLS connection: the handshake, then frames in and out of its ServerConnection. */
class SocketConnection implements ConnectionSink, ConnectionStats {
  // ---- ConnectionStats (cons, stat) ----
  readonly remote: string;
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

  private state = FIRST;
  private conn: ServerConnection | undefined;
  private readonly reader: FrameReader;
  /** The first bytes of a connection while fewer than 4 have arrived. */
  private head: Buffer | undefined;
  /** Frames that arrived with the ConnectRequest, served once the session is set up. */
  private early: Buffer[] = [];
  /** Frames read but not yet handed over while throttled (globalOutstandingLimit) or draining. */
  private backlog: Buffer[] = [];
  private out: Buffer[] = [];
  private outBytes = 0;
  private flushQueued = false;
  private repliesQueued = 0;
  /** When the chunk that produced the queued replies was read (for latency). */
  private readAt = 0;
  /**
   * Reasons the socket is not read: accepting, write backpressure, a refused frame, the server's
   * outstanding limit, shutdown.
   */
  private readonly stops = new Set<Stop>();
  private readonly abort = new AbortController();
  private linger: NodeJS.Timeout | undefined;
  /** Closes a connection that never completes its handshake. */
  private handshakeTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly listener: TcpListener,
    private readonly socket: Socket,
    private readonly peer: PeerInfo | undefined,
  ) {
    this.reader = new FrameReader(listener.server.limits.maxBufferBytes);
    const addr = socket.remoteAddress ?? '?';
    this.remote = `/${addr}:${socket.remotePort ?? 0}`;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.peerEnded());
    socket.on('error', () => this.destroy());
    socket.on('close', () => this.onSocketClose());
    socket.on('drain', () => this.resume('backpressure'));
    this.handshakeTimer = setTimeout(() => this.destroy(), listener.handshakeTimeoutMs);
    this.handshakeTimer.unref();
  }

  get sessionId(): bigint | undefined {
    return this.conn?.session.id;
  }

  get timeoutMs(): number | undefined {
    return this.conn?.session.timeoutMs;
  }

  get established(): boolean {
    return this.state === OPEN && this.conn !== undefined;
  }

  get queuedFrames(): number {
    return this.out.length;
  }

  /** Whether the socket is being read (ZooKeeper's interest ops in `cons`). */
  get reading(): boolean {
    return this.state !== CLOSED && this.stops.size === 0;
  }

  // ---- input ----

  private onData(chunk: Buffer): void {
    if (this.state === CLOSED) return;
    try {
      if (this.state === FIRST) {
        const bytes = this.head === undefined ? chunk : Buffer.concat([this.head, chunk]);
        if (bytes.length < 4) {
          this.head = bytes;
          return;
        }
        this.head = undefined;
        const word = fourLetterWord(bytes);
        if (word !== undefined) {
          this.fourLetterWord(word);
          return;
        }
        this.state = HANDSHAKE;
        chunk = bytes;
      }
      this.readAt = performance.now();
      let frames: Buffer[];
      try {
        frames = this.reader.push(chunk);
      } catch (err) {
        this.badLength(err);
        return;
      }
      for (const payload of frames) {
        if (this.state === OPEN) this.take(payload);
        else if (this.state === HANDSHAKE) this.handshake(payload);
        else if (this.state === ACCEPTING) this.early.push(payload);
        else break;
      }
    } catch (err) {
      // Never let one connection take the server down.
      this.listener.server.logger?.warn({ err, remote: this.remote }, 'TCP connection failed');
      this.destroy();
    }
  }

  /** A negative or oversized length: before a session, drop the socket; after, the pipeline closes it in order. */
  private badLength(err: unknown): void {
    if (!(err instanceof FrameLengthError) || this.state !== OPEN || this.conn === undefined) {
      this.destroy();
      return;
    }
    this.stop('refused');
    this.received++;
    this.listener.totals.received++;
    this.listener.server.receive(this.conn, null, tokenOf(0, 0), true);
  }

  private handshake(payload: Buffer): void {
    let req: ConnectRequest;
    let withReadOnly: boolean;
    try {
      req = decodeConnectRequest(payload);
      withReadOnly = connectRequestHasReadOnly(payload);
    } catch {
      this.destroy();
      return;
    }
    this.received++;
    this.listener.totals.received++;
    clearTimeout(this.handshakeTimer);
    this.state = ACCEPTING;
    this.stop('accepting');
    this.listener.server
      .accept(
        {
          sessionId: req.sessionId,
          passwd: req.passwd,
          lastZxidSeen: req.lastZxidSeen,
          timeoutMs: req.timeOut,
          readOnly: req.readOnly,
          signal: this.abort.signal,
        },
        this,
        this.peer,
      )
      .then(
        (result) => this.accepted(result, withReadOnly),
        (err: unknown) => {
          // Closed, restarting, or the client has seen a newer zxid: close without an answer.
          if (!(err instanceof AbortError)) this.listener.server.logger?.debug?.({ err, remote: this.remote }, 'handshake refused');
          this.destroy();
        },
      );
  }

  private accepted(result: AcceptResult, withReadOnly: boolean): void {
    try {
      if (this.state === CLOSED) {
        if (result.kind === 'connected') result.connection.closeByClient();
        return;
      }
      if (result.kind === 'expired') {
        // ZooKeeper's answer for an expired or unknown session or a wrong password, then a close.
        this.writeNow(
          frame(
            encodeConnectResponse({ protocolVersion: 0, timeOut: 0, sessionId: 0n, passwd: ZERO_PASSWD, readOnly: false }, withReadOnly),
          ),
        );
        this.end();
        return;
      }
      const conn = (this.conn = result.connection);
      this.writeNow(
        frame(
          encodeConnectResponse(
            { protocolVersion: 0, timeOut: result.timeoutMs, sessionId: conn.session.id, passwd: conn.session.passwd, readOnly: false },
            withReadOnly,
          ),
        ),
      );
      this.state = OPEN;
      const early = this.early;
      this.early = [];
      for (const p of early) {
        if (this.state !== OPEN) break;
        this.take(p);
      }
      this.resume('accepting');
    } catch (err) {
      this.listener.server.logger?.warn({ err, remote: this.remote }, 'TCP connection failed');
      this.destroy();
    }
  }

  /** A request frame: handed over now, or kept while the server has us wait. */
  private take(payload: Buffer): void {
    if (this.stops.has('throttled') || this.stops.has('draining')) this.backlog.push(payload);
    else this.request(payload);
  }

  private request(payload: Buffer): void {
    const conn = this.conn!;
    this.received++;
    this.listener.totals.received++;
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
        if (!(err instanceof UnknownOpError)) this.listener.server.logger?.debug?.({ err, remote: this.remote }, 'unreadable request body');
      } else {
        this.destroy();
        return;
      }
    }
    this.lastOp = opAbbreviation(header.type);
    if (header.xid > 0) this.lastCxid = header.xid;
    this.listener.server.receive(conn, request, tokenOf(header.xid, header.type));
  }

  private fourLetterWord(word: string): void {
    clearTimeout(this.handshakeTimer);
    this.received++;
    this.listener.totals.received++;
    let text: string;
    try {
      text = answerFourLetterWord(word, this.listener.server.introspection, this.listener);
    } catch (err) {
      this.listener.server.logger?.warn({ err, word }, 'four-letter word failed');
      text = '';
    }
    this.state = CLOSED;
    this.socket.end(text);
    this.lingerThenDestroy();
  }

  // ---- ConnectionSink ----

  deliverReply(token: unknown, reply: Reply): void {
    if (this.state === CLOSED) return;
    const t = token as number;
    const xid = Math.floor(t / OP_SPAN);
    const op = t - xid * OP_SPAN - OP_BIAS;
    let bytes: Buffer;
    try {
      bytes = encodeReplyFrame({ xid, zxid: reply.zxid, err: reply.err }, op, reply.response);
    } catch (err) {
      this.listener.server.logger?.warn({ err, op }, 'reply could not be encoded');
      bytes = encodeReplyFrame({ xid, zxid: reply.zxid, err: ErrorCode.MARSHALLINGERROR }, op);
    }
    if (reply.zxid > 0n) this.lastZxid = reply.zxid;
    this.repliesQueued++;
    this.queue(bytes);
  }

  deliverEvent(event: WatcherEvent, zxid: bigint): void {
    if (this.state === CLOSED) return;
    this.queue(encodeNotificationFrame(zxid, event));
  }

  deliverClose(_reason: CloseReason): void {
    if (this.state === CLOSED) return;
    this.conn = undefined;
    this.flush();
    this.end();
  }

  // ---- output ----

  private queue(bytes: Buffer): void {
    this.out.push(bytes);
    this.outBytes += bytes.length;
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
      this.listener.server.logger?.warn({ err, remote: this.remote }, 'TCP write failed');
      this.destroy();
    }
  };

  private flush(): void {
    this.flushQueued = false;
    const q = this.out;
    const n = q.length;
    if (n === 0 || this.state === CLOSED) return;
    const total = this.outBytes;
    this.out = [];
    this.outBytes = 0;
    this.sent += n;
    this.listener.totals.sent += n;
    if (this.repliesQueued > 0) this.noteLatency();
    const socket = this.socket;
    if (n === 1) socket.write(q[0]!);
    else if (total <= COALESCE_BYTES) socket.write(Buffer.concat(q, total));
    else {
      socket.cork();
      for (let i = 0; i < n; i++) socket.write(q[i]!);
      socket.uncork();
    }
    if (socket.writableLength > WRITE_HIGH_WATER) this.stop('backpressure');
  }

  private noteLatency(): void {
    const now = performance.now();
    const ms = Math.max(0, now - this.readAt);
    const replies = this.repliesQueued;
    this.repliesQueued = 0;
    this.lastResponseAt = Date.now();
    this.lastLatencyMs = ms;
    if (ms < this.minLatencyMs) this.minLatencyMs = ms;
    if (ms > this.maxLatencyMs) this.maxLatencyMs = ms;
    this.latencySumMs += ms * replies;
    this.latencyCount += replies;
    this.listener.recordLatency(ms, replies);
  }

  /** Writes at once (handshake answers: nothing else is queued yet). */
  private writeNow(bytes: Buffer): void {
    this.sent++;
    this.listener.totals.sent++;
    this.socket.write(bytes);
  }

  // ---- flow and close ----

  /** ConnectionSink: the server owes too many replies (globalOutstandingLimit). */
  pauseReading(): void {
    if (this.state !== CLOSED) this.stop('throttled');
  }

  /** ConnectionSink: the server takes requests from this connection again. */
  resumeReading(): void {
    if (!this.stops.delete('throttled')) return;
    // Not inside the server's delivery: the frames kept back go in a microtask, before any new read.
    queueMicrotask(() => {
      try {
        while (this.backlog.length > 0 && this.state === OPEN && !this.stops.has('throttled') && !this.stops.has('draining')) {
          this.request(this.backlog.shift()!);
        }
      } catch (err) {
        this.listener.server.logger?.warn({ err, remote: this.remote }, 'TCP connection failed');
        this.destroy();
        return;
      }
      if (this.stops.size === 0 && this.state !== CLOSED) this.socket.resume();
    });
  }

  /** Shutdown: read nothing more; what was handed over is still answered. */
  drain(): void {
    if (this.state !== CLOSED) this.stop('draining');
  }

  private stop(why: Stop): void {
    this.stops.add(why);
    this.socket.pause();
  }

  private resume(why: Stop): void {
    if (!this.stops.delete(why)) return;
    if (this.stops.size === 0 && this.state !== CLOSED) this.socket.resume();
  }

  /** Sends what is queued, then a FIN; the socket goes once the peer closes (or after LINGER_MS). */
  private end(): void {
    if (this.state === CLOSED) return;
    this.state = CLOSED;
    this.abort.abort();
    this.socket.end();
    // Keep reading (and discarding) so the peer's late requests do not turn our FIN into a reset.
    this.stops.clear();
    this.socket.resume();
    this.lingerThenDestroy();
  }

  private lingerThenDestroy(): void {
    this.linger = setTimeout(() => this.socket.destroy(), LINGER_MS);
    this.linger.unref();
  }

  /** Drops the socket at once. */
  destroy(): void {
    if (this.state !== CLOSED) this.state = CLOSED;
    this.socket.destroy();
    this.onSocketClose();
  }

  /**
   * The peer closed its end. After our own close, Node finishes the socket once our output is out;
   * before it, the client went away: the session lives on until it expires.
   */
  private peerEnded(): void {
    if (this.state !== CLOSED) this.destroy();
  }

  private onSocketClose(): void {
    this.state = CLOSED;
    this.abort.abort();
    clearTimeout(this.handshakeTimer);
    if (this.linger !== undefined) clearTimeout(this.linger);
    this.out = [];
    this.outBytes = 0;
    this.backlog = [];
    const conn = this.conn;
    this.conn = undefined;
    conn?.closeByClient();
    this.listener.sockets.delete(this);
  }
}
