/**
 * A TCP or TLS socket as a wire session's link (wire-session.ts): length-prefixed frames in,
 * one write per flush out. What only a socket has is here: a fresh connection whose first 4 bytes
 * spell a four-letter word gets a text answer and is closed (§6.10); a frame length below 0 or
 * above maxBufferBytes is reported to the session; and a close sends a FIN, keeps reading (so the
 * peer's late requests do not turn it into a reset) and lingers until the peer closes.
 */
import type { Socket } from 'node:net';
import { FrameLengthError, FrameReader, fourLetterWord } from '@tenure/protocol';
import { answerFourLetterWord, type ListenerStats } from './four-letter-words.js';
import type { PeerInfo } from './front-door.js';
import { WireSession, type LinkFailure, type WireDoor, type WireLink } from './wire-session.js';

/** A connection whose peer does not read stops being read once this much output is queued. */
const WRITE_HIGH_WATER = 4 * 1024 * 1024;
/** How long a closed connection waits for its peer to close before the socket is destroyed. */
const LINGER_MS = 2000;

export class SocketLink implements WireLink {
  readonly remote: string;
  readonly session: WireSession;
  private readonly reader: FrameReader;
  /** The first bytes of a connection while fewer than 4 have arrived; undefined once past them. */
  private head: Buffer | undefined = Buffer.alloc(0);
  private linger: NodeJS.Timeout | undefined;

  constructor(
    private readonly door: WireDoor & ListenerStats,
    private readonly socket: Socket,
    peer: PeerInfo | undefined,
  ) {
    this.reader = new FrameReader(door.server.limits.maxBufferBytes);
    this.remote = `/${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
    this.session = new WireSession(door, this, peer);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.session.peerEnded());
    socket.on('error', () => this.session.fail('gone'));
    socket.on('close', () => this.onClose());
    socket.on('drain', () => this.session.writable());
  }

  private onData(chunk: Buffer): void {
    if (this.session.closed) return;
    if (this.head !== undefined) {
      const bytes = this.head.length === 0 ? chunk : Buffer.concat([this.head, chunk]);
      if (bytes.length < 4) {
        this.head = bytes;
        return;
      }
      this.head = undefined;
      const word = fourLetterWord(bytes);
      if (word !== undefined) {
        this.answer(word);
        return;
      }
      chunk = bytes;
    }
    let frames: Buffer[];
    try {
      frames = this.reader.push(chunk);
    } catch (err) {
      if (err instanceof FrameLengthError) this.session.oversize();
      else this.session.fail('bad-input');
      return;
    }
    if (frames.length > 0) this.session.frames(frames);
  }

  private answer(word: string): void {
    const text = this.session.answerWord(() => {
      try {
        return answerFourLetterWord(word, this.door.server.introspection, this.door);
      } catch (err) {
        this.door.server.logger?.warn({ err, word }, 'four-letter word failed');
        return '';
      }
    });
    this.socket.end(text);
    this.lingerThenDestroy();
  }

  write(bytes: Buffer, _frames: number): boolean {
    this.socket.write(bytes);
    return this.socket.writableLength > WRITE_HIGH_WATER;
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  end(_reason: string): void {
    this.socket.end();
    // Keep reading (and discarding) so the peer's late requests do not turn our FIN into a reset.
    this.socket.resume();
    this.lingerThenDestroy();
  }

  fail(_why: LinkFailure): void {
    this.socket.destroy();
  }

  private lingerThenDestroy(): void {
    this.linger = setTimeout(() => this.socket.destroy(), LINGER_MS);
    this.linger.unref();
  }

  private onClose(): void {
    if (this.linger !== undefined) clearTimeout(this.linger);
    this.session.linkClosed();
  }
}
