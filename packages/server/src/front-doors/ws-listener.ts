/**
 * The server on WebSocket: ZooKeeper's wire protocol with one frame per binary message, in front of
 * the same front door (front-door.ts) as the TCP listener and the in-process transport, so sessions,
 * ordering, injected faults and the maxBuffer rule behave as they do there.
 *
 * Limits: a message may carry at most maxBufferBytes of frame (`ws` maxPayload; a larger message
 * closes the connection, code 1009); a frame whose length announces more is refused through the
 * request pipeline, as on TCP. Every peer is pinged (websocket-endpoint.ts) and one that stops
 * answering is closed. Bad input closes that one connection and nothing else: a text message, a
 * message that is not exactly one frame, an undecodable handshake or request header.
 */
import type { IncomingMessage } from 'node:http';
import { TLSSocket, type TlsOptions } from 'node:tls';
import type { WebSocket } from 'ws';
import { AbortError, ErrorCode, ProtocolError, frame } from '@tenure/protocol';
import {
  connectRequestHasReadOnly,
  decodeConnectRequest,
  decodeRequest,
  encodeConnectResponse,
  encodeNotificationFrame,
  encodeReplyFrame,
} from '@tenure/protocol';
import type { CloseReason, Reply, WatcherEvent } from '@tenure/protocol';
import type { AcceptResult, FrontDoor, PeerInfo } from './front-door.js';
import type { ConnectionSink, ServerConnection } from '../semantics/server-connection.js';
import type { ListenOptions } from './tcp-listener.js';
import { peerOf } from './tls-listener.js';
import { WebSocketEndpoint, batchWrites, frameProblem, messageBuffer } from './websocket-endpoint.js';
import type { WebSocketAddress, WebSocketEndpointOptions } from './websocket-endpoint.js';

/** A connection whose peer does not read stops being read once this much output is queued. */
const WRITE_HIGH_WATER = 4 * 1024 * 1024;
const ZERO_PASSWD = Buffer.alloc(16);

/** The reply to a request needs its xid and op code. */
interface ReplyTo {
  readonly xid: number;
  readonly op: number;
}

export class WebSocketListener {
  private readonly endpoint: WebSocketEndpoint;
  private handshakeTimeoutMs = 10_000;
  readonly connections = new Set<WebSocketConnection>();

  constructor(
    readonly server: FrontDoor,
    options: WebSocketEndpointOptions = {},
    /** Serve `wss://` with these options (HTTPS); plain `ws://` without. */
    tls?: TlsOptions,
  ) {
    // A message is one frame: its 4-byte length prefix plus at most maxBufferBytes.
    this.endpoint = new WebSocketEndpoint(options, server.limits.maxBufferBytes + 4, server.logger, (ws, req) => this.adopt(ws, req), tls);
  }

  listen(options: ListenOptions = {}): Promise<WebSocketAddress> {
    if (options.handshakeTimeoutMs !== undefined) this.handshakeTimeoutMs = options.handshakeTimeoutMs;
    return this.endpoint.listen(options);
  }

  /** Upgrades refused (wrong path, origin not allowed). */
  get refused(): { readonly path: number; readonly origin: number } {
    return this.endpoint.refused;
  }

  /** Shutdown's first step: no new connections, no more requests read; what was received is still answered. */
  stopAccepting(): void {
    this.endpoint.stopAccepting();
    for (const c of this.connections) c.drain();
  }

  close(): Promise<void> {
    return this.endpoint.close();
  }

  private adopt(ws: WebSocket, req: IncomingMessage): void {
    if (this.server.closed) {
      ws.terminate();
      return;
    }
    let peer: PeerInfo = { address: req.socket.remoteAddress };
    if (req.socket instanceof TLSSocket) {
      // wss://: a client certificate the server verified is the x509 identity, as on the TLS listener.
      try {
        peer = peerOf(req.socket);
      } catch (err) {
        this.server.logger?.warn({ err, remote: req.socket.remoteAddress }, 'unreadable client certificate subject');
        ws.terminate();
        return;
      }
    }
    const c = new WebSocketConnection(this, ws, peer, this.handshakeTimeoutMs);
    this.connections.add(c);
  }
}

/** One WebSocket: the handshake, then frames in and out of its ServerConnection. */
class WebSocketConnection implements ConnectionSink {
  private phase: 'handshake' | 'accepting' | 'open' | 'closed' = 'handshake';
  private conn: ServerConnection | undefined;
  /** Messages that arrived while the session was being set up; served once it is. */
  private early: Buffer[] = [];
  private readonly abort = new AbortController();
  private readonly handshakeTimer: NodeJS.Timeout;
  /** Why the socket is not read: write backpressure, the server's outstanding limit, shutdown. */
  private readonly stops = new Set<'backpressure' | 'throttled' | 'draining'>();
  /** Requests that arrived while throttled or draining (`ws` may still emit a chunk's messages after pause). */
  private backlog: Buffer[] = [];
  /** An oversized frame was handed to the pipeline, which closes the connection: later input is dropped. */
  private refused = false;
  private readonly server: FrontDoor;
  private readonly address: string | undefined;
  /** Corks the socket until the end of the microtask: a flush's frames leave in one write. */
  private readonly batch: () => void;

  constructor(
    private readonly listener: WebSocketListener,
    private readonly ws: WebSocket,
    private readonly peer: PeerInfo,
    handshakeTimeoutMs: number,
  ) {
    this.address = peer.address;
    const address = this.address;
    this.server = listener.server;
    this.batch = batchWrites(ws);
    ws.binaryType = 'nodebuffer';
    ws.on('message', (data, isBinary) => this.onMessage(messageBuffer(data), isBinary));
    ws.on('error', (err) => {
      this.server.logger?.debug?.({ err, remote: address }, 'WebSocket error');
      this.terminate();
    });
    ws.on('close', () => this.onClosed());
    this.handshakeTimer = setTimeout(() => this.terminate(), handshakeTimeoutMs);
    this.handshakeTimer.unref();
  }

  // ---- input ----

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.phase === 'closed' || this.refused) return;
    try {
      const problem = frameProblem(data, isBinary, this.server.limits.maxBufferBytes);
      if (problem === 'length' && this.phase === 'open') {
        // As on TCP: the request pipeline (and its faults) closes the connection; nothing after it is read.
        this.refused = true;
        this.server.receive(this.conn!, null, { xid: 0, op: 0 } satisfies ReplyTo, true);
        return;
      }
      if (problem !== undefined) {
        this.server.logger?.debug?.({ problem, remote: this.address }, 'WebSocket message is not one frame');
        this.terminate(1002);
        return;
      }
      const payload = data.subarray(4);
      if (this.phase === 'open') this.take(payload);
      else if (this.phase === 'handshake') this.handshake(payload);
      else this.early.push(payload);
    } catch (err) {
      // Never let one connection take the server down.
      this.server.logger?.warn({ err, remote: this.address }, 'WebSocket connection failed');
      this.terminate(1011);
    }
  }

  private handshake(payload: Buffer): void {
    let hello;
    let withReadOnly;
    try {
      hello = decodeConnectRequest(payload);
      withReadOnly = connectRequestHasReadOnly(payload);
    } catch {
      this.terminate(1002);
      return;
    }
    clearTimeout(this.handshakeTimer);
    this.phase = 'accepting';
    const params = {
      sessionId: hello.sessionId,
      passwd: hello.passwd,
      lastZxidSeen: hello.lastZxidSeen,
      timeoutMs: hello.timeOut,
      readOnly: hello.readOnly,
      signal: this.abort.signal,
    };
    this.server.accept(params, this, this.address === undefined && this.peer.x509Subject === undefined ? undefined : this.peer).then(
      (result) => this.accepted(result, withReadOnly),
      (err: unknown) => {
        // Closed, restarting, or the client has seen a newer zxid: close without an answer.
        if (!(err instanceof AbortError)) this.server.logger?.debug?.({ err, remote: this.address }, 'handshake refused');
        this.terminate(1013);
      },
    );
  }

  private accepted(result: AcceptResult, withReadOnly: boolean): void {
    if (this.phase === 'closed') {
      if (result.kind === 'connected') result.connection.closeByClient();
      return;
    }
    const answer = (timeOut: number, sessionId: bigint, passwd: Buffer): Buffer =>
      frame(encodeConnectResponse({ protocolVersion: 0, timeOut, sessionId, passwd, readOnly: false }, withReadOnly));
    if (result.kind === 'expired') {
      // ZooKeeper's answer for an expired or unknown session or a wrong password, then a close.
      this.ws.send(answer(0, 0n, ZERO_PASSWD));
      this.phase = 'closed';
      this.ws.close(1000, 'session expired');
      return;
    }
    const conn = (this.conn = result.connection);
    this.ws.send(answer(result.timeoutMs, conn.session.id, conn.session.passwd));
    this.phase = 'open';
    for (const p of this.early.splice(0)) {
      if (this.phase !== 'open') break;
      this.take(p);
    }
  }

  /** A request: handed over now, or kept while the server has us wait. */
  private take(payload: Buffer): void {
    // Behind a backlog not yet drained too, so that requests keep their order.
    if (this.backlog.length > 0 || this.stops.has('throttled') || this.stops.has('draining')) this.backlog.push(payload);
    else this.request(payload);
  }

  private request(payload: Buffer): void {
    let decoded;
    try {
      decoded = decodeRequest(payload);
    } catch (err) {
      const header = err instanceof ProtocolError ? err.header : undefined;
      if (header === undefined) {
        this.terminate(1002);
        return;
      }
      // Unknown op (UNIMPLEMENTED then a close) or unreadable body (MARSHALLINGERROR): the pipeline answers.
      decoded = { header, request: { type: header.type } };
    }
    const replyTo: ReplyTo = { xid: decoded.header.xid, op: decoded.header.type };
    this.server.receive(this.conn!, decoded.request, replyTo);
  }

  // ---- ConnectionSink ----

  deliverReply(token: unknown, reply: Reply): void {
    if (this.phase === 'closed') return;
    const { xid, op } = token as ReplyTo;
    const header = { xid, zxid: reply.zxid, err: reply.err };
    let bytes: Buffer;
    try {
      bytes = encodeReplyFrame(header, op, reply.response);
    } catch (err) {
      this.server.logger?.warn({ err, op }, 'reply could not be encoded');
      bytes = encodeReplyFrame({ ...header, err: ErrorCode.MARSHALLINGERROR }, op);
    }
    this.write(bytes);
  }

  deliverEvent(event: WatcherEvent, zxid: bigint): void {
    if (this.phase !== 'closed') this.write(encodeNotificationFrame(zxid, event));
  }

  deliverClose(reason: CloseReason): void {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    this.conn = undefined;
    this.abort.abort();
    // Read again, or the peer's answer to our close frame is never seen.
    if (this.stops.size > 0) this.ws.resume();
    // Queued after every frame already sent: the peer reads them all, then the close.
    this.ws.close(1000, reason.message.slice(0, 120));
  }

  // ---- output and flow ----

  private write(bytes: Buffer): void {
    this.batch();
    this.ws.send(bytes, this.afterWrite);
    if (!this.stops.has('backpressure') && this.ws.bufferedAmount > WRITE_HIGH_WATER) this.stop('backpressure');
  }

  private readonly afterWrite = (): void => {
    if (this.stops.has('backpressure') && this.ws.bufferedAmount < WRITE_HIGH_WATER / 2) this.resume('backpressure');
  };

  /** ThrottleSink: the server owes too many replies (globalOutstandingLimit). */
  pauseReading(): void {
    if (this.phase !== 'closed') this.stop('throttled');
  }

  /** ThrottleSink: the server takes requests from this connection again. */
  resumeReading(): void {
    if (!this.stops.delete('throttled')) return;
    // Not inside the server's delivery: the requests kept back go in a microtask, before any new read.
    queueMicrotask(() => {
      try {
        while (this.backlog.length > 0 && this.phase === 'open' && !this.stops.has('throttled') && !this.stops.has('draining')) {
          this.request(this.backlog.shift()!);
        }
      } catch (err) {
        this.server.logger?.warn({ err, remote: this.address }, 'WebSocket connection failed');
        this.terminate(1011);
        return;
      }
      if (this.stops.size === 0 && this.phase !== 'closed') this.ws.resume();
    });
  }

  /** Shutdown: read nothing more; what was handed over is still answered. */
  drain(): void {
    if (this.phase !== 'closed') this.stop('draining');
  }

  private stop(why: 'backpressure' | 'throttled' | 'draining'): void {
    this.stops.add(why);
    this.ws.pause();
  }

  private resume(why: 'backpressure' | 'throttled' | 'draining'): void {
    if (!this.stops.delete(why)) return;
    if (this.stops.size === 0 && this.phase === 'open') this.ws.resume();
  }

  /** Drops the connection at once (bad input, handshake timeout, refusal). */
  private terminate(code?: number): void {
    if (code !== undefined && this.ws.readyState === this.ws.OPEN) {
      this.ws.close(code);
      // A peer that does not answer the close is dropped by `ws` after its own close timeout.
    } else {
      this.ws.terminate();
    }
    this.onClosed();
  }

  private onClosed(): void {
    if (this.phase !== 'closed') this.phase = 'closed';
    this.abort.abort();
    clearTimeout(this.handshakeTimer);
    this.early = [];
    this.backlog = [];
    const conn = this.conn;
    this.conn = undefined;
    conn?.closeByClient();
    this.listener.connections.delete(this);
  }
}
