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
import { batchingSends } from './batched-sends.js';

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
      return batchingSends(socket, maxFrameBytes + 4);
    },
    { maxFrameBytes },
  );
}
