/** Errors the client adds to @tenure/protocol's family. */
import { BadArgumentsError, ErrorCode, KeeperError, TenureError, errorCodeName } from '@tenure/protocol';

/**
 * A request would exceed the server's frame limit (jute.maxbuffer); it was not sent. Code
 * 'DATA_TOO_LARGE'; `keeperCode` is BADARGUMENTS (-8), what a server would have answered.
 */
export class DataTooLargeError extends BadArgumentsError {
  override name = 'DataTooLargeError';
  readonly size: number;
  readonly limit: number;
  constructor(path?: string, size = 0, limit = 0) {
    super(path, `request is ${size} bytes, more than the ${limit}-byte limit (maxBufferBytes)`, { code: 'DATA_TOO_LARGE' });
    this.size = size;
    this.limit = limit;
  }
}

/** An operation was called before `client.start()`. */
export class NotStartedError extends TenureError {
  override name = 'NotStartedError';
  constructor(what = 'the operation') {
    super('NOT_STARTED', `${what}: the client has not been started; call client.start() first`);
  }
}

/** One op of a failed transaction, as reported by the server. */
export interface TransactionOpResult {
  /** 'create' | 'delete' | 'setData' | 'check' */
  type: string;
  path: string;
  /** 0 for ops that would have succeeded, the failing op's code, -2 (RuntimeInconsistency) after it. */
  code: number;
}

/**
 * A transaction failed and nothing was applied. `code`, `keeperCode` and `path` are those of the
 * failing op (`'BADVERSION'`, -103); `cause` is the specific KeeperError (e.g. BadVersionError),
 * `results` every op's numeric code. Built with no arguments it is a lone failed op with SYSTEMERROR.
 */
export class TransactionError extends KeeperError {
  override name = 'TransactionError';
  readonly opIndex: number;
  readonly opType: string;
  readonly results: readonly TransactionOpResult[];
  constructor(opIndex = 0, results: TransactionOpResult[] = [{ type: 'check', path: '/', code: ErrorCode.SYSTEMERROR }]) {
    const failed = results[opIndex]!;
    super(failed.code, failed.path, `transaction op #${opIndex} (${failed.type}) failed with ${errorCodeName(failed.code)}`);
    this.opIndex = opIndex;
    this.opType = failed.type;
    this.results = results;
    (this as { cause?: unknown }).cause = KeeperError.from(failed.code, failed.path);
  }
}
