/**
 * Reply frames: ReplyHeader {xid, zxid, err} + the response record when err is 0 (docs/zookeeper-wire-protocol.md §3.1, §4.4),
 * and notifications: ReplyHeader {-1, zxid, 0} + WatcherEvent (§4.6).
 *
 * Hot paths (getData replies, header-only replies such as ping, notifications) are written and read in
 * place; the rest goes through JuteReader / the scratch writer.
 */
import { bufferBytes, writeBufferAt } from './buffer-bytes.js';
import { OpCode, Xid } from './constants.js';
import { ProtocolError } from './errors.js';
import type { FrameOutput } from './frame-output.js';
import { readInt64, writeInt64 } from './int64-bytes.js';
import { JuteReader } from './jute-reader.js';
import type { JuteWriter } from './jute-writer.js';
import { readMultiResults, writeMultiResults } from './multi-codec.js';
import type { GetDataResponse, MultiResponse, ReplyHeader, Response, WatcherEvent } from './records.js';
import { hasEmptyResponse, isKnownReplyOp, isMultiOp, readResponseBody, writeResponseBody } from './response-bodies.js';
import { returnWriter, takeWriter } from './scratch-writer.js';
import { utf8Length, writeUtf8 } from './short-string-bytes.js';
import { STAT_BYTES, readStatAt, writeStatAt } from './stat-codec.js';

/** Size of a ReplyHeader: where a response record or a WatcherEvent starts. */
export const REPLY_HEADER_BYTES = 16;

function writeHeaderAt(out: Buffer, at: number, xid: number, zxid: bigint, err: number): void {
  out.writeInt32BE(xid | 0, at);
  writeInt64(out, at + 4, zxid);
  out.writeInt32BE(err | 0, at + 12);
}

export function decodeReplyHeader(payload: Buffer): ReplyHeader {
  if (payload.length < REPLY_HEADER_BYTES) {
    throw new ProtocolError(`truncated reply header: ${payload.length} of ${REPLY_HEADER_BYTES} bytes`);
  }
  return { xid: payload.readInt32BE(0), zxid: readInt64(payload, 4), err: payload.readInt32BE(12) };
}

function encodeGetDataReply(h: ReplyHeader, res: GetDataResponse, prefix: number): Buffer {
  const data = res.data;
  const size = REPLY_HEADER_BYTES + bufferBytes(data) + STAT_BYTES;
  const out = Buffer.allocUnsafe(prefix + size);
  if (prefix) out.writeInt32BE(size, 0);
  writeHeaderAt(out, prefix, h.xid, h.zxid, h.err);
  writeStatAt(out, writeBufferAt(out, prefix + REPLY_HEADER_BYTES, data), res.stat);
  return out;
}

/**
 * Whether a reply is the header alone. An error reply is, so it can answer any op, even one this
 * codec does not know (a server answers an unknown op with UNIMPLEMENTED and the request's xid).
 * Except a refused SASL packet given a response: ZooKeeper sends AUTHFAILED *and* a (null) token,
 * and its Java client reads the token whatever the err.
 */
function headerOnly(header: ReplyHeader, opType: number, response: Response | undefined): boolean {
  const bodyWithError = opType === OpCode.sasl && response !== undefined;
  return (header.err !== 0 && !bodyWithError) || hasEmptyResponse(opType);
}

function checkBody(opType: number, response: Response | undefined): asserts response is Response {
  if (!isKnownReplyOp(opType)) throw new ProtocolError(`cannot encode a reply to unknown op ${opType}`);
  if (response === undefined) throw new ProtocolError(`a successful reply to op ${opType} needs a response record`);
}

function writeBody(w: JuteWriter, opType: number, response: Response): void {
  if (isMultiOp(opType)) writeMultiResults(w, (response as MultiResponse).results);
  else writeResponseBody(w, opType, response);
}

function encode(header: ReplyHeader, opType: number, response: Response | undefined, prefix: number): Buffer {
  if (headerOnly(header, opType, response)) {
    const out = Buffer.allocUnsafe(prefix + REPLY_HEADER_BYTES);
    if (prefix) out.writeInt32BE(REPLY_HEADER_BYTES, 0);
    writeHeaderAt(out, prefix, header.xid, header.zxid, header.err);
    return out;
  }
  checkBody(opType, response);
  if (opType === OpCode.getData) return encodeGetDataReply(header, response as GetDataResponse, prefix);
  const w = takeWriter();
  try {
    if (prefix) w.int(0);
    w.int(header.xid).long(header.zxid).int(header.err);
    writeBody(w, opType, response);
    const out = w.toBufferCopy();
    if (prefix) out.writeInt32BE(out.length - 4, 0);
    return out;
  } finally {
    returnWriter(w);
  }
}

/**
 * Appends the reply frame `encodeReplyFrame({ xid, zxid, err }, opType, response)` would return to
 * `out`, encoded in place (what a server's connection writes: its flush is then one buffer). On a
 * throw nothing is appended. The header comes as three arguments: a server writes one per request.
 */
export function writeReplyFrame(out: FrameOutput, xid: number, zxid: bigint, err: number, opType: number, response?: Response): void {
  if (err === 0 && opType === OpCode.getData && response !== undefined) {
    // The hot path, sized up front and written in one claim, as encodeGetDataReply.
    const res = response as GetDataResponse;
    const at = out.claimFrame(REPLY_HEADER_BYTES + bufferBytes(res.data) + STAT_BYTES);
    const b = out.target;
    writeHeaderAt(b, at, xid, zxid, 0);
    writeStatAt(b, writeBufferAt(b, at + REPLY_HEADER_BYTES, res.data), res.stat);
    return;
  }
  const header = { xid, zxid, err };
  const mark = out.beginFrame();
  try {
    out.int(xid).long(zxid).int(err);
    if (!headerOnly(header, opType, response)) {
      checkBody(opType, response);
      writeBody(out, opType, response);
    }
    out.endFrame(mark);
  } catch (e) {
    out.dropFrame(mark);
    throw e;
  }
}

/**
 * ReplyHeader + the response record when `header.err` is 0; the header alone otherwise.
 * `opType` is the op the reply answers. A successful reply to an op it does not know throws ProtocolError.
 */
export function encodeReply(header: ReplyHeader, opType: number, response?: Response): Buffer {
  return encode(header, opType, response, 0);
}

/** Like `frame(encodeReply(...))`, without the extra copy: what a socket server writes. */
export function encodeReplyFrame(header: ReplyHeader, opType: number, response?: Response): Buffer {
  return encode(header, opType, response, 4);
}

function truncated(what: string, need: number, at: number, p: Buffer): ProtocolError {
  return new ProtocolError(`truncated reply: ${what} needs ${need} bytes at offset ${at}, ${Math.max(0, p.length - at)} left`);
}

/** getData's `data: buffer, stat: Stat`, read in place (client hot path). The data is copied out of the frame. */
function decodeGetDataBody(p: Buffer, at: number): GetDataResponse {
  if (at + 4 > p.length) throw truncated('data length', 4, at, p);
  const n = p.readInt32BE(at);
  at += 4;
  let data: Buffer | null = null;
  if (n >= 0) {
    if (at + n > p.length) throw truncated('data', n, at, p);
    data = Buffer.allocUnsafe(n);
    p.copy(data, 0, at, at + n);
    at += n;
  } else if (n !== -1) {
    throw new ProtocolError(`negative data length ${n}`);
  }
  if (at + STAT_BYTES > p.length) throw truncated('stat', STAT_BYTES, at, p);
  return { data, stat: readStatAt(p, at) };
}

function checkOffset(payload: Buffer, offset: number): void {
  if (!Number.isInteger(offset) || offset < 0 || offset > payload.length) {
    throw new ProtocolError(`offset ${offset} is outside the ${payload.length}-byte payload`);
  }
}

/**
 * Decodes only the response record of a successful reply, starting at `offset` (by default right after
 * the ReplyHeader). For a client that has already read the header with `decodeReplyHeader`.
 */
export function decodeResponse(payload: Buffer, opType: number, offset = REPLY_HEADER_BYTES): Response | undefined {
  checkOffset(payload, offset);
  if (opType === OpCode.getData) return decodeGetDataBody(payload, offset);
  if (!isKnownReplyOp(opType)) throw new ProtocolError(`cannot decode a reply to unknown op ${opType}`);
  if (hasEmptyResponse(opType)) return undefined;
  const r = new JuteReader(payload, offset);
  if (isMultiOp(opType)) return { results: readMultiResults(r) };
  return readResponseBody(opType, r);
}

/**
 * Decodes a reply to an op of type `opType`. When err is not 0 the response is undefined and any bytes
 * after the header are ignored (as the Java client does). Throws ProtocolError for an op it does not know.
 */
export function decodeReply(payload: Buffer, opType: number): { header: ReplyHeader; response: Response | undefined } {
  if (!isKnownReplyOp(opType)) throw new ProtocolError(`cannot decode a reply to unknown op ${opType}`);
  const header = decodeReplyHeader(payload);
  const response = header.err === 0 ? decodeResponse(payload, opType, REPLY_HEADER_BYTES) : undefined;
  return { header, response };
}

function encodeNotificationAt(zxid: bigint, event: WatcherEvent, prefix: number): Buffer {
  const n = utf8Length(event.path);
  const size = REPLY_HEADER_BYTES + 12 + n;
  const out = Buffer.allocUnsafe(prefix + size);
  if (prefix) out.writeInt32BE(size, 0);
  writeHeaderAt(out, prefix, Xid.notification, zxid, 0);
  const at = prefix + REPLY_HEADER_BYTES;
  out.writeInt32BE(event.type | 0, at);
  out.writeInt32BE(event.state | 0, at + 4);
  out.writeInt32BE(n, at + 8);
  writeUtf8(out, at + 12, event.path, n);
  return out;
}

/** A notification payload: ReplyHeader(xid -1, zxid, err 0) + WatcherEvent. `zxid` is -1n on servers up to 3.8. */
export function encodeNotification(zxid: bigint, event: WatcherEvent): Buffer {
  return encodeNotificationAt(zxid, event, 0);
}

/** Like `frame(encodeNotification(...))`, without the extra copy. */
export function encodeNotificationFrame(zxid: bigint, event: WatcherEvent): Buffer {
  return encodeNotificationAt(zxid, event, 4);
}

/** Appends the frame `encodeNotificationFrame` would return to `out`, encoded in place. */
export function writeNotificationFrame(out: FrameOutput, zxid: bigint, event: WatcherEvent): void {
  const mark = out.beginFrame();
  out.int(Xid.notification).long(zxid).int(0).int(event.type).int(event.state).ustring(event.path);
  out.endFrame(mark);
}

/** Reads a WatcherEvent {type, state, path} at `offset` (16 in a notification payload). */
export function decodeWatcherEvent(payload: Buffer, offset: number): WatcherEvent {
  checkOffset(payload, offset);
  if (offset + 12 > payload.length) throw truncated('watcher event', 12, offset, payload);
  const type = payload.readInt32BE(offset);
  const state = payload.readInt32BE(offset + 4);
  const n = payload.readInt32BE(offset + 8);
  const at = offset + 12;
  if (n < 0) throw new ProtocolError(n === -1 ? 'null path in watcher event' : `negative path length ${n} in watcher event`);
  if (at + n > payload.length) throw truncated('event path', n, at, payload);
  return { type, state, path: payload.toString('utf8', at, at + n) };
}
