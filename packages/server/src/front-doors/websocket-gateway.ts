/**
 * A WebSocket → ZooKeeper gateway: each WebSocket connection is carried to one server of a real
 * ZooKeeper ensemble over its own TCP connection, frame for frame, so a browser or an edge runtime
 * (`@tenure/ws`) can use a production ensemble. The gateway reads only frame lengths: a binary
 * message that is exactly one frame is written to TCP as it is, and each frame read from TCP leaves
 * as one message. Sessions, ACLs, digest auth and SASL are between the client and ZooKeeper,
 * end to end; ZooKeeper sees the gateway's address (mind `ip` ACLs and maxClientCnxns).
 *
 * Hosts are taken round-robin, one per WebSocket connection. When a server cannot be reached or
 * closes, the WebSocket closes too (code 1013 or 1000) and the client reconnects, to the next host.
 */
import type { IncomingMessage } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import type { TlsOptions } from 'node:tls';
import type { WebSocket } from 'ws';
import { FrameReader, frame, InvalidArgumentError, receiveBinaryMessagesDirectly } from '@tenure/protocol';
import type { Logger } from '../options.js';
import type { BindOptions, WebSocketAddress, WebSocketEndpointOptions } from './websocket-endpoint.js';
import { WebSocketEndpoint, frameProblem, messageBuffer } from './websocket-endpoint.js';
import { encodeBinaryMessages, rawSocketOf } from './websocket-frames.js';

export interface WebSocketGatewayOptions extends WebSocketEndpointOptions, BindOptions {
  /** ZooKeeper servers as `host:port` (`[v6]:port`), e.g. `['zk1:2181', 'zk2:2181']`. */
  hosts?: readonly string[];
  /** The same as a connect string, `'zk1:2181,zk2:2181'` (no chroot: use the client's namespace). */
  connectString?: string;
  /**
   * The largest frame carried either way, bytes. Default 16 MiB (ZooKeeper bounds requests by its
   * own jute.maxbuffer; replies such as a large getChildren may be bigger).
   */
  maxFrameBytes?: number;
  /** A server that does not accept the TCP connection by then is given up on. Default 10,000 ms. */
  connectTimeoutMs?: number;
  /** Serve `wss://` with these options (`key`, `cert`, `ca`, `requestCert`, ...); plain `ws://` without. */
  tls?: TlsOptions;
  logger?: Logger;
}

/** A running gateway. */
export interface WebSocketGateway extends AsyncDisposable {
  /** Where it listens; `address.url` is what `webSocket(...)` takes. */
  readonly address: WebSocketAddress;
  readonly url: string;
  /** WebSocket connections being carried now. */
  readonly connectionCount: number;
  /** Stops listening and drops every carried connection (their sessions live on until they expire). */
  close(): Promise<void>;
}

const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** TCP input stops while this much is queued on the WebSocket (a browser that does not read). */
const HIGH_WATER = 4 * 1024 * 1024;

/** Starts a gateway; resolves once it listens. */
export async function createWebSocketGateway(options: WebSocketGatewayOptions): Promise<WebSocketGateway> {
  const targets = gatewayTargets(options);
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const logger = options.logger;
  let next = 0;
  const endpoint = new WebSocketEndpoint(
    options,
    maxFrameBytes + 4,
    logger,
    (ws, req) => {
      const target = targets[next++ % targets.length]!;
      carry(ws, req, target, maxFrameBytes, connectTimeoutMs, logger);
    },
    options.tls,
  );
  const address = await endpoint.listen(options);
  return {
    address,
    url: address.url,
    get connectionCount() {
      return endpoint.connectionCount;
    },
    close: () => endpoint.close(),
    [Symbol.asyncDispose]: () => endpoint.close(),
  };
}

interface Target {
  host: string;
  port: number;
  name: string;
}

/** The servers from `hosts` or `connectString`; TypeError for none, a chroot or a bad entry. */
export function gatewayTargets(options: Pick<WebSocketGatewayOptions, 'hosts' | 'connectString'>): Target[] {
  const { hosts, connectString } = options;
  if ((hosts === undefined) === (connectString === undefined))
    throw new InvalidArgumentError('createWebSocketGateway: give hosts or connectString');
  if (connectString !== undefined && connectString.includes('/')) {
    throw new InvalidArgumentError("createWebSocketGateway: a chroot cannot be applied frame for frame; use the client's namespace");
  }
  const entries = (hosts ?? connectString!.split(',')).map((h) => h.trim()).filter((h) => h !== '');
  if (entries.length === 0) throw new InvalidArgumentError('createWebSocketGateway: no ZooKeeper hosts');
  return entries.map((entry) => {
    let url: URL;
    try {
      url = new URL(`tcp://${entry}`);
    } catch {
      throw new InvalidArgumentError(`createWebSocketGateway: bad host ${JSON.stringify(entry)}`);
    }
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const port = url.port === '' ? 2181 : Number(url.port);
    if (host === '' || url.pathname !== '' || url.search !== '')
      throw new InvalidArgumentError(`createWebSocketGateway: bad host ${JSON.stringify(entry)}`);
    return { host, port, name: `${url.hostname}:${port}` };
  });
}

/** Carries one WebSocket to one ZooKeeper server until either side closes. */
function carry(
  ws: WebSocket,
  req: IncomingMessage,
  target: Target,
  maxFrameBytes: number,
  connectTimeoutMs: number,
  logger: Logger | undefined,
): void {
  const remote = req.socket.remoteAddress;
  const tcp: Socket = netConnect({ host: target.host, port: target.port, noDelay: true });
  const reader = new FrameReader(maxFrameBytes);
  let done = false;
  const connectTimer = setTimeout(() => finish(1013, `${target.name} did not accept the connection`), connectTimeoutMs);
  connectTimer.unref();

  const finish = (code: number, why: string): void => {
    if (done) return;
    done = true;
    clearTimeout(connectTimer);
    logger?.debug?.({ remote, server: target.name, code, why }, 'gateway connection closed');
    tcp.destroy();
    // Frames already queued on the WebSocket go out before the close frame.
    if (ws.readyState === ws.OPEN) ws.close(code, why.slice(0, 120));
    else ws.terminate();
  };

  ws.binaryType = 'nodebuffer';
  // Binary messages read in place, past ws' Receiver (which still sees everything else).
  receiveBinaryMessagesDirectly(ws, maxFrameBytes + 4, true);
  ws.on('message', (data, isBinary) => {
    if (done) return;
    const message = messageBuffer(data);
    const problem = frameProblem(message, isBinary, maxFrameBytes);
    if (problem !== undefined) {
      finish(1002, `message is not one ZooKeeper frame (${problem})`);
      return;
    }
    // Written as it came; queued by the socket until it connects.
    if (!tcp.write(message)) ws.pause();
  });
  tcp.on('drain', () => ws.resume());
  ws.on('close', () => finish(1000, 'client closed'));
  ws.on('error', () => finish(1011, 'WebSocket error'));

  tcp.on('connect', () => clearTimeout(connectTimer));
  tcp.on('data', (chunk: Buffer) => {
    if (done) return;
    let frames: Buffer[];
    try {
      frames = reader.push(chunk);
    } catch (err) {
      finish(1011, `${target.name} sent a bad frame: ${(err as Error).message}`);
      return;
    }
    const n = frames.length;
    if (n === 0) return;
    // One message per frame, all of one read in one socket write; its callback is the time to resume.
    const raw = rawSocketOf(ws);
    if (raw !== undefined) {
      let bytes = 0;
      for (let i = 0; i < n; i++) bytes += frames[i]!.length;
      raw.write(encodeBinaryMessages(frames, bytes, true), resumeTcp);
    } else for (let i = 0; i < n; i++) ws.send(frame(frames[i]!), i === n - 1 ? resumeTcp : undefined);
    if (ws.bufferedAmount > HIGH_WATER) tcp.pause();
  });
  function resumeTcp(): void {
    if (!done && tcp.isPaused() && ws.bufferedAmount < HIGH_WATER / 2) tcp.resume();
  }
  tcp.on('end', () => finish(1000, `${target.name} closed the connection`));
  tcp.on('error', (err) => finish(1013, `${target.name}: ${err.message}`));
  tcp.on('close', () => finish(1000, `${target.name} closed the connection`));
}
