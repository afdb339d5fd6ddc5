/**
 * What the raw test peers share, whatever their link: the frames received in order, `next()` to
 * take one, and ZooKeeper's handshake and a request written by hand. A link subclass feeds
 * `received()`, calls `ended()` on close, and says how to send and whether it has ended.
 */
import {
  decodeConnectResponse,
  decodeReply,
  encodeConnectRequest,
  encodeRequestFrame,
  frame,
  type Reply,
  type Request,
} from '@tenure/protocol';

export abstract class FramePeer {
  /** Frames received (each with its length prefix). */
  readonly messages: Buffer[] = [];
  private waiters: Array<() => void> = [];
  private read = 0;
  private xid = 0;

  abstract send(data: Buffer | string): void;
  /** The link has ended: no frame will come. */
  protected abstract get ended(): boolean;

  protected received(message: Buffer): void {
    this.messages.push(message);
    this.wake();
  }

  /** Wakes every `next()` waiting, to see a frame or the end. */
  protected wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** The next frame not yet taken; rejects if the link ends first or nothing comes in time. */
  async next(timeoutMs = 5000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.read >= this.messages.length) {
      if (this.ended) throw new Error('closed');
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

  /** Sends a request and reads the next frame as its reply. */
  async request(req: Request): Promise<Reply> {
    this.send(encodeRequestFrame(++this.xid, req));
    const { header, response } = decodeReply((await this.next()).subarray(4), req.type);
    return { zxid: header.zxid, err: header.err, response };
  }
}
