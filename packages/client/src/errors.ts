/** Errors the client adds to @tenure/protocol's family. */
import { BadArgumentsError, KeeperError, errorCodeName } from '@tenure/protocol';

/** A request would exceed the server's frame limit (jute.maxbuffer); it was not sent. */
export class DataTooLargeError extends BadArgumentsError {
  readonly size: number;
  readonly limit: number;
  constructor(path: string, size: number, limit: number) {
    super(path, `request is ${size} bytes, more than the ${limit}-byte limit (maxBufferBytes)`);
    this.name = 'DataTooLargeError';
    this.size = size;
    this.limit = limit;
  }
}

/** An operation was called before `client.start()`. */
export class NotStartedError extends Error {
  override name = 'NotStartedError';
  constructor(what: string) {
    super(`${what}: the client has not been started; call client.start() first`);
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
 * A transaction failed and nothing was applied. `code` and `path` are those of the failing op;
 * `cause` is the specific KeeperError (e.g. BadVersionError), `results` every op's code.
 */
export class TransactionError extends KeeperError {
  readonly opIndex: number;
  readonly opType: string;
  readonly results: readonly TransactionOpResult[];
  constructor(opIndex: number, results: TransactionOpResult[]) {
    const failed = results[opIndex]!;
    super(failed.code, failed.path, `transaction op #${opIndex} (${failed.type}) failed with ${errorCodeName(failed.code)}`);
    this.name = 'TransactionError';
    this.opIndex = opIndex;
    this.opType = failed.type;
    this.results = results;
    (this as { cause?: unknown }).cause = KeeperError.from(failed.code, failed.path);
  }
}
