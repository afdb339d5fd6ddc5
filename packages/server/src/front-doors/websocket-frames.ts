/**
 * Server-to-client WebSocket binary messages (RFC 6455 §5.2), encoded here so that the messages of
 * one flush leave in one buffer and one socket write. Still one ZooKeeper frame per message: the
 * batching is of writes, never of frames into a message. A server's messages are unmasked and
 * unfragmented (FIN set, opcode 2); permessage-deflate is off on every endpoint (websocket-endpoint.ts).
 *
 * `ws` sends each message as a header buffer plus its data, two iovecs and a write request per
 * message: at 200 replies a flush that was a 400-entry writev and 200 header allocations, the
 * largest cost of the WebSocket listener in its profile.
 */
import type { WebSocket } from 'ws';

const FIN_BINARY = 0x82;

/** The size of a message's header for a payload of `n` bytes (server side: no mask key). */
function headerBytes(n: number): number {
  return n < 126 ? 2 : n < 65536 ? 4 : 10;
}

function writeHeader(out: Buffer, at: number, n: number): number {
  out[at] = FIN_BINARY;
  if (n < 126) {
    out[at + 1] = n;
    return at + 2;
  }
  if (n < 65536) {
    out[at + 1] = 126;
    out.writeUInt16BE(n, at + 2);
    return at + 4;
  }
  out[at + 1] = 127;
  out.writeUInt32BE(Math.floor(n / 0x1_0000_0000), at + 2);
  out.writeUInt32BE(n >>> 0, at + 6);
  return at + 10;
}

/**
 * One binary message per payload, back to back in one buffer (`bytes` is the payloads' total).
 * `lengthPrefix` (a gateway's payloads, read without it) puts each payload's int32 length before
 * it inside its message, so that the message is a whole ZooKeeper frame.
 */
export function encodeBinaryMessages(payloads: readonly Buffer[], bytes: number, lengthPrefix = false): Buffer {
  const extra = lengthPrefix ? 4 : 0;
  let size = bytes;
  for (let i = 0; i < payloads.length; i++) size += headerBytes(payloads[i]!.length + extra) + extra;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < payloads.length; i++) {
    const p = payloads[i]!;
    at = writeHeader(out, at, p.length + extra);
    if (lengthPrefix) at = out.writeInt32BE(p.length, at);
    at += p.copy(out, at);
  }
  return out;
}

/**
 * One binary message per frame of `frames` (whole ZooKeeper frames, int32 length + payload, back to
 * back, `count` of them: a wire session's flush), each message carrying one frame, in one buffer.
 */
export function encodeFrameMessages(frames: Buffer, count: number): Buffer {
  const end = frames.length;
  let size = end;
  for (let at = 0; at < end;) {
    const n = frames.readInt32BE(at) + 4;
    size += headerBytes(n);
    at += n;
  }
  const out = Buffer.allocUnsafe(size);
  let to = 0;
  for (let at = 0, i = 0; i < count; i++) {
    const n = frames.readInt32BE(at) + 4;
    to = writeHeader(out, to, n);
    to += frames.copy(out, to, at, at + n);
    at += n;
  }
  return out;
}

/** The frames of a wire session's flush (see encodeFrameMessages) as views, one per frame. */
export function splitFrames(frames: Buffer): Buffer[] {
  const list: Buffer[] = [];
  for (let at = 0; at < frames.length;) {
    const n = frames.readInt32BE(at) + 4;
    list.push(frames.subarray(at, at + n));
    at += n;
  }
  return list;
}

/** What of a `ws` socket the direct write needs: its TCP (or TLS) socket, set once open. */
interface RawSocket {
  write(data: Buffer, cb?: (err?: Error | null) => void): boolean;
}

/**
 * The open `ws` socket's underlying socket, or undefined. Writing to it directly keeps `ws`' order:
 * with permessage-deflate off and only Buffers sent, `ws`' Sender writes every message, ping and
 * close straight to this socket too, and its `bufferedAmount` counts what is queued there.
 */
export function rawSocketOf(ws: WebSocket): RawSocket | undefined {
  if (ws.readyState !== ws.OPEN) return undefined;
  const inner = ws as unknown as { _socket?: RawSocket | null; _sender?: { _queue?: unknown[] } | null };
  // Something `ws` holds back (it should not, without deflate or Blobs) must go first: use ws.send.
  if ((inner._sender?._queue?.length ?? 0) > 0) return undefined;
  return inner._socket ?? undefined;
}
