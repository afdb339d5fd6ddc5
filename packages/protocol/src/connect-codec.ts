/**
 * The handshake records (docs/zookeeper-wire-protocol.md §2.2, §2.3). Both end with a readOnly byte that very old peers omit:
 * decoders treat a missing byte as false, and encoders can leave it out to answer such a peer in kind.
 */
import { JuteReader } from './jute-reader.js';
import { JuteWriter } from './jute-writer.js';
import type { ConnectRequest, ConnectResponse } from './records.js';

/** ConnectRequest payload: 45 bytes for a 16-byte password, 44 with `includeReadOnly` false. */
export function encodeConnectRequest(req: ConnectRequest, includeReadOnly = true): Buffer {
  const w = new JuteWriter(64);
  w.int(req.protocolVersion).long(req.lastZxidSeen).int(req.timeOut).long(req.sessionId).buffer(req.passwd);
  if (includeReadOnly) w.bool(req.readOnly);
  return w.toBuffer();
}

/** Tolerates a request without the trailing readOnly byte (treated as false); a null password reads as empty. */
export function decodeConnectRequest(payload: Buffer): ConnectRequest {
  const r = new JuteReader(payload);
  const protocolVersion = r.int('protocolVersion');
  const lastZxidSeen = r.long('lastZxidSeen');
  const timeOut = r.int('timeOut');
  const sessionId = r.long('sessionId');
  const passwd = r.buffer('passwd') ?? Buffer.alloc(0);
  const readOnly = r.remaining > 0 ? r.bool('readOnly') : false;
  return { protocolVersion, lastZxidSeen, timeOut, sessionId, passwd, readOnly };
}

/** True when a ConnectRequest payload carries the trailing readOnly byte (a server then answers with it too). */
export function connectRequestHasReadOnly(payload: Buffer): boolean {
  const r = new JuteReader(payload);
  r.int();
  r.long();
  r.int();
  r.long();
  r.buffer('passwd');
  return r.remaining > 0;
}

/** ConnectResponse payload: 37 bytes for a 16-byte password, 36 with `includeReadOnly` false. */
export function encodeConnectResponse(res: ConnectResponse, includeReadOnly = true): Buffer {
  const w = new JuteWriter(64);
  w.int(res.protocolVersion).int(res.timeOut).long(res.sessionId).buffer(res.passwd);
  if (includeReadOnly) w.bool(res.readOnly);
  return w.toBuffer();
}

/** Tolerates a 36-byte response without readOnly (treated as false). */
export function decodeConnectResponse(payload: Buffer): ConnectResponse {
  const r = new JuteReader(payload);
  const protocolVersion = r.int('protocolVersion');
  const timeOut = r.int('timeOut');
  const sessionId = r.long('sessionId');
  const passwd = r.buffer('passwd') ?? Buffer.alloc(0);
  const readOnly = r.remaining > 0 ? r.bool('readOnly') : false;
  return { protocolVersion, timeOut, sessionId, passwd, readOnly };
}
