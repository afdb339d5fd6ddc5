/**
 * Typed errors, all TenureErrors with a string `code`. Server answers form one `KeeperError` family
 * keyed by ZooKeeper's codes (docs/zookeeper-wire-protocol.md §5); a few client-side errors stand beside it.
 */
import type { RequestHeader } from './records.js';
import { TenureError } from './tenure-error.js';

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
  [-1]: 'system error',
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
  [-100]: 'API error',
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

/** Options of a KeeperError: `code` replaces the string code for a client-side refusal (see DataTooLargeError). */
export interface KeeperErrorOptions {
  cause?: unknown;
  code?: string;
}

/**
 * An error answered by a server (or by the client in ZooKeeper's name). `code` is the code's name
 * (`'NONODE'`), `keeperCode` ZooKeeper's number (-101). Built with no arguments it is a SYSTEMERROR.
 */
export class KeeperError extends TenureError {
  override name = 'KeeperError';
  /** ZooKeeper's numeric code (`KeeperException.Code`), e.g. -101. */
  readonly keeperCode: number;
  readonly path: string | undefined;
  constructor(keeperCode: number = ErrorCode.SYSTEMERROR, path?: string, detail?: string, options?: KeeperErrorOptions) {
    const what = messages[keeperCode] ?? `error ${keeperCode}`;
    super(
      options?.code ?? codeNames.get(keeperCode) ?? 'UNKNOWN',
      `${errorCodeName(keeperCode)}: ${what}${path !== undefined ? ` (${path})` : ''}${detail ? `: ${detail}` : ''}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.keeperCode = keeperCode;
    this.path = path;
  }
  /** ZooKeeper's name of the code (`UNKNOWN(<n>)` for a number it does not know). */
  get codeName(): string {
    return errorCodeName(this.keeperCode);
  }
  /** Builds the most specific subclass for a code. */
  static from(keeperCode: number, path?: string, detail?: string): KeeperError {
    const Ctor = byCode.get(keeperCode);
    return Ctor ? new Ctor(path, detail) : new KeeperError(keeperCode, path, detail);
  }
}

// One real class per code, so that each is a type and works with instanceof; `code` is its name.

export class RuntimeInconsistencyError extends KeeperError {
  override name = 'RuntimeInconsistencyError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.RUNTIMEINCONSISTENCY, path, detail, options);
  }
}

export class DataInconsistencyError extends KeeperError {
  override name = 'DataInconsistencyError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.DATAINCONSISTENCY, path, detail, options);
  }
}

export class ConnectionLossError extends KeeperError {
  override name = 'ConnectionLossError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.CONNECTIONLOSS, path, detail, options);
  }
}

export class MarshallingError extends KeeperError {
  override name = 'MarshallingError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.MARSHALLINGERROR, path, detail, options);
  }
}

export class UnimplementedError extends KeeperError {
  override name = 'UnimplementedError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.UNIMPLEMENTED, path, detail, options);
  }
}

export class OperationTimeoutError extends KeeperError {
  override name = 'OperationTimeoutError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.OPERATIONTIMEOUT, path, detail, options);
  }
}

export class BadArgumentsError extends KeeperError {
  override name = 'BadArgumentsError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.BADARGUMENTS, path, detail, options);
  }
}

export class UnknownSessionError extends KeeperError {
  override name = 'UnknownSessionError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.UNKNOWNSESSION, path, detail, options);
  }
}

export class NewConfigNoQuorumError extends KeeperError {
  override name = 'NewConfigNoQuorumError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.NEWCONFIGNOQUORUM, path, detail, options);
  }
}

export class ReconfigInProgressError extends KeeperError {
  override name = 'ReconfigInProgressError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.RECONFIGINPROGRESS, path, detail, options);
  }
}

export class NoNodeError extends KeeperError {
  override name = 'NoNodeError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.NONODE, path, detail, options);
  }
}

export class NoAuthError extends KeeperError {
  override name = 'NoAuthError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.NOAUTH, path, detail, options);
  }
}

export class BadVersionError extends KeeperError {
  override name = 'BadVersionError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.BADVERSION, path, detail, options);
  }
}

export class NoChildrenForEphemeralsError extends KeeperError {
  override name = 'NoChildrenForEphemeralsError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.NOCHILDRENFOREPHEMERALS, path, detail, options);
  }
}

export class NodeExistsError extends KeeperError {
  override name = 'NodeExistsError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.NODEEXISTS, path, detail, options);
  }
}

export class NotEmptyError extends KeeperError {
  override name = 'NotEmptyError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.NOTEMPTY, path, detail, options);
  }
}

export class SessionExpiredError extends KeeperError {
  override name = 'SessionExpiredError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.SESSIONEXPIRED, path, detail, options);
  }
}

export class InvalidCallbackError extends KeeperError {
  override name = 'InvalidCallbackError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.INVALIDCALLBACK, path, detail, options);
  }
}

export class InvalidACLError extends KeeperError {
  override name = 'InvalidACLError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.INVALIDACL, path, detail, options);
  }
}

/**
 * Authentication failed: the server refused an auth packet or the SASL exchange (a wrong password,
 * an unknown user), or the client refused a server that could not prove it knows the password.
 */
export class AuthFailedError extends KeeperError {
  override name = 'AuthFailedError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.AUTHFAILED, path, detail, options);
  }
}

export class SessionMovedError extends KeeperError {
  override name = 'SessionMovedError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.SESSIONMOVED, path, detail, options);
  }
}

export class NotReadOnlyError extends KeeperError {
  override name = 'NotReadOnlyError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.NOTREADONLY, path, detail, options);
  }
}

export class EphemeralOnLocalSessionError extends KeeperError {
  override name = 'EphemeralOnLocalSessionError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.EPHEMERALONLOCALSESSION, path, detail, options);
  }
}

export class NoWatcherError extends KeeperError {
  override name = 'NoWatcherError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.NOWATCHER, path, detail, options);
  }
}

export class RequestTimeoutError extends KeeperError {
  override name = 'RequestTimeoutError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.REQUESTTIMEOUT, path, detail, options);
  }
}

export class ReconfigDisabledError extends KeeperError {
  override name = 'ReconfigDisabledError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.RECONFIGDISABLED, path, detail, options);
  }
}

export class SessionClosedRequireSaslAuthError extends KeeperError {
  override name = 'SessionClosedRequireSaslAuthError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.SESSIONCLOSEDREQUIRESASLAUTH, path, detail, options);
  }
}

export class QuotaExceededError extends KeeperError {
  override name = 'QuotaExceededError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.QUOTAEXCEEDED, path, detail, options);
  }
}

export class ThrottledOpError extends KeeperError {
  override name = 'ThrottledOpError';
  constructor(path?: string, detail?: string, options?: KeeperErrorOptions) {
    super(ErrorCode.THROTTLEDOP, path, detail, options);
  }
}

type KeeperErrorCtor = new (path?: string, detail?: string) => KeeperError;
/** The subclass of each code, for `KeeperError.from`. */
const byCode = new Map<number, KeeperErrorCtor>([
  [ErrorCode.RUNTIMEINCONSISTENCY, RuntimeInconsistencyError],
  [ErrorCode.DATAINCONSISTENCY, DataInconsistencyError],
  [ErrorCode.CONNECTIONLOSS, ConnectionLossError],
  [ErrorCode.MARSHALLINGERROR, MarshallingError],
  [ErrorCode.UNIMPLEMENTED, UnimplementedError],
  [ErrorCode.OPERATIONTIMEOUT, OperationTimeoutError],
  [ErrorCode.BADARGUMENTS, BadArgumentsError],
  [ErrorCode.UNKNOWNSESSION, UnknownSessionError],
  [ErrorCode.NEWCONFIGNOQUORUM, NewConfigNoQuorumError],
  [ErrorCode.RECONFIGINPROGRESS, ReconfigInProgressError],
  [ErrorCode.NONODE, NoNodeError],
  [ErrorCode.NOAUTH, NoAuthError],
  [ErrorCode.BADVERSION, BadVersionError],
  [ErrorCode.NOCHILDRENFOREPHEMERALS, NoChildrenForEphemeralsError],
  [ErrorCode.NODEEXISTS, NodeExistsError],
  [ErrorCode.NOTEMPTY, NotEmptyError],
  [ErrorCode.SESSIONEXPIRED, SessionExpiredError],
  [ErrorCode.INVALIDCALLBACK, InvalidCallbackError],
  [ErrorCode.INVALIDACL, InvalidACLError],
  [ErrorCode.AUTHFAILED, AuthFailedError],
  [ErrorCode.SESSIONMOVED, SessionMovedError],
  [ErrorCode.NOTREADONLY, NotReadOnlyError],
  [ErrorCode.EPHEMERALONLOCALSESSION, EphemeralOnLocalSessionError],
  [ErrorCode.NOWATCHER, NoWatcherError],
  [ErrorCode.REQUESTTIMEOUT, RequestTimeoutError],
  [ErrorCode.RECONFIGDISABLED, ReconfigDisabledError],
  [ErrorCode.SESSIONCLOSEDREQUIRESASLAUTH, SessionClosedRequireSaslAuthError],
  [ErrorCode.QUOTAEXCEEDED, QuotaExceededError],
  [ErrorCode.THROTTLEDOP, ThrottledOpError],
]);

/**
 * Malformed bytes on the wire: truncated frame, bad length, unknown record.
 * When a request header could be read before the failure, `header` carries it, so that a server can
 * answer with the right xid before closing the connection.
 */
export class ProtocolError extends TenureError {
  override name = 'ProtocolError';
  readonly header?: RequestHeader;
  constructor(message = 'malformed bytes on the wire', options?: { cause?: unknown; header?: RequestHeader }) {
    super('PROTOCOL', message, options);
    if (options?.header !== undefined) this.header = options.header;
  }
}

/** A request whose op code this codec does not know. A server answers UNIMPLEMENTED (-6) with `header.xid`, then closes. */
export class UnknownOpError extends ProtocolError {
  override name = 'UnknownOpError';
  declare readonly header: RequestHeader;
  readonly opType: number;
  constructor(header: RequestHeader = { xid: 0, type: -1 }) {
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
  constructor(length = -1, maxFrameBytes = 0, prefix: Buffer = Buffer.alloc(0)) {
    super(length < 0 ? `negative frame length ${length}` : `frame length ${length} exceeds the limit of ${maxFrameBytes} bytes`);
    this.length = length;
    this.prefix = prefix;
  }
}

/** A wait ran past its `timeoutMs`. */
export class TimeoutError extends TenureError {
  override name = 'TimeoutError';
  readonly timeoutMs: number | undefined;
  constructor(message = 'timed out', timeoutMs?: number) {
    super('TIMEOUT', message);
    this.timeoutMs = timeoutMs;
  }
}

/** A wait was cancelled through its `AbortSignal`. */
export class AbortError extends TenureError {
  override name = 'AbortError';
  constructor(message = 'the operation was aborted', options?: { cause?: unknown }) {
    super('ABORTED', message, options);
  }
}

/** A call was made on a handle that is closed. */
export class ClosedError extends TenureError {
  override name = 'ClosedError';
  constructor(what = 'the handle') {
    super('CLOSED', `${what} is closed`);
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

/** The string code of a TLS refusal: `'TLS_'` and the reason in upper snake case ('TLS_CERT_REFUSED' for certificate-refused). */
export const tlsErrorCodes = {
  'untrusted-certificate': 'TLS_UNTRUSTED_CERTIFICATE',
  expired: 'TLS_EXPIRED',
  'hostname-mismatch': 'TLS_HOSTNAME_MISMATCH',
  'no-client-certificate': 'TLS_NO_CLIENT_CERTIFICATE',
  'certificate-refused': 'TLS_CERT_REFUSED',
  'handshake-failed': 'TLS_HANDSHAKE_FAILED',
} as const satisfies Record<TlsRefusal, string>;

/**
 * A TLS handshake with `host` was refused. A configuration problem, not a connection loss: the
 * client does not retry it as one (see `ClientOptions.tls`). `code` names the reason
 * (`tlsErrorCodes`); `nodeCode` is Node's own error code (`CERT_HAS_EXPIRED`,
 * `ERR_TLS_CERT_ALTNAME_INVALID`, `ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE`, ...) when there was one.
 */
export class TlsError extends TenureError {
  override name = 'TlsError';
  declare readonly code: (typeof tlsErrorCodes)[TlsRefusal];
  readonly host: string;
  readonly reason: TlsRefusal;
  readonly nodeCode: string | undefined;
  constructor(
    host = 'the server',
    reason: TlsRefusal = 'handshake-failed',
    detail = 'no detail',
    options?: { cause?: unknown; nodeCode?: string },
  ) {
    super(tlsErrorCodes[reason], `TLS handshake with ${host} refused (${reason}): ${detail}`, options);
    this.host = host;
    this.reason = reason;
    this.nodeCode = options?.nodeCode;
  }
}

/** A path that ZooKeeper would refuse (docs/zookeeper-wire-protocol.md §6.7). */
export class InvalidPathError extends TenureError {
  override name = 'InvalidPathError';
  readonly path: string;
  readonly reason: string;
  constructor(path = '', reason = 'not a valid ZooKeeper path') {
    super('INVALID_PATH', `invalid path ${JSON.stringify(path)}: ${reason}`);
    this.path = path;
    this.reason = reason;
  }
}

/** Retryable by the client's retry policy: the outcome of the operation is unknown or transient. */
export function isRetryableCode(code: number): boolean {
  return code === ErrorCode.CONNECTIONLOSS || code === ErrorCode.OPERATIONTIMEOUT || code === ErrorCode.SESSIONMOVED;
}
