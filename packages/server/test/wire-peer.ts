/**
 * A raw wire peer over either link a wire session runs on: a TCP socket or a WebSocket. It speaks
 * ZooKeeper frames by hand, so a test controls every byte; what it receives is split into frames
 * (a WebSocket message is one frame, a TCP stream is cut at the length prefixes).
 */
import { connect, type Socket } from 'node:net';
import type { Reply, Request } from '@tenure/protocol';
import type { EmbeddedServer } from '@tenure/server';
import { FramePeer } from './frame-peer.js';
import { RawWsPeer } from './ws-harness.js';

export interface WirePeer {
  /** Frames received (each with its length prefix). */
  readonly messages: Buffer[];
  /** How the link ended: a WebSocket close code, or 'closed' for a socket. */
  readonly closed: Promise<{ code: number | string }>;
  readonly isOpen: boolean;
  send(data: Buffer | string): void;
  next(timeoutMs?: number): Promise<Buffer>;
  handshake(): Promise<{ sessionId: bigint; timeOut: number }>;
  request(req: Request): Promise<Reply>;
  close(): void;
}

export class RawTcpPeer extends FramePeer implements WirePeer {
  readonly closed: Promise<{ code: string }>;
  private buf: Buffer = Buffer.alloc(0);

  private constructor(private readonly socket: Socket) {
    super();
    socket.on('data', (c: Buffer) => {
      this.buf = this.buf.length === 0 ? c : Buffer.concat([this.buf, c]);
      while (this.buf.length >= 4 && this.buf.length >= 4 + this.buf.readInt32BE(0)) {
        const n = 4 + this.buf.readInt32BE(0);
        this.received(this.buf.subarray(0, n));
        this.buf = this.buf.subarray(n);
      }
    });
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        resolve({ code: 'closed' });
        this.wake();
      }),
    );
  }

  static open(port: number): Promise<RawTcpPeer> {
    const socket = connect({ port, host: '127.0.0.1', noDelay: true });
    return new Promise((resolve, reject) => {
      socket.once('connect', () => resolve(new RawTcpPeer(socket)));
      socket.once('error', reject);
    });
  }

  get isOpen(): boolean {
    return !this.socket.destroyed && this.socket.readyState === 'open';
  }

  send(data: Buffer | string): void {
    if (!this.socket.destroyed) this.socket.write(data);
  }

  protected get ended(): boolean {
    return this.socket.destroyed;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A link a wire session runs over: how to listen on it and how to open a raw peer. */
export interface WireLinkCase {
  readonly name: string;
  /** The close code a peer sees for bad input inside a good frame. */
  readonly badInputEnding: number | string;
  listen(server: EmbeddedServer): Promise<() => Promise<WirePeer>>;
}

export const LINKS: readonly WireLinkCase[] = [
  {
    name: 'TCP',
    badInputEnding: 'closed',
    async listen(server) {
      const { port } = await server.listen();
      return () => RawTcpPeer.open(port);
    },
  },
  {
    name: 'WebSocket',
    badInputEnding: 1002,
    async listen(server) {
      const { url } = await server.listen({ webSocket: {} });
      return () => RawWsPeer.open(url);
    },
  },
];

/** Opens a peer and performs the handshake. */
export async function session(open: () => Promise<WirePeer>): Promise<WirePeer> {
  const p = await open();
  await p.handshake();
  return p;
}
