/**
 * A raw WebSocket peer for the server's WebSocket tests: it speaks ZooKeeper frames by hand (one per
 * binary message) over `ws`, so a test controls every byte, the Origin header and pong answers.
 */
import WebSocket from 'ws';
import {
  decodeConnectResponse,
  decodeReply,
  encodeConnectRequest,
  encodeRequestFrame,
  frame,
  type Reply,
  type Request,
} from '@tenure/protocol';

export interface PeerOptions {
  origin?: string;
  /** Answer pings (default true); false plays a peer that has stopped responding. */
  autoPong?: boolean;
}

export class RawWsPeer {
  readonly messages: Buffer[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: Array<() => void> = [];
  private xid = 0;
  private read = 0;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      this.messages.push(data);
      for (const w of this.waiters.splice(0)) w();
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString() });
        for (const w of this.waiters.splice(0)) w();
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

  /** The next message not yet taken; rejects if the socket closes first or nothing comes in time. */
  async next(timeoutMs = 5000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.read >= this.messages.length) {
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error('closed');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no message in time');
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => (clearTimeout(t), r()));
      });
    }
    return this.messages[this.read++]!;
  }

  async handshake(sessionId = 0n, passwd = Buffer.alloc(16)): Promise<{ sessionId: bigint; timeOut: number }> {
    this.send(frame(encodeConnectRequest({ protocolVersion: 0, lastZxidSeen: 0n, timeOut: 10_000, sessionId, passwd, readOnly: false })));
    return decodeConnectResponse((await this.next()).subarray(4));
  }

  /** Sends a request and reads the next message as its reply. */
  async request(req: Request): Promise<Reply> {
    this.send(encodeRequestFrame(++this.xid, req));
    const { header, response } = decodeReply((await this.next()).subarray(4), req.type);
    return { zxid: header.zxid, err: header.err, response };
  }

  close(): void {
    this.ws.terminate();
  }
}
