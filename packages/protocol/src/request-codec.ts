/**
 * Request frames: RequestHeader {xid, type} + the op's record (docs/zookeeper-wire-protocol.md §3.1, §4.4).
 *
 * Hot paths (getData/exists/getChildren, setData, ping, closeSession) write straight into one buffer
 * of the exact size, and the server's hot reads and writes decode without the table walk; everything
 * else walks the op table (request-bodies.ts), encoding into a reused scratch writer copied out once.
 */
import { bufferBytes, writeBufferAt } from './buffer-bytes.js';
import { OpCode } from './constants.js';
import { ProtocolError, UnknownOpError } from './errors.js';
import { JuteReader } from './jute-reader.js';
import type { JuteWriter } from './jute-writer.js';
import { readMultiOps, writeMultiOps } from './multi-codec.js';
import { hasEmptyRequest } from './op-table.js';
import type { Request, RequestHeader, SetDataRequest } from './records.js';
import { readRequestBody, writeRequestBody } from './request-bodies.js';
import { returnWriter, takeWriter } from './scratch-writer.js';
import { utf8Length, writeUtf8 } from './short-string-bytes.js';

const REQUEST_HEADER_BYTES = 8;

function isPathWatchOp(type: number): boolean {
  return type === OpCode.getData || type === OpCode.exists || type === OpCode.getChildren || type === OpCode.getChildren2;
}

/** Header plus `path: ustring, watch: boolean`, in one exact-size buffer. `prefix` is 4 for a frame, 0 for a payload. */
function encodePathWatch(xid: number, type: number, path: string, watch: boolean, prefix: number): Buffer {
  const n = utf8Length(path);
  const size = REQUEST_HEADER_BYTES + 4 + n + 1;
  const out = Buffer.allocUnsafe(prefix + size);
  if (prefix) out.writeInt32BE(size, 0);
  out.writeInt32BE(xid | 0, prefix);
  out.writeInt32BE(type, prefix + 4);
  out.writeInt32BE(n, prefix + 8);
  writeUtf8(out, prefix + 12, path, n);
  out[prefix + 12 + n] = watch ? 1 : 0;
  return out;
}

/**
 * Header plus setData's `path: ustring, data: buffer, version: int`, in one exact-size buffer, or
 * undefined for a record of other types (a null path, a bare Uint8Array), which the walk encodes.
 */
function encodeSetData(xid: number, req: SetDataRequest, prefix: number): Buffer | undefined {
  const { path, data } = req;
  if (typeof path !== 'string' || (data !== null && !Buffer.isBuffer(data))) return undefined;
  const n = utf8Length(path);
  const size = REQUEST_HEADER_BYTES + 4 + n + bufferBytes(data) + 4;
  const out = Buffer.allocUnsafe(prefix + size);
  if (prefix) out.writeInt32BE(size, 0);
  out.writeInt32BE(xid | 0, prefix);
  out.writeInt32BE(OpCode.setData, prefix + 4);
  out.writeInt32BE(n, prefix + 8);
  writeUtf8(out, prefix + 12, path, n);
  out.writeInt32BE(req.version | 0, writeBufferAt(out, prefix + 12 + n, data));
  return out;
}

function encodeHeaderOnly(xid: number, type: number, prefix: number): Buffer {
  const out = Buffer.allocUnsafe(prefix + REQUEST_HEADER_BYTES);
  if (prefix) out.writeInt32BE(REQUEST_HEADER_BYTES, 0);
  out.writeInt32BE(xid | 0, prefix);
  out.writeInt32BE(type, prefix + 4);
  return out;
}

function writeRequest(w: JuteWriter, xid: number, req: Request): void {
  w.int(xid).int(req.type);
  switch (req.type) {
    case OpCode.multi:
    case OpCode.multiRead:
      writeMultiOps(w, req.ops);
      return;
    case OpCode.create:
    case OpCode.create2:
    case OpCode.createContainer:
      // Written out rather than walked, like the reads in readHotBody (the client's hot write).
      w.ustring(req.path).buffer(req.data).acls(req.acl).int(req.flags);
      return;
    default:
      writeRequestBody(w, req);
  }
}

/** Any request, by the table walk into the scratch writer. */
function encodeByTable(xid: number, req: Request, prefix: number): Buffer {
  const w = takeWriter();
  try {
    if (prefix) w.int(0);
    writeRequest(w, xid, req);
    const out = w.toBufferCopy();
    if (prefix) out.writeInt32BE(out.length - 4, 0);
    return out;
  } finally {
    returnWriter(w);
  }
}

function encode(xid: number, req: Request, prefix: number): Buffer {
  const type = req.type;
  if (isPathWatchOp(type)) {
    const r = req as { path: string; watch: boolean };
    return encodePathWatch(xid, type, r.path, r.watch, prefix);
  }
  if (type === OpCode.setData) return encodeSetData(xid, req as SetDataRequest, prefix) ?? encodeByTable(xid, req, prefix);
  if (hasEmptyRequest(type)) return encodeHeaderOnly(xid, type, prefix);
  return encodeByTable(xid, req, prefix);
}

/** RequestHeader + the request record: one frame payload (no length prefix). */
export function encodeRequest(xid: number, req: Request): Buffer {
  return encode(xid, req, 0);
}

/** Like `frame(encodeRequest(xid, req))`, without the extra copy: what a socket transport writes. */
export function encodeRequestFrame(xid: number, req: Request): Buffer {
  return encode(xid, req, 4);
}

/** The encoded payload size of a request, for the maxBuffer check on the in-process transport. */
export function encodedRequestSize(xid: number, req: Request): number {
  const type = req.type;
  if (isPathWatchOp(type)) return REQUEST_HEADER_BYTES + 4 + utf8Length((req as { path: string }).path) + 1;
  if (hasEmptyRequest(type)) return REQUEST_HEADER_BYTES;
  const w = takeWriter();
  try {
    writeRequest(w, xid, req);
    return w.length;
  } finally {
    returnWriter(w);
  }
}

/** Reads `path: ustring, watch: boolean` without a reader object (server hot path). */
function decodePathWatch(header: RequestHeader, p: Buffer): Request {
  if (p.length < REQUEST_HEADER_BYTES + 4) throw new ProtocolError('truncated request: missing path', { header });
  const n = p.readInt32BE(REQUEST_HEADER_BYTES);
  const at = REQUEST_HEADER_BYTES + 4;
  if (n < 0) throw new ProtocolError(n === -1 ? 'null path' : `negative path length ${n}`, { header });
  if (at + n + 1 > p.length) throw new ProtocolError(`truncated request: path of ${n} bytes and watch flag`, { header });
  const path = p.toString('utf8', at, at + n);
  const watch = p[at + n] !== 0;
  return { type: header.type as 3 | 4 | 8 | 12, path, watch } as Request;
}

/**
 * setData and create as object literals, which V8 builds faster than the op table's walk (a keyed
 * store per field); the server decodes these on every write. op-table.test.ts checks that these
 * and the other fast paths read and write what the table does.
 */
function readHotBody(type: number, r: JuteReader): Request | undefined {
  switch (type) {
    case OpCode.setData:
      return { type, path: r.string('path'), data: r.buffer('data'), version: r.int('version') };
    case OpCode.create:
    case OpCode.create2:
    case OpCode.createContainer:
      return { type, path: r.string('path'), data: r.buffer('data'), acl: r.acls('acl list') ?? [], flags: r.int('flags') };
  }
  return undefined;
}

/**
 * Decodes a request payload. Throws `UnknownOpError` for an op code this codec does not know and
 * `ProtocolError` for bad bytes; either carries `header` once the 8-byte header could be read.
 * Bytes after the record are ignored, as ZooKeeper does.
 */
export function decodeRequest(payload: Buffer): { header: RequestHeader; request: Request } {
  if (payload.length < REQUEST_HEADER_BYTES) {
    throw new ProtocolError(`truncated request header: ${payload.length} of ${REQUEST_HEADER_BYTES} bytes`);
  }
  const header: RequestHeader = { xid: payload.readInt32BE(0), type: payload.readInt32BE(4) };
  const type = header.type;
  if (isPathWatchOp(type)) return { header, request: decodePathWatch(header, payload) };
  if (hasEmptyRequest(type)) return { header, request: { type } as Request };
  return { header, request: decodeBody(header, payload) };
}

/** The record of any op but the path-and-watch reads, read with a JuteReader; errors carry the header. */
function decodeBody(header: RequestHeader, payload: Buffer): Request {
  const type = header.type;
  const r = new JuteReader(payload, REQUEST_HEADER_BYTES);
  let request: Request | undefined;
  try {
    if (type === OpCode.multi || type === OpCode.multiRead) request = { type, ops: readMultiOps(r) };
    else request = readHotBody(type, r) ?? readRequestBody(type, r);
  } catch (e) {
    if (e instanceof ProtocolError) throw new ProtocolError(`op ${type} request: ${e.message}`, { cause: e, header });
    throw e;
  }
  if (request === undefined) throw new UnknownOpError(header);
  return request;
}
