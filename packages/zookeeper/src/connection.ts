/**
 * One TCP or TLS connection to one ZooKeeper server (docs/zookeeper-wire-protocol.md §2–§3): the handshake, request
 * framing with sequential xids, FIFO reply matching, out-of-band ping/auth replies and
 * notifications. No timers and no retries: the client owns those (docs/architecture.md).
 *
 * Over TLS the framing is the same; a TLS failure before ZooKeeper's handshake is answered (an
 * alert, also one that arrives after 'secureConnect', or the embedded TLS listener's in-band
 * certificate refusal) rejects the attempt with a TlsError (tls-options.ts) instead of a
 * ConnectionLossError.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import {
  AbortError,
  ConnectionLossError,
  EARLY_FLUSH_FRAMES,
  FrameReader,
  KeeperError,
  REPLY_HEADER_BYTES,
  OpCode,
  ProtocolError,
  Xid,
  decodeConnectResponse,
  decodeReply,
  decodeReplyHeader,
  decodeWatcherEvent,
  encodeConnectRequest,
  encodeRequestFrame,
  frame,
  TenureError,
  asError,
} from '@tenure/protocol';
import type {
  CloseReason,
  ConnectParams,
  ConnectResult,
  Connection,
  ConnectionHandlers,
  Reply,
  Request,
  ResponseFor,
} from '@tenure/protocol';
import { eventFromServer, requestToServer, responseFromServer } from './chroot.js';
import type { HostPort } from './connect-string.js';
import { RequestQueue, type PendingRequest } from './request-queue.js';
import { certificateRefusal, tlsRefusal, type TlsOptions } from './tls-options.js';

const HANDSHAKE = 0;
const OPEN = 1;
const CLOSED = 2;
type State = typeof HANDSHAKE | typeof OPEN | typeof CLOSED;

const MAX_XID = 0x7fffffff;

/** The xid after `xid`: positive, wrapping from 2^31-1 back to 1 (0 and negatives are special xids). */
export function followingXid(xid: number): number {
  return xid >= MAX_XID || xid < 0 ? 1 : xid + 1;
}
/** Below this many queued bytes a flush copies frames into one buffer; above it, writev via cork. */
const COALESCE_BYTES = 64 * 1024;

const EMPTY_PASSWD = Buffer.alloc(16);

export interface ConnectionOptions {
  chroot: string;
  maxFrameBytes: number;
  /** Connect over TLS with these options (host and port come from the target). */
  tls?: TlsOptions | undefined;
}

function pathOf(req: Request): string | undefined {
  return 'path' in req ? req.path : undefined;
}

/** Opens a connection and performs the handshake; see Transport.connect. */
export function openConnection(
  target: HostPort,
  server: string,
  params: ConnectParams,
  handlers: ConnectionHandlers,
  options: ConnectionOptions,
): Promise<ConnectResult> {
  if (params.signal?.aborted) {
    return Promise.reject(new AbortError(`connect to ${server} aborted`, { cause: params.signal.reason }));
  }
  return new Promise<ConnectResult>((resolve, reject) => {
    new ZooKeeperConnection(target, server, params, handlers, options, resolve, reject);
  });
}

class ZooKeeperConnection implements Connection {
  sessionId = 0n;
  passwd: Buffer = EMPTY_PASSWD;
  negotiatedTimeoutMs = 0;
  readOnly = false;

  private state: State = HANDSHAKE;
  private readonly socket: Socket;
  private readonly reader: FrameReader;
  private readonly chroot: string;
  private xid = 0;
  private readonly pending = new RequestQueue();
  // Ping and auth replies are answered out of band (docs/zookeeper-wire-protocol.md §3.3); each has its own FIFO.
  private readonly pings: PendingRequest[] = [];
  private readonly auths: PendingRequest[] = [];
  private outq: Buffer[] = [];
  private outBytes = 0;
  private flushScheduled = false;
  private readonly flushBound = (): void => this.flush();
  private readonly signal: AbortSignal | undefined;
  private readonly onAbort = (): void => this.fail({ kind: 'client', message: 'connect aborted' }, 'abort');
  private readonly tls: TlsOptions | undefined;

  constructor(
    target: HostPort,
    readonly server: string,
    params: ConnectParams,
    private readonly handlers: ConnectionHandlers,
    options: ConnectionOptions,
    private resolveHandshake: ((r: ConnectResult) => void) | undefined,
    private rejectHandshake: ((e: Error) => void) | undefined,
  ) {
    this.chroot = options.chroot;
    this.reader = new FrameReader(options.maxFrameBytes);
    // Encoded first: bad params throw here, before any socket exists.
    const hello = frame(
      encodeConnectRequest({
        protocolVersion: 0,
        lastZxidSeen: params.lastZxidSeen,
        timeOut: params.timeoutMs,
        sessionId: params.sessionId,
        passwd: params.passwd,
        readOnly: params.readOnly,
      }),
    );
    this.tls = options.tls;
    const socket = (this.socket =
      options.tls === undefined
        ? netConnect({ host: target.host, port: target.port, noDelay: true })
        : tlsConnect({ ...options.tls, host: target.host, port: target.port }));
    if (options.tls !== undefined) socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.fail({ kind: 'server', message: `${server} closed the connection` }));
    socket.on('error', (error: Error) => this.onSocketError(error));
    socket.on('close', () => this.fail({ kind: 'network', message: `connection to ${server} closed` }));
    this.signal = params.signal;
    this.signal?.addEventListener('abort', this.onAbort, { once: true });

    // Written before 'connect' (the socket queues it, a TLS socket until its handshake is done);
    // nothing else is sent until the answer arrives.
    socket.write(hello);
  }

  private onSocketError(error: Error): void {
    // Before ZooKeeper's handshake is answered, a TLS alert or certificate check is a refusal;
    // under TLS 1.3 a refused client certificate arrives as an alert after 'secureConnect'.
    const refusal = this.tls !== undefined && this.state === HANDSHAKE ? tlsRefusal(error, this.server, this.tls) : undefined;
    if (refusal !== undefined) this.fail({ kind: 'network', message: refusal.message, error: refusal }, 'tls');
    else this.fail({ kind: 'network', message: `${this.server}: ${error.message}`, error });
  }

  get closed(): boolean {
    return this.state === CLOSED;
  }

  send<R extends Request>(request: R, onReply?: (reply: Reply<ResponseFor<R>>) => void): Promise<Reply<ResponseFor<R>>> {
    if (this.state !== OPEN) {
      return Promise.reject(new ConnectionLossError(pathOf(request), `connection to ${this.server} is closed`));
    }
    const type = request.type;
    const xid = type === OpCode.ping ? Xid.ping : type === OpCode.auth ? Xid.auth : this.nextXid();
    let bytes: Buffer;
    try {
      bytes = encodeRequestFrame(xid, this.chroot ? requestToServer(this.chroot, request) : request);
    } catch (error) {
      return Promise.reject(asError(error));
    }
    return new Promise<Reply<ResponseFor<R>>>((resolve, reject) => {
      const entry: PendingRequest = {
        xid,
        type,
        path: pathOf(request),
        resolve: resolve as (r: Reply) => void,
        reject,
        onReply: onReply as ((r: Reply) => void) | undefined,
      };
      if (xid === Xid.ping) this.pings.push(entry);
      else if (xid === Xid.auth) this.auths.push(entry);
      else this.pending.push(entry);
      this.write(bytes);
    });
  }

  close(): void {
    this.fail({ kind: 'client', message: 'closed by the client' });
  }

  private nextXid(): number {
    return (this.xid = followingXid(this.xid));
  }

  // Frames sent in one synchronous burst (e.g. Promise.all of many requests) leave in one write.
  // Over TLS the flush waits for the end of the I/O phase: ZooKeeper's Netty server sends each
  // reply as its own TLS record, which Node delivers as its own 'data' event with microtasks run
  // in between, so a microtask flush would send one request (one record, one syscall) per reply.
  private write(bytes: Buffer): void {
    this.outq.push(bytes);
    this.outBytes += bytes.length;
    // A burst that is already EARLY_FLUSH_FRAMES long goes now, so that a pipelining server starts
    // on it (on its own core) while the rest of the burst is made.
    if (this.outq.length >= EARLY_FLUSH_FRAMES && this.tls === undefined) {
      this.flush();
      return;
    }
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      if (this.tls !== undefined) setImmediate(this.flushBound);
      else queueMicrotask(this.flushBound);
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    const q = this.outq;
    const total = this.outBytes;
    this.outq = [];
    this.outBytes = 0;
    if (this.state === CLOSED || q.length === 0) return;
    if (q.length === 1) {
      this.socket.write(q[0]!);
    } else if (total <= COALESCE_BYTES) {
      this.socket.write(Buffer.concat(q, total));
    } else {
      this.socket.cork();
      for (const b of q) this.socket.write(b);
      this.socket.uncork();
    }
  }

  private onData(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.reader.push(chunk);
    } catch (error) {
      this.protocolFailure(error);
      return;
    }
    let callbackError: unknown;
    for (const payload of frames) {
      if (this.state === CLOSED) break;
      try {
        if (this.state === HANDSHAKE) this.onConnectResponse(payload);
        else this.onFrame(payload);
      } catch (error) {
        if (error instanceof HandlerError) {
          callbackError ??= error.cause;
          continue;
        }
        this.protocolFailure(error);
        break;
      }
    }
    // A throwing event handler is the caller's bug: surface it, but only after every frame of the
    // chunk has been processed so the connection's state stays consistent.
    if (callbackError !== undefined)
      queueMicrotask(() => {
        throw asError(callbackError);
      });
  }

  private onConnectResponse(payload: Buffer): void {
    if (payload.length === REPLY_HEADER_BYTES) {
      // A 3.8 read-only server without local sessions refuses a new session with a bare error
      // header (e.g. NOTREADONLY) instead of a ConnectResponse: report that code, typed.
      const header = decodeReplyHeader(payload);
      // Over TLS, AUTHFAILED there is our TLS listener refusing a certificate it could not verify.
      const refusal = this.tls !== undefined ? certificateRefusal(header.err, this.server, this.tls) : undefined;
      if (refusal !== undefined) {
        this.fail({ kind: 'server', message: refusal.message, error: refusal }, 'tls');
        return;
      }
      const error = KeeperError.from(header.err, undefined, `handshake refused by ${this.server}`);
      this.fail({ kind: 'server', message: error.message, error }, 'protocol');
      return;
    }
    const res = decodeConnectResponse(payload);
    const resolve = this.resolveHandshake!;
    this.resolveHandshake = this.rejectHandshake = undefined;
    this.signal?.removeEventListener('abort', this.onAbort);
    if (res.timeOut <= 0) {
      // The server refused the session (expired, unknown or wrong password) and closes the socket.
      this.state = CLOSED;
      this.socket.destroy();
      resolve({ kind: 'expired' });
      return;
    }
    this.sessionId = res.sessionId;
    this.passwd = res.passwd;
    this.negotiatedTimeoutMs = res.timeOut;
    this.readOnly = res.readOnly;
    this.state = OPEN;
    resolve({ kind: 'connected', connection: this });
  }

  private onFrame(payload: Buffer): void {
    if (payload.length < REPLY_HEADER_BYTES) {
      throw new ProtocolError(`reply of ${payload.length} bytes is shorter than a reply header`);
    }
    const xid = payload.readInt32BE(0);
    if (xid === Xid.notification) {
      const header = decodeReplyHeader(payload);
      const event = decodeWatcherEvent(payload, REPLY_HEADER_BYTES);
      try {
        this.handlers.onEvent(this.chroot ? eventFromServer(this.chroot, event) : event, header.zxid);
      } catch (error) {
        throw new HandlerError(error);
      }
      return;
    }
    if (xid === Xid.ping || xid === Xid.auth) {
      const header = decodeReplyHeader(payload);
      // An unsolicited ping/auth answer is harmless; ignore it.
      const entry = (xid === Xid.ping ? this.pings : this.auths).shift();
      if (entry) this.settle(entry, { zxid: header.zxid, err: header.err, response: undefined });
      return;
    }
    const head = this.pending.peek();
    if (head === undefined) throw new ProtocolError(`reply with xid ${xid} but no request is outstanding`);
    if (head.xid !== xid) throw new ProtocolError(`reply xid ${xid} does not match the oldest request's xid ${head.xid}`);
    const { header, response } = decodeReply(payload, head.type);
    this.pending.shift();
    this.settle(head, {
      zxid: header.zxid,
      err: header.err,
      response: response !== undefined && header.err === 0 && this.chroot ? responseFromServer(this.chroot, head.type, response) : response,
    });
  }

  private settle(entry: PendingRequest, reply: Reply): void {
    if (entry.onReply) {
      try {
        entry.onReply(reply);
      } catch (error) {
        // The caller's hook failed: its promise carries the error; the connection goes on.
        entry.reject(error as Error);
        return;
      }
    }
    entry.resolve(reply);
  }

  private protocolFailure(error: unknown): void {
    const e =
      error instanceof ProtocolError
        ? error
        : new ProtocolError(`undecodable frame from ${this.server}: ${String(error)}`, { cause: error });
    this.fail({ kind: 'protocol', message: e.message, error: e }, 'protocol');
  }

  /** Closes once: rejects every waiter with ConnectionLossError, then reports the reason. */
  private fail(reason: CloseReason, cause: 'abort' | 'protocol' | 'tls' | 'other' = 'other'): void {
    if (this.state === CLOSED) return;
    const wasHandshake = this.state === HANDSHAKE;
    this.state = CLOSED;
    this.signal?.removeEventListener('abort', this.onAbort);
    this.socket.destroy();
    this.outq = [];
    this.outBytes = 0;
    if (wasHandshake) {
      // No connection exists yet: the attempt rejects and onClose is not called.
      const reject = this.rejectHandshake!;
      this.resolveHandshake = this.rejectHandshake = undefined;
      if (cause === 'abort') reject(new AbortError(`connect to ${this.server} aborted`, { cause: this.signal?.reason }));
      else if (cause === 'protocol' || cause === 'tls') reject(reason.error!);
      else {
        const e = new ConnectionLossError(undefined, `no handshake answer from ${this.server}: ${reason.message}`);
        if (reason.error) e.cause = reason.error;
        reject(e);
      }
      return;
    }
    const lost = `connection to ${this.server} closed (${reason.kind}: ${reason.message})`;
    for (const list of [this.pending.drain(), this.pings.splice(0), this.auths.splice(0)]) {
      for (const entry of list) entry.reject(new ConnectionLossError(entry.path, lost));
    }
    this.handlers.onClose(reason);
  }
}

/** Wraps an exception thrown by a handler so it is not mistaken for a protocol error. */
class HandlerError extends TenureError {
  constructor(override readonly cause: unknown) {
    super('HANDLER', 'connection handler threw');
  }
}
