/**
 * Node's sends over `ws`, batched per microtask: the requests a client sends in one synchronous
 * burst (a pipeline refilled from a batch of replies, Promise.all of many) are encoded as masked
 * binary messages, one ZooKeeper frame per message as ever, into one buffer that leaves in one
 * socket write. `ws` would send each as a header plus a masked copy of the data (two iovecs, a write
 * request, and a random key drawn per message): at 200 in flight, the client's largest cost.
 *
 * Masking stays as RFC 6455 §5.3 requires of a client: a fresh key from a CSPRNG per message,
 * drawn from a pool refilled 2,048 keys at a time. Control frames (`ws`' pongs, its close) go
 * through `ws`; a close first sends what is batched, so no message follows a close frame.
 */
import { randomFillSync } from 'node:crypto';
import { EARLY_FLUSH_FRAMES, receiveBinaryMessagesDirectly } from '@tenure/protocol';
import type WebSocket from 'ws';
import type { WebSocketLike } from './websocket-like.js';

const FIN_BINARY = 0x82;
const MASKED = 0x80;
const OPEN = 1;

const KEY_POOL_BYTES = 8192;
let keys = Buffer.alloc(0);
let keyAt = 0;

function headerBytes(n: number): number {
  return (n < 126 ? 2 : n < 65536 ? 4 : 10) + 4;
}

/** Masked binary messages, one per payload, back to back in one buffer (`bytes`: the payloads' total). */
export function encodeMaskedMessages(payloads: readonly Uint8Array[], bytes: number): Buffer {
  let size = bytes;
  for (let i = 0; i < payloads.length; i++) size += headerBytes(payloads[i]!.length);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < payloads.length; i++) {
    const p = payloads[i]!;
    const n = p.length;
    out[at] = FIN_BINARY;
    if (n < 126) {
      out[at + 1] = MASKED | n;
      at += 2;
    } else if (n < 65536) {
      out[at + 1] = MASKED | 126;
      out.writeUInt16BE(n, at + 2);
      at += 4;
    } else {
      out[at + 1] = MASKED | 127;
      out.writeUInt32BE(Math.floor(n / 0x1_0000_0000), at + 2);
      out.writeUInt32BE(n >>> 0, at + 6);
      at += 10;
    }
    if (keyAt + 4 > keys.length) {
      keys = randomFillSync(Buffer.allocUnsafe(KEY_POOL_BYTES));
      keyAt = 0;
    }
    const m0 = keys[keyAt]!;
    const m1 = keys[keyAt + 1]!;
    const m2 = keys[keyAt + 2]!;
    const m3 = keys[keyAt + 3]!;
    keyAt += 4;
    out[at] = m0;
    out[at + 1] = m1;
    out[at + 2] = m2;
    out[at + 3] = m3;
    at += 4;
    let j = 0;
    for (; j + 4 <= n; j += 4) {
      out[at + j] = p[j]! ^ m0;
      out[at + j + 1] = p[j + 1]! ^ m1;
      out[at + j + 2] = p[j + 2]! ^ m2;
      out[at + j + 3] = p[j + 3]! ^ m3;
    }
    for (; j < n; j++) out[at + j] = p[j]! ^ keys[keyAt - 4 + (j & 3)]!;
    at += n;
  }
  return out;
}

interface Internals {
  _socket?: { write(data: Buffer): boolean } | null;
  _sender?: { _queue?: unknown[] } | null;
}

/**
 * `socket` as a WebSocketLike whose `send` batches per microtask and whose `close` sends the batch
 * first; once open, its binary messages (at most `maxPayload` bytes) are read in place, past `ws`'
 * Receiver (receiveBinaryMessagesDirectly in @tenure/protocol).
 */
export function batchingSends(socket: WebSocket, maxPayload: number): WebSocketLike {
  socket.once('open', () => receiveBinaryMessagesDirectly(socket, maxPayload, false));
  const send = socket.send.bind(socket);
  const close = socket.close.bind(socket);
  let pending: Uint8Array[] = [];
  let bytes = 0;
  let queued = false;
  const flush = (): void => {
    queued = false;
    const list = pending;
    if (list.length === 0) return;
    pending = [];
    const n = bytes;
    bytes = 0;
    const inner = socket as unknown as Internals;
    const raw = inner._socket;
    // Directly under `ws` only while it is open and holds nothing back itself (it never does with
    // permessage-deflate off and Buffers only); otherwise each message through `ws`, in order.
    if (socket.readyState !== OPEN || raw == null || (inner._sender?._queue?.length ?? 0) > 0) {
      for (let i = 0; i < list.length; i++) send(list[i]!);
      return;
    }
    raw.write(encodeMaskedMessages(list, n));
  };
  const like = socket as unknown as WebSocketLike;
  like.send = (data: Uint8Array): void => {
    pending.push(data);
    bytes += data.length;
    // A burst already EARLY_FLUSH_FRAMES long goes now: the server starts on it while the rest is made.
    if (pending.length >= EARLY_FLUSH_FRAMES) {
      flush();
      return;
    }
    if (!queued) {
      queued = true;
      queueMicrotask(flush);
    }
  };
  like.close = (code?: number, reason?: string): void => {
    flush();
    close(code, reason);
  };
  return like;
}
