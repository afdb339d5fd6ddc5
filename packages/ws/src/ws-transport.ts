/**
 * The WebSocket transport's core, for any WebSocket implementation: each `connect(url, ...)` opens
 * one WebSocket to one server or gateway and carries one ZooKeeper frame per binary message. The
 * Node entry (index.ts) opens sockets with `ws`, the browser entry (browser.ts) with the global
 * `WebSocket`; anything else can call this with its own opener.
 */
import type { ConnectParams, ConnectResult, ConnectionHandlers, Transport } from '@tenure/protocol';
import { normaliseUrl, parseWebSocketUrls } from './urls.js';
import type { OpenWebSocket } from './websocket-like.js';
import { openWebSocketConnection } from './ws-connection.js';
import { InvalidArgumentError, asError } from '@tenure/protocol';

/** Options every WebSocket transport takes, whatever opens its sockets. */
export interface WebSocketTransportCoreOptions {
  /**
   * The largest frame payload accepted from a server, bytes; a larger frame closes the connection
   * with a ProtocolError. Default 16 MiB, as the ZooKeeper transport.
   */
  maxFrameBytes?: number;
}

/** A transport to the servers (or gateways) of a list of `ws://` / `wss://` URLs. */
export interface WebSocketTransport extends Transport {
  /** The URLs, normalised; `hosts` holds the same list, which the client chooses from. */
  readonly urls: readonly string[];
}

export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** Builds a WebSocket transport whose sockets come from `open`. Throws TypeError for bad URLs. */
export function createWebSocketTransport(
  urls: string | readonly string[],
  open: OpenWebSocket,
  options: WebSocketTransportCoreOptions = {},
): WebSocketTransport {
  const list = Object.freeze(parseWebSocketUrls(urls));
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  if (!Number.isInteger(maxFrameBytes) || maxFrameBytes < 64) {
    throw new InvalidArgumentError(`maxFrameBytes must be an integer >= 64, got ${maxFrameBytes}`);
  }
  return {
    hosts: list,
    urls: list,
    connect(host: string, params: ConnectParams, handlers: ConnectionHandlers): Promise<ConnectResult> {
      let url: string;
      try {
        url = normaliseUrl(host);
      } catch (error) {
        return Promise.reject(asError(error));
      }
      return openWebSocketConnection(url, open, params, handlers, maxFrameBytes);
    },
  };
}
