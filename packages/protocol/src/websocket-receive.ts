/**
 * A direct receive path under the `ws` library for the traffic ZooKeeper over WebSocket carries:
 * one unfragmented binary message per frame (RFC 6455 §5.2), masked from a client, unmasked from a
 * server. `ws` parses each message through its Receiver, a Writable stream that slices the header,
 * the mask key and the payload into views of their own and gathers fragments: at 200 messages a
 * read, the largest cost of a WebSocket connection on either side. Here a socket chunk's complete
 * binary messages are read in place (a masked payload is unmasked in the chunk, which nothing else
 * holds) and emitted as `ws` emits them, `'message'` with `(data, true)`.
 *
 * Everything else still goes through `ws`' own Receiver, so its rules stay the only ones: a
 * control frame (ping, pong, close) is handed to it whole, where the stream is between messages;
 * anything unusual (a fragment, a text message, reserved bits, a missing or unexpected mask, a
 * payload above `maxPayload`) hands it the rest of the stream for good, and it answers as it
 * would have (a close with 1002, 1007 or 1009). A close frame does too: `ws` stops reading then.
 *
 * No I/O here: the socket is `ws`' (no `ws` import either: this only needs the two members below).
 */

/** What of a `ws` WebSocket the direct path needs: its Receiver, once a socket is attached, and its emit. */
export interface ReceivingWebSocket {
  emit(event: 'message', data: Buffer, isBinary: boolean): boolean;
}

interface Receiver {
  write(chunk: Buffer): boolean;
}

const FIN_BINARY = 0x82;
const FIN = 0x80;
const CONTROL = 0x08;
const CLOSE = 0x08;
const MASK_BIT = 0x80;

/**
 * Takes the binary messages of `ws` off its Receiver (see above). `masked`: whether the peer masks
 * (it is a client). Returns false, changing nothing, when `ws` has no Receiver to take them from.
 */
export function receiveBinaryMessagesDirectly(ws: ReceivingWebSocket, maxPayload: number, masked: boolean): boolean {
  const receiver = (ws as unknown as { _receiver?: Receiver | null })._receiver;
  if (receiver == null || typeof receiver.write !== 'function') return false;
  const toReceiver = receiver.write.bind(receiver);
  /** A message that has not arrived whole: its chunks, their bytes, and how many it needs (0: unknown yet). */
  let parts: Buffer[] = [];
  let partBytes = 0;
  let need = 0;
  let handedOver = false;

  receiver.write = (chunk: Buffer): boolean => {
    if (handedOver) return toReceiver(chunk);
    let buf = chunk;
    if (parts.length > 0) {
      parts.push(chunk);
      partBytes += chunk.length;
      if (partBytes < need) return true;
      buf = Buffer.concat(parts, partBytes);
      parts = [];
      partBytes = 0;
    }
    need = 0;
    const end = buf.length;
    let at = 0;
    let flowing = true;
    while (end - at >= 2) {
      const b0 = buf[at]!;
      const b1 = buf[at + 1]!;
      let n = b1 & 0x7f;
      let head = 2;
      if (n === 126) {
        if (end - at < 4) break;
        n = buf.readUInt16BE(at + 2);
        head = 4;
      } else if (n === 127) {
        if (end - at < 10) break;
        n = buf.readUInt32BE(at + 2) * 0x1_0000_0000 + buf.readUInt32BE(at + 6);
        head = 10;
      }
      const isMasked = (b1 & MASK_BIT) !== 0;
      if (isMasked) head += 4;
      const message = b0 === FIN_BINARY && isMasked === masked && n <= maxPayload;
      const control = (b0 & FIN) !== 0 && (b0 & CONTROL) !== 0 && n <= 125;
      if (!message && !control) {
        handedOver = true;
        return toReceiver(buf.subarray(at)) && flowing;
      }
      if (end - at < head + n) {
        need = head + n;
        break;
      }
      const from = at + head;
      at = from + n;
      if (control) {
        flowing = toReceiver(buf.subarray(from - head, at)) && flowing;
        if ((b0 & 0x0f) === CLOSE) {
          handedOver = true;
          return (at === end || toReceiver(buf.subarray(at))) && flowing;
        }
        continue;
      }
      if (isMasked) unmask(buf, from - 4, from, at);
      ws.emit('message', buf.subarray(from, at), true);
    }
    if (at < end) {
      parts = [buf.subarray(at)];
      partBytes = end - at;
    }
    return flowing;
  };
  return true;
}

/** XORs `buf[from..to)` in place with the 4-byte key at `key`. */
function unmask(buf: Buffer, key: number, from: number, to: number): void {
  const m0 = buf[key]!;
  const m1 = buf[key + 1]!;
  const m2 = buf[key + 2]!;
  const m3 = buf[key + 3]!;
  let i = from;
  for (; i + 4 <= to; i += 4) {
    buf[i] ^= m0;
    buf[i + 1] ^= m1;
    buf[i + 2] ^= m2;
    buf[i + 3] ^= m3;
  }
  for (let j = 0; i < to; i++, j++) buf[i] ^= buf[key + j]!;
}
