/**
 * The part of the WHATWG WebSocket API the transport uses. Browsers' and edge runtimes' global
 * `WebSocket` and Node's `ws` package both have it, so the transport core depends on this shape
 * only and each entry (index.ts for Node, browser.ts) supplies the implementation.
 */

/** A WebSocket as the transport sees it (the `on…` handler properties of the WHATWG API). */
export interface WebSocketLike {
  /** 'arraybuffer' in browsers; `ws` also has 'nodebuffer'. */
  binaryType: string;
  /** 0 CONNECTING, 1 OPEN, 2 CLOSING, 3 CLOSED. */
  readonly readyState: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: { message?: string; error?: unknown }) => void) | null;
}

/** A WebSocket constructor: the global `WebSocket`, or one an edge runtime provides. */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => unknown;

/** Opens a socket to `url`: the seam between the transport core and an implementation. */
export type OpenWebSocket = (url: string) => WebSocketLike;

/** An opener over a WHATWG-style constructor: binary messages arrive as ArrayBuffers. */
export function openerFor(WebSocket: WebSocketConstructor, protocols?: string | string[]): OpenWebSocket {
  return (url) => {
    const socket = new WebSocket(url, protocols) as WebSocketLike;
    socket.binaryType = 'arraybuffer';
    return socket;
  };
}

/** The bytes of a binary message (Buffer, ArrayBuffer or a typed array); undefined for text or a Blob. */
export function messageBytes(data: unknown): Buffer | undefined {
  if (Buffer.isBuffer(data)) return data;
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return undefined;
}
