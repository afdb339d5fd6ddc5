/**
 * @tenure/ws for browsers and edge runtimes: the WebSocket transport over the global `WebSocket`
 * (or one given in the options). No `node:` import and no `ws`; a bundler supplies `Buffer`
 * (see the README). Selected by the package's "browser" export condition.
 */
import { createWebSocketTransport, type WebSocketTransport, type WebSocketTransportCoreOptions } from './ws-transport.js';
import { openerFor, type WebSocketConstructor } from './websocket-like.js';
import { InvalidArgumentError } from '@tenure/protocol';

export { createWebSocketTransport, DEFAULT_MAX_FRAME_BYTES } from './ws-transport.js';
export type { WebSocketTransport, WebSocketTransportCoreOptions } from './ws-transport.js';
export { openerFor, messageBytes } from './websocket-like.js';
export type { OpenWebSocket, WebSocketConstructor, WebSocketLike } from './websocket-like.js';
export { parseWebSocketUrls } from './urls.js';

/** Options of the browser WebSocket transport. TLS is the browser's: `wss://` URLs use its trust store. */
export interface WebSocketTransportOptions extends WebSocketTransportCoreOptions {
  /** The WebSocket constructor; default the global `WebSocket`. */
  WebSocket?: WebSocketConstructor;
}

/**
 * A Transport that carries ZooKeeper's protocol over WebSocket, one frame per binary message, to
 * one URL or several; the client chooses among them.
 */
export function webSocket(urls: string | readonly string[], options: WebSocketTransportOptions = {}): WebSocketTransport {
  const WebSocket = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (WebSocket === undefined) throw new InvalidArgumentError('webSocket: no global WebSocket here; pass options.WebSocket');
  return createWebSocketTransport(urls, openerFor(WebSocket), options);
}
