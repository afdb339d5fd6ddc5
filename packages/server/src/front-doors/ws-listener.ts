/**
 * The server on WebSocket: ZooKeeper's wire protocol with one frame per binary message, in front of
 * the same front door (front-door.ts) as the TCP listener and the in-process transport, so sessions,
 * ordering, injected faults and the maxBuffer rule behave as they do there.
 *
 * Limits: a message may carry at most maxBufferBytes of frame (`ws` maxPayload; a larger message
 * closes the connection, code 1009); a frame whose length announces more is refused through the
 * request pipeline, as on TCP. Every peer is pinged (websocket-endpoint.ts) and one that stops
 * answering is closed. Bad input closes that one connection and nothing else: a text message, a
 * message that is not exactly one frame, an undecodable handshake or request header.
 */
import type { IncomingMessage } from 'node:http';
import { TLSSocket, type TlsOptions } from 'node:tls';
import type { WebSocket } from 'ws';
import type { FrontDoor, PeerInfo } from './front-door.js';
import type { ListenOptions } from './tcp-listener.js';
import { peerOf } from './tls-listener.js';
import { WebSocketEndpoint } from './websocket-endpoint.js';
import type { WebSocketAddress, WebSocketEndpointOptions } from './websocket-endpoint.js';
import { WebSocketLink } from './websocket-link.js';
import { noTraffic } from './four-letter-words.js';
import type { WireDoor, WireSession } from './wire-session.js';

export class WebSocketListener implements WireDoor {
  private readonly endpoint: WebSocketEndpoint;
  handshakeTimeoutMs = 10_000;
  readonly sessions = new Set<WireSession>();
  readonly totals = noTraffic();

  constructor(
    readonly server: FrontDoor,
    options: WebSocketEndpointOptions = {},
    /** Serve `wss://` with these options (HTTPS); plain `ws://` without. */
    tls?: TlsOptions,
  ) {
    // A message is one frame: its 4-byte length prefix plus at most maxBufferBytes.
    this.endpoint = new WebSocketEndpoint(options, server.limits.maxBufferBytes + 4, server.logger, (ws, req) => this.adopt(ws, req), tls);
  }

  listen(options: ListenOptions = {}): Promise<WebSocketAddress> {
    if (options.handshakeTimeoutMs !== undefined) this.handshakeTimeoutMs = options.handshakeTimeoutMs;
    return this.endpoint.listen(options);
  }

  /** Upgrades refused (wrong path, origin not allowed). */
  get refused(): { readonly path: number; readonly origin: number } {
    return this.endpoint.refused;
  }

  /** Shutdown's first step: no new connections, no more requests read; what was received is still answered. */
  stopAccepting(): void {
    this.endpoint.stopAccepting();
    for (const s of this.sessions) s.drain();
  }

  close(): Promise<void> {
    return this.endpoint.close();
  }

  private adopt(ws: WebSocket, req: IncomingMessage): void {
    if (this.server.closed) {
      ws.terminate();
      return;
    }
    let peer: PeerInfo = { address: req.socket.remoteAddress };
    if (req.socket instanceof TLSSocket) {
      // wss://: a client certificate the server verified is the x509 identity, as on the TLS listener.
      try {
        peer = peerOf(req.socket);
      } catch (err) {
        this.server.logger?.warn({ err, remote: req.socket.remoteAddress }, 'unreadable client certificate subject');
        ws.terminate();
        return;
      }
    }
    new WebSocketLink(this, ws, peer, req.socket.remotePort);
  }
}
