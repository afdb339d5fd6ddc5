/**
 * A transport that tells a test about each exchange it carries, so the test can await the request
 * or reply behind what it checks (a waiter's watch answered, a listing read) instead of polling.
 */
import type { ConnectionHandlers, ConnectParams, Connection, Reply, Request, Transport } from '@tenure/protocol';

export interface TapHooks {
  /** A request is about to go to the server. */
  request?(request: Request): void;
  /** The client has taken the reply to `request` (and registered any watch it set). */
  reply?(request: Request, reply: Reply<unknown>): void;
}

/** Wraps `inner`: requests and replies pass unchanged, and each is reported to `hooks`. */
export function tapTransport(inner: Transport, hooks: TapHooks): Transport {
  return {
    get hosts() {
      return inner.hosts;
    },
    async connect(host: string, params: ConnectParams, handlers: ConnectionHandlers) {
      const result = await inner.connect(host, params, handlers);
      if (result.kind !== 'connected') return result;
      const conn = result.connection;
      const tapped: Connection = {
        get sessionId() {
          return conn.sessionId;
        },
        get passwd() {
          return conn.passwd;
        },
        get negotiatedTimeoutMs() {
          return conn.negotiatedTimeoutMs;
        },
        get readOnly() {
          return conn.readOnly;
        },
        get server() {
          return conn.server;
        },
        get closed() {
          return conn.closed;
        },
        close: () => conn.close(),
        send: ((request: Request, onReply?: (reply: never) => void) => {
          hooks.request?.(request);
          return conn.send(request, onReply as never).then((reply) => {
            hooks.reply?.(request, reply);
            return reply;
          });
        }) as Connection['send'],
      };
      return { kind: 'connected', connection: tapped };
    },
  };
}
