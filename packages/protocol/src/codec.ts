/**
 * Encoders and decoders for every record of the wire doc. Payloads here exclude the int32 frame
 * length; see `frame()` and `FrameReader`.
 *
 * STUB: signatures only — to be implemented.
 */
import { ProtocolError } from './errors.js';
import type { ConnectRequest, ConnectResponse, ReplyHeader, Request, RequestHeader, Response, WatcherEvent } from './records.js';

const todo = (): never => {
  throw new ProtocolError('codec not implemented yet');
};

/** ConnectRequest payload (45 bytes for a 16-byte password). */
export function encodeConnectRequest(_req: ConnectRequest): Buffer { return todo(); }
/** Tolerates a request without the trailing readOnly byte (treated as false). */
export function decodeConnectRequest(_payload: Buffer): ConnectRequest { return todo(); }
export function encodeConnectResponse(_res: ConnectResponse): Buffer { return todo(); }
/** Tolerates a 36-byte response without readOnly. */
export function decodeConnectResponse(_payload: Buffer): ConnectResponse { return todo(); }
/** RequestHeader + the request record. */
export function encodeRequest(_xid: number, _req: Request): Buffer { return todo(); }
/** Throws ProtocolError (with `header` set when the header was readable) for unknown ops or bad bytes. */
export function decodeRequest(_payload: Buffer): { header: RequestHeader; request: Request } { return todo(); }
/** ReplyHeader + the response record when err is 0. `opType` is the op the reply answers. */
export function encodeReply(_header: ReplyHeader, _opType: number, _response?: Response): Buffer { return todo(); }
export function decodeReply(_payload: Buffer, _opType: number): { header: ReplyHeader; response: Response | undefined } { return todo(); }
export function decodeReplyHeader(_payload: Buffer): ReplyHeader { return todo(); }
/** A notification payload: ReplyHeader(xid -1, zxid, 0) + WatcherEvent. */
export function encodeNotification(_zxid: bigint, _event: WatcherEvent): Buffer { return todo(); }
export function decodeWatcherEvent(_payload: Buffer, _offset: number): WatcherEvent { return todo(); }
/** Prefixes a payload with its int32 length. */
export function frame(_payload: Buffer): Buffer { return todo(); }
/** The encoded payload size of a request, for the maxBuffer check on the in-process transport. */
export function encodedRequestSize(xid: number, req: Request): number { return encodeRequest(xid, req).length; }
