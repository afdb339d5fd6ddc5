/**
 * A raw WebSocket peer for the server's WebSocket tests: it speaks ZooKeeper frames by hand (one per
 * binary message) over `ws`, so a test controls every byte, the Origin header and pong answers.
 */
import WebSocket from 'ws';
import { FramePeer } from './frame-peer.js';

export interface PeerOptions {
  origin?: string;
  /** Answer pings (default true); false plays a peer that has stopped responding. */
  autoPong?: boolean;
}

export class RawWsPeer extends FramePeer {
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    super();
    ws.on('message', (data: Buffer) => this.received(data));
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString() });
        this.wake();
      }),
    );
    ws.on('error', () => undefined);
  }

  /** Opens the WebSocket (rejects with the upgrade's error, e.g. "Unexpected server response: 403"). */
  static open(url: string, options: PeerOptions = {}): Promise<RawWsPeer> {
    const ws = new WebSocket(url, {
      ...(options.origin ? { origin: options.origin } : {}),
      autoPong: options.autoPong ?? true,
      perMessageDeflate: false,
    });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new RawWsPeer(ws)));
      ws.once('error', reject);
    });
  }

  /** Opens and performs ZooKeeper's handshake. */
  static async session(url: string, options: PeerOptions = {}): Promise<RawWsPeer & { sessionId: bigint }> {
    const peer = await RawWsPeer.open(url, options);
    const res = await peer.handshake();
    return Object.assign(peer, { sessionId: res.sessionId });
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(data: Buffer | string): void {
    this.ws.send(data);
  }

  protected get ended(): boolean {
    return this.ws.readyState === WebSocket.CLOSED;
  }

  close(): void {
    this.ws.terminate();
  }
}
