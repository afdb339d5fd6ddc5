/**
 * @tenure/ws for Node: the WebSocket transport over the `ws` package (Node 20 has no global
 * WebSocket). `webSocket(urls)` reaches the embedded server's WebSocket listener or a WebSocket →
 * ZooKeeper gateway; browsers get browser.ts instead (the package's "browser" export condition).
 */
import type { ConnectionOptions } from 'node:tls';
import WebSocket from 'ws';
import {
  DEFAULT_MAX_FRAME_BYTES,
  createWebSocketTransport,
  type WebSocketTransport,
  type WebSocketTransportCoreOptions,
} from './ws-transport.js';
import type { WebSocketLike } from './websocket-like.js';

export { createWebSocketTransport, DEFAULT_MAX_FRAME_BYTES } from './ws-transport.js';
export type { WebSocketTransport, WebSocketTransportCoreOptions } from './ws-transport.js';
export { openerFor, messageBytes } from './websocket-like.js';
export type { OpenWebSocket, WebSocketConstructor, WebSocketLike } from './websocket-like.js';
export { parseWebSocketUrls } from './urls.js';

/** Options of the Node WebSocket transport. */
export interface WebSocketTransportOptions extends WebSocketTransportCoreOptions {
  /**
   * TLS for `wss://` URLs, as for the ZooKeeper transport: Node's `tls.ConnectionOptions` (`ca`,
   * `cert`, `key`, `servername`, `rejectUnauthorized`, `minVersion`, ...), passed to `ws`. Host
   * names are verified unless `rejectUnauthorized: false`. `true` means Node's defaults. A function
   * is called for every new connection, so renewed certificates are used without a restart.
   */
  tls?: true | ConnectionOptions | (() => ConnectionOptions);
  /** Extra HTTP headers for the upgrade request (e.g. `Authorization` for a proxy in front of a gateway). */
  headers?: Record<string, string>;
}

/**
 * A Transport that carries ZooKeeper's protocol over WebSocket, one frame per binary message, to
 * one URL or several (`ws://host:port/zookeeper`, `wss://...`); the client chooses among them.
 *
 * ```ts
 * const client = createClient({ transport: webSocket('ws://127.0.0.1:8080/zookeeper') });
 * ```
 */
export function webSocket(urls: string | readonly string[], options: WebSocketTransportOptions = {}): WebSocketTransport {
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const { tls, headers } = options;
  return createWebSocketTransport(
    urls,
    (url) => {
      const secure = typeof tls === 'function' ? tls() : tls === true || tls === undefined ? {} : tls;
      const socket = new WebSocket(url, {
        ...(secure as WebSocket.ClientOptions),
        ...(headers ? { headers } : {}),
        // A message is one frame: its length prefix plus at most maxFrameBytes.
        maxPayload: maxFrameBytes + 4,
        perMessageDeflate: false,
      });
      socket.binaryType = 'nodebuffer';
      return batchingSends(socket);
    },
    { maxFrameBytes },
  );
}

/**
 * Requests sent in one synchronous burst (e.g. Promise.all of many) leave in one writev, as on the
 * ZooKeeper transport: the socket under `ws` (its `_socket`, there once open; `ws` has no batching
 * call) is corked until the end of the microtask. Still one frame per message.
 */
function batchingSends(socket: WebSocket): WebSocketLike {
  const send = socket.send.bind(socket);
  let corked: { uncork(): void } | undefined;
  const release = (): void => {
    const s = corked;
    corked = undefined;
    s?.uncork();
  };
  const like = socket as unknown as WebSocketLike;
  like.send = (data: Uint8Array): void => {
    const raw = (socket as unknown as { _socket?: { cork(): void; uncork(): void } | null })._socket;
    if (corked === undefined && raw != null) {
      raw.cork();
      corked = raw;
      queueMicrotask(release);
    }
    send(data);
  };
  return like;
}
