/**
 * One WebSocket connection to one server (or gateway): ZooKeeper's handshake and requests, with
 * exactly one frame (int32 length + payload, docs/zookeeper-wire-protocol.md §2.1) per binary message each way. Replies
 * are matched to requests in send order; ping and auth replies are out of band (§3.3).
 *
 * No timers and no retries (the client owns them), and no `node:` import: this file runs in Node
 * over `ws` and in browsers over the global WebSocket alike (see websocket-like.ts).
 */
import {
  AbortError,
  ConnectionLossError,
  KeeperError,
  OpCode,
  ProtocolError,
  REPLY_HEADER_BYTES,
  Xid,
  TenureError,
  asError,
} from '@tenure/protocol';
import {
  decodeConnectResponse,
  decodeReply,
  decodeReplyHeader,
  decodeWatcherEvent,
  encodeConnectRequest,
  encodeRequestFrame,
  frame,
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
import { messageBytes, type OpenWebSocket, type WebSocketLike } from './websocket-like.js';

/** A request waiting for its reply. */
interface Waiter {
  readonly xid: number;
  readonly type: number;
  readonly path: string | undefined;
  resolve(reply: Reply): void;
  reject(error: Error): void;
  readonly onReply: ((reply: Reply) => void) | undefined;
}

interface Handshake {
  resolve(result: ConnectResult): void;
  reject(error: Error): void;
}

const OPEN_STATE = 1; // WebSocket.OPEN in every implementation

/** Opens a connection to `url` and performs the handshake; see Transport.connect. */
export function openWebSocketConnection(
  url: string,
  open: OpenWebSocket,
  params: ConnectParams,
  handlers: ConnectionHandlers,
  maxFrameBytes: number,
): Promise<ConnectResult> {
  if (params.signal?.aborted) return Promise.reject(new AbortError(`connect to ${url} aborted`, { cause: params.signal.reason }));
  return new Promise<ConnectResult>((resolve, reject) => {
    new WebSocketConnection(url, open, params, handlers, maxFrameBytes, { resolve, reject });
  });
}

class WebSocketConnection implements Connection {
  sessionId = 0n;
  passwd: Buffer = Buffer.alloc(16);
  negotiatedTimeoutMs = 0;
  readOnly = false;

  private phase: 'handshake' | 'open' | 'closed' = 'handshake';
  private readonly socket: WebSocketLike;
  private lastXid = 0;
  /** Ordinary requests in send order; the server answers them in that order. */
  private readonly inOrder: Waiter[] = [];
  private inOrderHead = 0;
  private readonly pings: Waiter[] = [];
  private readonly auths: Waiter[] = [];
  /** The last error the socket reported; its close event follows and carries it. */
  private socketError: Error | undefined;
  private readonly signal: AbortSignal | undefined;
  private readonly onAbort = (): void => this.shut({ kind: 'client', message: 'connect aborted' }, 'aborted');

  constructor(
    readonly server: string,
    open: OpenWebSocket,
    params: ConnectParams,
    private readonly handlers: ConnectionHandlers,
    private readonly maxFrameBytes: number,
    private handshake: Handshake | undefined,
  ) {
    // Encoded before the socket exists, so bad params throw without opening anything.
    const { lastZxidSeen, timeoutMs: timeOut, sessionId, passwd, readOnly } = params;
    const hello = frame(encodeConnectRequest({ protocolVersion: 0, lastZxidSeen, timeOut, sessionId, passwd, readOnly }));
    this.signal = params.signal;
    try {
      this.socket = open(server);
    } catch (error) {
      this.socket = undefined as unknown as WebSocketLike;
      this.phase = 'closed';
      this.takeHandshake()?.reject(new ConnectionLossError(undefined, `cannot open ${server}: ${(error as Error).message}`));
      return;
    }
    this.signal?.addEventListener('abort', this.onAbort, { once: true });
    const socket = this.socket;
    // The handlers stay attached after a close: an implementation may still report an error then.
    socket.onopen = () => {
      if (this.phase === 'handshake') socket.send(hello);
    };
    socket.onmessage = (event) => this.onMessage(event.data);
    socket.onerror = (event) => {
      this.socketError ??=
        event.error instanceof Error ? event.error : new TenureError('WEBSOCKET_ERROR', event.message || 'WebSocket error');
    };
    socket.onclose = (event) => {
      const why = this.socketError?.message ?? (event.reason || `close code ${event.code}`);
      this.shut({
        kind: event.code === 1000 || event.code === 1001 ? 'server' : 'network',
        message: `${server}: ${why}`,
        ...(this.socketError ? { error: this.socketError } : {}),
      });
    };
  }

  get closed(): boolean {
    return this.phase === 'closed';
  }

  send<R extends Request>(request: R, onReply?: (reply: Reply<ResponseFor<R>>) => void): Promise<Reply<ResponseFor<R>>> {
    const path = 'path' in request ? request.path : undefined;
    if (this.phase !== 'open' || this.socket.readyState !== OPEN_STATE) {
      return Promise.reject(new ConnectionLossError(path, `connection to ${this.server} is closed`));
    }
    const type = request.type;
    const xid =
      type === OpCode.ping
        ? Xid.ping
        : type === OpCode.auth
          ? Xid.auth
          : (this.lastXid = this.lastXid >= 0x7fffffff ? 1 : this.lastXid + 1);
    let bytes: Buffer;
    try {
      bytes = encodeRequestFrame(xid, request);
    } catch (error) {
      return Promise.reject(asError(error));
    }
    return new Promise<Reply<ResponseFor<R>>>((resolve, reject) => {
      const waiter: Waiter = {
        xid,
        type,
        path,
        resolve: resolve as (r: Reply) => void,
        reject,
        onReply: onReply as ((r: Reply) => void) | undefined,
      };
      (xid === Xid.ping ? this.pings : xid === Xid.auth ? this.auths : this.inOrder).push(waiter);
      this.socket.send(bytes);
    });
  }

  close(): void {
    this.shut({ kind: 'client', message: 'closed by the client' });
  }

  // ---- input ----

  private onMessage(data: unknown): void {
    if (this.phase === 'closed') return;
    let payload: Buffer;
    try {
      payload = framePayload(data, this.maxFrameBytes);
      if (this.phase === 'handshake') this.onConnectResponse(payload);
      else this.onReplyFrame(payload);
    } catch (error) {
      if (error instanceof HandlerError) {
        // A throwing event handler is the caller's bug: surface it, the connection goes on.
        queueMicrotask(() => {
          throw error.cause;
        });
        return;
      }
      const e =
        error instanceof ProtocolError
          ? error
          : new ProtocolError(`undecodable message from ${this.server}: ${String(error)}`, { cause: error });
      this.shut({ kind: 'protocol', message: e.message, error: e }, 'protocol');
    }
  }

  private onConnectResponse(payload: Buffer): void {
    if (payload.length === REPLY_HEADER_BYTES) {
      // A read-only 3.8 server refuses a new session with a bare error header (e.g. NOTREADONLY).
      const error = KeeperError.from(decodeReplyHeader(payload).err, undefined, `handshake refused by ${this.server}`);
      this.shut({ kind: 'server', message: error.message, error }, 'protocol');
      return;
    }
    const res = decodeConnectResponse(payload);
    const settle = this.takeHandshake()!;
    if (res.timeOut <= 0) {
      // Expired, unknown or wrong password: the server closes the connection after this answer.
      this.phase = 'closed';
      this.socket.close(1000);
      settle.resolve({ kind: 'expired' });
      return;
    }
    this.sessionId = res.sessionId;
    this.passwd = res.passwd;
    this.negotiatedTimeoutMs = res.timeOut;
    this.readOnly = res.readOnly;
    this.phase = 'open';
    settle.resolve({ kind: 'connected', connection: this });
  }

  private onReplyFrame(payload: Buffer): void {
    if (payload.length < REPLY_HEADER_BYTES) throw new ProtocolError(`reply of ${payload.length} bytes is shorter than a reply header`);
    const xid = payload.readInt32BE(0);
    if (xid === Xid.notification) {
      const { zxid } = decodeReplyHeader(payload);
      const event = decodeWatcherEvent(payload, REPLY_HEADER_BYTES);
      try {
        this.handlers.onEvent(event, zxid);
      } catch (error) {
        throw new HandlerError(error);
      }
      return;
    }
    if (xid === Xid.ping || xid === Xid.auth) {
      const { zxid, err } = decodeReplyHeader(payload);
      const waiter = (xid === Xid.ping ? this.pings : this.auths).shift();
      if (waiter) deliver(waiter, { zxid, err, response: undefined });
      return;
    }
    const waiter = this.inOrder[this.inOrderHead];
    if (waiter === undefined) throw new ProtocolError(`reply with xid ${xid} but no request is outstanding`);
    if (waiter.xid !== xid) throw new ProtocolError(`reply xid ${xid} does not match the oldest request's xid ${waiter.xid}`);
    const { header, response } = decodeReply(payload, waiter.type);
    this.dropOldest();
    deliver(waiter, { zxid: header.zxid, err: header.err, response });
  }

  /** Removes the oldest ordinary waiter; the array is compacted now and then, not on every reply. */
  private dropOldest(): void {
    this.inOrder[this.inOrderHead++] = undefined as unknown as Waiter;
    if (this.inOrderHead === this.inOrder.length) {
      this.inOrder.length = 0;
      this.inOrderHead = 0;
    } else if (this.inOrderHead >= 1024 && this.inOrderHead * 2 >= this.inOrder.length) {
      this.inOrder.splice(0, this.inOrderHead);
      this.inOrderHead = 0;
    }
  }

  // ---- close ----

  /** The handshake's promise callbacks, once: whoever takes them settles it. */
  private takeHandshake(): Handshake | undefined {
    const h = this.handshake;
    this.handshake = undefined;
    this.signal?.removeEventListener('abort', this.onAbort);
    return h;
  }

  /** Closes once: a handshake in progress rejects; an open connection rejects its waiters, then reports onClose. */
  private shut(reason: CloseReason, cause: 'aborted' | 'protocol' | 'other' = 'other'): void {
    if (this.phase === 'closed') return;
    const wasOpen = this.phase === 'open';
    this.phase = 'closed';
    this.signal?.removeEventListener('abort', this.onAbort);
    try {
      // 4002 (application range) marks a protocol error: browsers refuse 1002 from a script.
      this.socket.close(reason.kind === 'protocol' ? 4002 : 1000);
    } catch {
      // Already closing: nothing to do.
    }
    if (!wasOpen) {
      const settle = this.takeHandshake();
      if (settle === undefined) return;
      if (cause === 'aborted') settle.reject(new AbortError(`connect to ${this.server} aborted`, { cause: this.signal?.reason }));
      else if (cause === 'protocol') settle.reject(reason.error!);
      else {
        const e = new ConnectionLossError(undefined, `no handshake answer from ${this.server}: ${reason.message}`);
        if (reason.error) e.cause = reason.error;
        settle.reject(e);
      }
      return;
    }
    const lost = `connection to ${this.server} closed (${reason.kind}: ${reason.message})`;
    const waiters = [...this.inOrder.slice(this.inOrderHead), ...this.pings.splice(0), ...this.auths.splice(0)];
    this.inOrder.length = 0;
    this.inOrderHead = 0;
    for (const w of waiters) w.reject(new ConnectionLossError(w.path, lost));
    this.handlers.onClose(reason);
  }
}

/** The payload of a message that must hold exactly one frame; ProtocolError for anything else. */
function framePayload(data: unknown, maxFrameBytes: number): Buffer {
  const bytes = messageBytes(data);
  if (bytes === undefined) throw new ProtocolError('a text (or unreadable) WebSocket message where a binary frame was expected');
  if (bytes.length < 4) throw new ProtocolError(`a WebSocket message of ${bytes.length} bytes is shorter than a frame length`);
  const length = bytes.readInt32BE(0);
  if (length < 0 || length > maxFrameBytes) throw new ProtocolError(`frame length ${length} is outside 0..${maxFrameBytes}`);
  if (length !== bytes.length - 4)
    throw new ProtocolError(`a WebSocket message of ${bytes.length} bytes carries a frame of ${length} + 4 bytes`);
  return bytes.subarray(4);
}

/** Runs the synchronous reply hook, then settles the promise (a throwing hook rejects it instead). */
function deliver(waiter: Waiter, reply: Reply): void {
  try {
    waiter.onReply?.(reply);
  } catch (error) {
    waiter.reject(error as Error);
    return;
  }
  waiter.resolve(reply);
}

/** Wraps an exception thrown by a handler so it is not mistaken for a protocol error. */
class HandlerError extends TenureError {
  constructor(override readonly cause: unknown) {
    super('HANDLER', 'connection handler threw');
  }
}
