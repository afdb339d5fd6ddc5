/**
 * A WebSocket as a wire session's link (wire-session.ts): one ZooKeeper frame per binary message
 * (websocket-endpoint.ts checks the shape). A message that is not exactly one frame closes the
 * connection (1002), as does a text message; a frame whose length announces more than
 * maxBufferBytes is reported to the session. The frames of one flush leave in one socket write:
 * their messages are encoded into one buffer (websocket-frames.ts) and written under `ws`. Failures map to close codes: bad input
 * 1002, an internal failure 1011, a refused handshake 1013; a timeout or a vanished peer is
 * terminated.
 */
import { receiveBinaryMessagesDirectly } from '@tenure/protocol';
import type { WebSocket } from 'ws';
import type { PeerInfo } from './front-door.js';
import { frameProblem, messageBuffer } from './websocket-endpoint.js';
import { encodeFrameMessages, rawSocketOf, splitFrames } from './websocket-frames.js';
import { WireSession, type LinkFailure, type WireDoor, type WireLink } from './wire-session.js';

/** A connection whose peer does not read stops being read once this much output is queued. */
const WRITE_HIGH_WATER = 4 * 1024 * 1024;

const CLOSE_CODE: Record<LinkFailure, number | undefined> = {
  'bad-input': 1002,
  internal: 1011,
  refused: 1013,
  timeout: undefined,
  gone: undefined,
};

export class WebSocketLink implements WireLink {
  readonly remote: string;
  readonly session: WireSession;
  private behind = false;
  private paused = false;

  constructor(
    private readonly door: WireDoor,
    private readonly ws: WebSocket,
    peer: PeerInfo,
    remotePort: number | undefined,
  ) {
    this.remote = `/${peer.address ?? '?'}:${remotePort ?? 0}`;
    ws.binaryType = 'nodebuffer';
    this.session = new WireSession(door, this, peer);
    // Binary messages read in place, past ws' Receiver (which still sees everything else).
    receiveBinaryMessagesDirectly(ws, door.server.limits.maxBufferBytes + 4, true);
    ws.on('message', (data, isBinary) => this.onMessage(messageBuffer(data), isBinary));
    ws.on('error', (err) => {
      door.server.logger?.debug?.({ err, remote: this.remote }, 'WebSocket error');
      this.session.fail('gone');
    });
    ws.on('close', () => this.session.linkClosed());
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.session.closed) return;
    const problem = frameProblem(data, isBinary, this.door.server.limits.maxBufferBytes);
    if (problem === 'length') this.session.oversize();
    else if (problem !== undefined) {
      this.door.server.logger?.debug?.({ problem, remote: this.remote }, 'WebSocket message is not one frame');
      this.session.fail('bad-input');
    } else this.session.frame(data.subarray(4));
  }

  write(bytes: Buffer, frames: number): boolean {
    const socket = rawSocketOf(this.ws);
    if (socket !== undefined) socket.write(encodeFrameMessages(bytes, frames), this.afterWrite);
    else for (const f of splitFrames(bytes)) this.ws.send(f, this.afterWrite);
    if (this.ws.bufferedAmount > WRITE_HIGH_WATER) this.behind = true;
    return this.behind;
  }

  private readonly afterWrite = (): void => {
    if (this.behind && this.ws.bufferedAmount < WRITE_HIGH_WATER / 2) {
      this.behind = false;
      this.session.writable();
    }
  };

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.ws.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.ws.resume();
  }

  end(reason: string): void {
    // Read again, or the peer's answer to our close frame is never seen.
    this.resume();
    // Queued after every frame already sent: the peer reads them all, then the close.
    this.ws.close(1000, reason.slice(0, 120));
  }

  fail(why: LinkFailure): void {
    const code = CLOSE_CODE[why];
    this.resume(); // the peer's answer to the close frame must be read
    // A peer that does not answer the close is dropped by `ws` after its own close timeout.
    if (code !== undefined && this.ws.readyState === this.ws.OPEN) this.ws.close(code);
    else this.ws.terminate();
  }
}
