/**
 * Typed errors. Server answers form one `KeeperError` family keyed by ZooKeeper's codes (docs/zookeeper-wire-protocol.md §5);
 * a few client-side errors stand beside it.
 */
import type { RequestHeader } from './records.js';

/** ZooKeeper's error codes (`KeeperException.Code`). */
export const ErrorCode = {
  OK: 0,
  SYSTEMERROR: -1,
  RUNTIMEINCONSISTENCY: -2,
  DATAINCONSISTENCY: -3,
  CONNECTIONLOSS: -4,
  MARSHALLINGERROR: -5,
  UNIMPLEMENTED: -6,
  OPERATIONTIMEOUT: -7,
  BADARGUMENTS: -8,
  UNKNOWNSESSION: -12,
  NEWCONFIGNOQUORUM: -13,
  RECONFIGINPROGRESS: -14,
  APIERROR: -100,
  NONODE: -101,
  NOAUTH: -102,
  BADVERSION: -103,
  NOCHILDRENFOREPHEMERALS: -108,
  NODEEXISTS: -110,
  NOTEMPTY: -111,
  SESSIONEXPIRED: -112,
  INVALIDCALLBACK: -113,
  INVALIDACL: -114,
  AUTHFAILED: -115,
  SESSIONMOVED: -118,
  NOTREADONLY: -119,
  EPHEMERALONLOCALSESSION: -120,
  NOWATCHER: -121,
  REQUESTTIMEOUT: -122,
  RECONFIGDISABLED: -123,
  SESSIONCLOSEDREQUIRESASLAUTH: -124,
  QUOTAEXCEEDED: -125,
  THROTTLEDOP: -127,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const codeNames = new Map<number, string>(Object.entries(ErrorCode).map(([k, v]) => [v, k]));

/** The name of a code, e.g. -101 → "NONODE"; unknown codes are named "UNKNOWN(<n>)". */
export function errorCodeName(code: number): string {
  return codeNames.get(code) ?? `UNKNOWN(${code})`;
}

const messages: Record<number, string> = {
  [-2]: 'runtime inconsistency',
  [-3]: 'data inconsistency',
  [-4]: 'connection loss',
  [-5]: 'marshalling error',
  [-6]: 'unimplemented',
  [-7]: 'operation timeout',
  [-8]: 'bad arguments',
  [-12]: 'unknown session',
  [-13]: 'new config has no quorum',
  [-14]: 'reconfig in progress',
  [-101]: 'no node',
  [-102]: 'not authorized',
  [-103]: 'bad version',
  [-108]: 'ephemerals cannot have children',
  [-110]: 'node exists',
  [-111]: 'directory not empty',
  [-112]: 'session expired',
  [-113]: 'invalid callback',
  [-114]: 'invalid ACL',
  [-115]: 'authentication failed',
  [-118]: 'session moved',
  [-119]: 'not a read-only call',
  [-120]: 'ephemeral on local session',
  [-121]: 'no watcher',
  [-122]: 'request timeout',
  [-123]: 'reconfig disabled',
  [-124]: 'session closed: SASL authentication required',
  [-125]: 'quota exceeded',
  [-127]: 'operation throttled',
};

/** An error answered by a server (or by the client in ZooKeeper's name), with ZooKeeper's numeric code. */
export class KeeperError extends Error {
  override name = 'KeeperError';
  readonly code: number;
  /** ZooKeeper's numeric code (`KeeperException.Code`), e.g. -101; read this one, `code` becomes the string name. */
  readonly keeperCode: number;
  readonly path: string | undefined;
  constructor(code: number, path?: string, detail?: string) {
    const what = messages[code] ?? `error ${code}`;
    super(`${errorCodeName(code)}: ${what}${path !== undefined ? ` (${path})` : ''}${detail ? `: ${detail}` : ''}`);
    this.code = code;
    this.keeperCode = code;
    this.path = path;
  }
  get codeName(): string {
    return errorCodeName(this.code);
  }
  /** Builds the most specific subclass for a code. */
  static from(code: number, path?: string, detail?: string): KeeperError {
    const Ctor = byCode.get(code);
    return Ctor ? new Ctor(path, detail) : new KeeperError(code, path, detail);
  }
}

type KeeperErrorCtor = new (path?: string, detail?: string) => KeeperError;
const byCode = new Map<number, KeeperErrorCtor>();

function define(code: number, name: string): KeeperErrorCtor {
  const C = class extends KeeperError {
    constructor(path?: string, detail?: string) {
      super(code, path, detail);
      this.name = name;
    }
  };
  Object.defineProperty(C, 'name', { value: name });
  byCode.set(code, C);
  return C;
}

export const RuntimeInconsistencyError = define(ErrorCode.RUNTIMEINCONSISTENCY, 'RuntimeInconsistencyError');
export const DataInconsistencyError = define(ErrorCode.DATAINCONSISTENCY, 'DataInconsistencyError');
export const ConnectionLossError = define(ErrorCode.CONNECTIONLOSS, 'ConnectionLossError');
export const MarshallingError = define(ErrorCode.MARSHALLINGERROR, 'MarshallingError');
export const UnimplementedError = define(ErrorCode.UNIMPLEMENTED, 'UnimplementedError');
export const OperationTimeoutError = define(ErrorCode.OPERATIONTIMEOUT, 'OperationTimeoutError');
export const BadArgumentsError = define(ErrorCode.BADARGUMENTS, 'BadArgumentsError');
export const UnknownSessionError = define(ErrorCode.UNKNOWNSESSION, 'UnknownSessionError');
export const NewConfigNoQuorumError = define(ErrorCode.NEWCONFIGNOQUORUM, 'NewConfigNoQuorumError');
export const ReconfigInProgressError = define(ErrorCode.RECONFIGINPROGRESS, 'ReconfigInProgressError');
export const NoNodeError = define(ErrorCode.NONODE, 'NoNodeError');
export const NoAuthError = define(ErrorCode.NOAUTH, 'NoAuthError');
export const BadVersionError = define(ErrorCode.BADVERSION, 'BadVersionError');
export const NoChildrenForEphemeralsError = define(ErrorCode.NOCHILDRENFOREPHEMERALS, 'NoChildrenForEphemeralsError');
export const NodeExistsError = define(ErrorCode.NODEEXISTS, 'NodeExistsError');
export const NotEmptyError = define(ErrorCode.NOTEMPTY, 'NotEmptyError');
export const SessionExpiredError = define(ErrorCode.SESSIONEXPIRED, 'SessionExpiredError');
export const InvalidCallbackError = define(ErrorCode.INVALIDCALLBACK, 'InvalidCallbackError');
export const InvalidACLError = define(ErrorCode.INVALIDACL, 'InvalidACLError');
/**
 * Authentication failed: the server refused an auth packet or the SASL exchange (a wrong password,
 * an unknown user), or the client refused a server that could not prove it knows the password.
 * A class of its own (not only a code) so that it can be named as a type: `catch (e: AuthFailedError)`.
 */
export class AuthFailedError extends KeeperError {
  constructor(path?: string, detail?: string) {
    super(ErrorCode.AUTHFAILED, path, detail);
    this.name = 'AuthFailedError';
  }
}
byCode.set(ErrorCode.AUTHFAILED, AuthFailedError);
export const SessionMovedError = define(ErrorCode.SESSIONMOVED, 'SessionMovedError');
export const NotReadOnlyError = define(ErrorCode.NOTREADONLY, 'NotReadOnlyError');
export const EphemeralOnLocalSessionError = define(ErrorCode.EPHEMERALONLOCALSESSION, 'EphemeralOnLocalSessionError');
export const NoWatcherError = define(ErrorCode.NOWATCHER, 'NoWatcherError');
export const RequestTimeoutError = define(ErrorCode.REQUESTTIMEOUT, 'RequestTimeoutError');
export const ReconfigDisabledError = define(ErrorCode.RECONFIGDISABLED, 'ReconfigDisabledError');
export const SessionClosedRequireSaslAuthError = define(ErrorCode.SESSIONCLOSEDREQUIRESASLAUTH, 'SessionClosedRequireSaslAuthError');
export const QuotaExceededError = define(ErrorCode.QUOTAEXCEEDED, 'QuotaExceededError');
export const ThrottledOpError = define(ErrorCode.THROTTLEDOP, 'ThrottledOpError');

/**
 * Malformed bytes on the wire: truncated frame, bad length, unknown record.
 * When a request header could be read before the failure, `header` carries it, so that a server can
 * answer with the right xid before closing the connection.
 */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
  readonly header?: RequestHeader;
  constructor(message: string, options?: { cause?: unknown; header?: RequestHeader }) {
    super(message, options);
    if (options?.header !== undefined) this.header = options.header;
  }
}

/** A request whose op code this codec does not know. A server answers UNIMPLEMENTED (-6) with `header.xid`, then closes. */
export class UnknownOpError extends ProtocolError {
  override name = 'UnknownOpError';
  declare readonly header: RequestHeader;
  readonly opType: number;
  constructor(header: RequestHeader) {
    super(`unknown op code ${header.type} (xid ${header.xid})`, { header });
    this.opType = header.type;
  }
}

/**
 * A frame length prefix that is negative or larger than the limit. `prefix` holds the four raw bytes:
 * on a brand-new server connection they may spell a four-letter word (see `fourLetterWord`).
 */
export class FrameLengthError extends ProtocolError {
  override name = 'FrameLengthError';
  readonly length: number;
  readonly prefix: Buffer;
  constructor(length: number, maxFrameBytes: number, prefix: Buffer) {
    super(length < 0 ? `negative frame length ${length}` : `frame length ${length} exceeds the limit of ${maxFrameBytes} bytes`);
    this.length = length;
    this.prefix = prefix;
  }
}

/** A wait ran past its `timeoutMs`. */
export class TimeoutError extends Error {
  override name = 'TimeoutError';
  readonly timeoutMs: number | undefined;
  constructor(message: string, timeoutMs?: number) {
    super(message);
    this.timeoutMs = timeoutMs;
  }
}

/** A wait was cancelled through its `AbortSignal`. */
export class AbortError extends Error {
  override name = 'AbortError';
  constructor(message = 'the operation was aborted', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A call was made on a handle that is closed. */
export class ClosedError extends Error {
  override name = 'ClosedError';
  constructor(what: string) {
    super(`${what} is closed`);
  }
}

/**
 * Why a TLS handshake was refused, by this side or by the server:
 * - `untrusted-certificate`: the peer's certificate does not chain to a trusted CA (unknown CA, self-signed);
 * - `expired`: a certificate is expired or not yet valid;
 * - `hostname-mismatch`: the server's certificate does not name the host connected to;
 * - `no-client-certificate`: the server requires a client certificate and none was sent;
 * - `certificate-refused`: the server refused the client's certificate (Java servers say no more);
 * - `handshake-failed`: no common protocol version or cipher, or the server does not speak TLS.
 */
export type TlsRefusal =
  'untrusted-certificate' | 'expired' | 'hostname-mismatch' | 'no-client-certificate' | 'certificate-refused' | 'handshake-failed';

/**
 * A TLS handshake with `host` was refused. A configuration problem, not a connection loss: the
 * client does not retry it as one (see `ClientOptions.tls`). `code` is Node's error code
 * (`CERT_HAS_EXPIRED`, `ERR_TLS_CERT_ALTNAME_INVALID`, `ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE`, ...).
 */
export class TlsError extends Error {
  override name = 'TlsError';
  readonly host: string;
  readonly reason: TlsRefusal;
  readonly code: string | undefined;
  constructor(host: string, reason: TlsRefusal, detail: string, options?: { cause?: unknown; code?: string }) {
    super(`TLS handshake with ${host} refused (${reason}): ${detail}`, options);
    this.host = host;
    this.reason = reason;
    this.code = options?.code;
  }
}

/** A path that ZooKeeper would refuse (docs/zookeeper-wire-protocol.md §6.7). */
export class InvalidPathError extends Error {
  override name = 'InvalidPathError';
  readonly path: string;
  readonly reason: string;
  constructor(path: string, reason: string) {
    super(`invalid path ${JSON.stringify(path)}: ${reason}`);
    this.path = path;
    this.reason = reason;
  }
}

/** Retryable by the client's retry policy: the outcome of the operation is unknown or transient. */
export function isRetryableCode(code: number): boolean {
  return code === ErrorCode.CONNECTIONLOSS || code === ErrorCode.OPERATIONTIMEOUT || code === ErrorCode.SESSIONMOVED;
}
