/**
 * What the WebSocket listener (ws-listener.ts) and the WebSocket → ZooKeeper gateway
 * (websocket-gateway.ts) share: an HTTP server that upgrades one path to WebSocket (`ws`),
 * checks browser origins, bounds message size, and pings every peer so that a dead one is closed;
 * and the rule that a message carries exactly one ZooKeeper frame.
 */
import { InvalidArgumentError } from '@tenure/protocol';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { createServer as createHttpsServer } from 'node:https';
import type { TlsOptions } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebSocketServer, WebSocket } from 'ws';
import type { Logger } from '../options.js';

/** Options of a WebSocket endpoint (the listener's `webSocket` option, the gateway's options). */
export interface WebSocketEndpointOptions {
  /** The path that is upgraded; any other gets 404. Default '/zookeeper'. */
  path?: string;
  /**
   * Browser origins allowed to connect, e.g. `['https://app.example.com']`. Without it every origin
   * is accepted. A request without an Origin header (a non-browser client) is always accepted.
   */
  origins?: readonly string[];
  /**
   * Every peer is pinged this often; one that has not answered the previous ping (pong) by the next
   * is closed. Default 10,000 ms.
   */
  pingIntervalMs?: number;
}

/** Where a WebSocket endpoint is bound. */
export interface WebSocketAddress extends AddressInfo {
  /** `host:port`, as for a TCP listener. */
  connectString: string;
  /** The URL to give `webSocket(...)`, e.g. `ws://127.0.0.1:41234/zookeeper`. */
  url: string;
}

export interface BindOptions {
  port?: number;
  host?: string;
  backlog?: number;
}

export const DEFAULT_WEBSOCKET_PATH = '/zookeeper';
const DEFAULT_PING_INTERVAL_MS = 10_000;

/** An HTTP server with one WebSocket path; `onConnection` gets each accepted socket. */
export class WebSocketEndpoint {
  private readonly http: Server;
  /** Made by `listen`, which loads ws: a server with no WebSocket listener never imports it (~30 ms of start-up). */
  private wss: WebSocketServer | undefined;
  private readonly path: string;
  private readonly scheme: 'ws' | 'wss';
  private readonly origins: ReadonlySet<string> | undefined;
  private readonly answered = new WeakMap<WebSocket, boolean>();
  private readonly pinger: NodeJS.Timeout;
  private closing: Promise<void> | undefined;
  private stopped = false;
  /** Upgrades refused, by reason (tests and logs). */
  readonly refused = { path: 0, origin: 0 };

  constructor(
    options: WebSocketEndpointOptions,
    /** The largest message accepted; a larger one closes its connection (1009). */
    private readonly maxPayload: number,
    private readonly logger: Logger | undefined,
    private readonly onConnection: (socket: WebSocket, request: IncomingMessage) => void,
    /** Serve `wss://` (HTTPS) with these options; plain `ws://` without. */
    tls?: TlsOptions,
  ) {
    this.path = options.path ?? DEFAULT_WEBSOCKET_PATH;
    if (!this.path.startsWith('/')) throw new InvalidArgumentError(`webSocket.path must start with '/', got ${JSON.stringify(this.path)}`);
    this.origins = options.origins === undefined ? undefined : new Set(options.origins.map(normaliseOrigin));
    const pingMs = options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
    if (!(pingMs > 0)) throw new InvalidArgumentError(`webSocket.pingIntervalMs must be > 0, got ${pingMs}`);
    const notUpgraded = (_req: IncomingMessage, res: ServerResponse): void => {
      res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' }).end('WebSocket only\n');
    };
    this.scheme = tls === undefined ? 'ws' : 'wss';
    this.http = tls === undefined ? createServer(notUpgraded) : createHttpsServer(tls, notUpgraded);
    this.http.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
    this.http.on('clientError', (_err, socket) => socket.destroy());
    this.http.on('error', (err) => this.logger?.warn({ err }, 'WebSocket endpoint error'));
    this.pinger = setInterval(() => this.pingAll(), pingMs);
    this.pinger.unref();
  }

  async listen(options: BindOptions): Promise<WebSocketAddress> {
    const { WebSocketServer } = await import('ws');
    this.wss ??= new WebSocketServer({ noServer: true, maxPayload: this.maxPayload, perMessageDeflate: false, clientTracking: true });
    this.http.listen({ port: options.port ?? 0, host: options.host ?? '127.0.0.1', backlog: options.backlog });
    await once(this.http, 'listening'); // rejects with the server's 'error' (e.g. EADDRINUSE)
    const bound = this.http.address() as AddressInfo;
    const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
    return { ...bound, connectString: `${host}:${bound.port}`, url: `${this.scheme}://${host}:${bound.port}${this.path}` };
  }

  /** Open WebSocket connections. */
  get connectionCount(): number {
    return this.wss?.clients.size ?? 0;
  }

  /** Takes no more connections (the port closes); open ones are left to their owner. */
  stopAccepting(): void {
    this.stopped = true;
    if (this.http.listening) this.http.close();
  }

  /** Stops listening and terminates every WebSocket. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      clearInterval(this.pinger);
      for (const ws of this.wss?.clients ?? []) ws.terminate();
      this.wss?.close();
      this.http.closeAllConnections();
      if (!this.http.listening) resolve();
      else this.http.close(() => resolve());
    });
    return this.closing;
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const wss = this.wss;
    if (this.closing !== undefined || this.stopped || wss === undefined) {
      socket.destroy();
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if (path !== this.path) {
      this.refused.path++;
      refuse(socket, 404, 'Not Found');
      return;
    }
    const origin = req.headers.origin;
    if (!originAllowed(origin, this.origins)) {
      this.refused.origin++;
      this.logger?.debug?.({ origin, remote: req.socket.remoteAddress }, 'WebSocket origin refused');
      refuse(socket, 403, 'Forbidden');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      this.answered.set(ws, true);
      ws.on('pong', () => this.answered.set(ws, true));
      try {
        this.onConnection(ws, req);
      } catch (err) {
        this.logger?.warn({ err }, 'WebSocket connection failed');
        ws.terminate();
      }
    });
  }

  /** Closes the peers that did not answer the last ping, then pings the rest. */
  private pingAll(): void {
    for (const ws of this.wss?.clients ?? []) {
      if (this.answered.get(ws) === false) {
        this.logger?.debug?.({}, 'WebSocket peer did not answer a ping: closed');
        ws.terminate();
        continue;
      }
      this.answered.set(ws, false);
      try {
        ws.ping();
      } catch {
        ws.terminate();
      }
    }
  }
}

/** Whether an upgrade with this Origin header may proceed: no header, no list, or listed. */
export function originAllowed(origin: string | undefined, origins: ReadonlySet<string> | undefined): boolean {
  if (origin === undefined || origins === undefined) return true;
  return origins.has(normaliseOrigin(origin));
}

/** `scheme://host[:port]`, lower case, default ports dropped, as browsers send it. */
function normaliseOrigin(origin: string): string {
  try {
    const u = new URL(origin);
    return u.origin === 'null' ? origin : u.origin;
  } catch {
    return origin.trim().toLowerCase();
  }
}

function refuse(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`, () => socket.destroy());
}

/** Why a message is not a frame. */
export type FrameProblem = 'text' | 'short' | 'length' | 'mismatch';

/**
 * Checks that a binary message is exactly one frame: an int32 length in 0..maxFrameBytes followed by
 * that many bytes. Returns the problem, or undefined when the message is a frame.
 */
export function frameProblem(data: Buffer, isBinary: boolean, maxFrameBytes: number): FrameProblem | undefined {
  if (!isBinary) return 'text';
  if (data.length < 4) return 'short';
  const length = data.readInt32BE(0);
  if (length < 0 || length > maxFrameBytes) return 'length';
  return length === data.length - 4 ? undefined : 'mismatch';
}

/** A `ws` message as one Buffer (`ws` hands over a Buffer, or fragments for a fragmented message). */
export function messageBuffer(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
