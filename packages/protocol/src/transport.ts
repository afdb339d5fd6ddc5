/**
 * The transport contract: types only.
 *
 * A transport opens one connection to one server. It speaks the handshake and the framing, sends
 * records and delivers replies and events, and reports that the connection closed. It has no timers
 * and no retry policy: the client owns host choice, read-timeout and ping timers, re-attach,
 * SetWatches and auth (see docs/architecture.md).
 *
 * A connection may carry decoded records: the in-process transport never encodes bytes.
 */
import type { Reply, Request, ResponseFor, WatcherEvent } from './records.js';

/** What the client asks for when it opens a connection. */
export interface ConnectParams {
  /** 0n for a new session; the existing id to re-attach. */
  sessionId: bigint;
  /** 16 zero bytes for a new session; otherwise the password from the last handshake. */
  passwd: Buffer;
  /** The highest zxid the client has seen. */
  lastZxidSeen: bigint;
  /** The requested session timeout, ms. */
  timeoutMs: number;
  /** The client accepts a read-only server. */
  readOnly: boolean;
  /** Aborts the attempt (the client's connect timer); the promise then rejects with AbortError. */
  signal?: AbortSignal;
}

/** Why a connection closed. */
export interface CloseReason {
  /**
   * - `client`: the client called `close()`;
   * - `server`: the server closed it (restart, fault, closeSession, a refused request);
   * - `network`: the socket failed;
   * - `protocol`: the peer sent bytes that could not be decoded.
   */
  kind: 'client' | 'server' | 'network' | 'protocol';
  message: string;
  error?: Error;
}

/** Callbacks a connection reports through. They are set before the handshake so nothing is missed. */
export interface ConnectionHandlers {
  /** A watch notification (xid -1). `zxid` is -1 on servers up to 3.8. */
  onEvent(event: WatcherEvent, zxid: bigint): void;
  /** Called exactly once, after every pending request has been rejected with ConnectionLossError. */
  onClose(reason: CloseReason): void;
}

/** One open connection, bound to a session. */
export interface Connection {
  readonly sessionId: bigint;
  readonly passwd: Buffer;
  readonly negotiatedTimeoutMs: number;
  /** The server is in read-only mode. */
  readonly readOnly: boolean;
  /** Which server this is, e.g. '127.0.0.1:2181' or 'embedded'. */
  readonly server: string;
  readonly closed: boolean;
  /**
   * Sends one request. Replies resolve in send order, carrying the header's zxid and err and, when
   * err is 0, the decoded response. A non-zero err resolves too; it is the client's to interpret.
   * ping and auth are answered out of band. If the connection closes first the promise rejects
   * with ConnectionLossError.
   *
   * `onReply`, when given, is called synchronously as the reply is taken off the wire: before any
   * notification that follows it is delivered and before the promise settles. A client registers
   * the watch a read set there, so an event arriving right behind the reply (in the same read) is
   * never dispatched ahead of the registration, as ZooKeeper's ordering guarantee requires.
   */
  send<R extends Request>(request: R, onReply?: (reply: Reply<ResponseFor<R>>) => void): Promise<Reply<ResponseFor<R>>>;
  /** Closes this connection. The session lives on until it expires or closeSession is sent. */
  close(): void;
}

/** What a handshake produced. */
export type ConnectResult =
  | { kind: 'connected'; connection: Connection }
  /** The server answered a zero timeout: the session is expired, unknown or the password is wrong. */
  | { kind: 'expired' };

/** A factory of connections to a set of servers. */
export interface Transport {
  /** The servers this transport can reach, e.g. ['127.0.0.1:2181', '127.0.0.1:2182']. */
  readonly hosts: readonly string[];
  /**
   * Opens one connection to `host` and performs the handshake. Rejects with ConnectionLossError
   * when the server is unreachable or closes without answering, and with AbortError when
   * `params.signal` aborts.
   */
  connect(host: string, params: ConnectParams, handlers: ConnectionHandlers): Promise<ConnectResult>;
}
