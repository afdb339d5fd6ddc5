/**
 * The front door: what a way into the server (the in-process transport, the TCP, TLS and
 * WebSocket listeners) needs from it. A front door turns its own connections into handshakes
 * (`accept`) and requests (`receive`), and hands the server a ConnectionSink for what comes back.
 * It depends on this interface only, never on EmbeddedServer, so front doors and the server do
 * not import each other.
 */
import type { Clock, ConnectParams } from '@tenure/protocol';
import type { Logger } from '../options.js';
import type { ConnectionSink, ServerConnection } from '../semantics/server-connection.js';
import type { ServerIntrospection } from '../ops/server-introspection.js';

/** What a handshake produced on the server side. */
export type AcceptResult =
  | { kind: 'connected'; connection: ServerConnection; timeoutMs: number }
  /** ZooKeeper's zero-timeout answer: expired or unknown session, or wrong password. */
  | { kind: 'expired' };

/**
 * Limits a front door enforces itself, before a request reaches the server. ZooKeeper's connection
 * limits (maxClientCnxns, globalOutstandingLimit) belong here too, so every front door applies them alike.
 */
export interface ServerLimits {
  /** A request whose encoded payload is larger closes its connection unanswered (jute.maxbuffer). */
  readonly maxBufferBytes: number;
}

/**
 * Who is on the other end of a connection, as its front door knows it. Limits per client address
 * (maxClientCnxns) and identities a transport proves (TLS client certificates: ZooKeeper's `x509`
 * scheme) come from here; a front door that knows nothing passes nothing.
 */
export interface PeerInfo {
  /** The client's IP address (the `ip` scheme, maxClientCnxns). */
  readonly address?: string;
  /** A verified TLS client certificate's subject, RFC 2253 (`CN=app,O=example`): the `x509` identity. */
  readonly x509Subject?: string;
}

export interface FrontDoor {
  /** The server's name: the host the in-process transport answers to. */
  readonly name: string;
  readonly limits: ServerLimits;
  /** Where a front door reports what went wrong on one of its connections; silent when undefined. */
  readonly logger: Logger | undefined;
  /** The server's clock: a front door times handshakes on it. */
  readonly clock: Clock;
  /** The server is closed: a front door takes no more connections. */
  readonly closed: boolean;
  /** What the server shows of itself (four-letter words, tests). */
  readonly introspection: ServerIntrospection;
  /**
   * Performs a handshake. Rejects with ConnectionLossError when the server is closed, refusing
   * connections (restart) or the client has seen a zxid this server has not; with AbortError when
   * `params.signal` aborts. `sink` receives the connection's replies, notifications and close.
   */
  accept(params: ConnectParams, sink: ConnectionSink, peer?: PeerInfo): Promise<AcceptResult>;
  /**
   * A request arrived on `conn`. `token` comes back with its reply. `oversize` marks a request
   * larger than `limits.maxBufferBytes`: the connection closes without an answer, as ZooKeeper does.
   */
  receive(conn: ServerConnection, request: unknown, token: unknown, oversize?: boolean): void;
}
