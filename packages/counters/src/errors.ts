/** The errors of @tenure/counters, besides the client's (KeeperError, ClosedError, ...). */
import { TenureError } from '@tenure/client';

/**
 * A write was sent, the connection went while it was in flight, and what the server did cannot be
 * known: the node has changed since we read it, and that may be our own write or someone else's.
 * Nothing is guessed: re-read (`get()`) and decide. `cause` is the error that made it unknown.
 */
export class OutcomeUnknownError extends TenureError {
  override name = 'OutcomeUnknownError';
  constructor(
    /** The operation, e.g. `increment`. */
    readonly operation = 'write',
    readonly path = '/',
    cause?: unknown,
  ) {
    super(
      'OUTCOME_UNKNOWN',
      `${operation} on ${path}: the connection was lost while the write was in flight and the node changed since; it may or may not have been applied`,
      { cause },
    );
  }
}

/** A node holds bytes that are not a value of the recipe's type (Curator: "Corrupted data for node"). */
export class CorruptedValueError extends TenureError {
  override name = 'CorruptedValueError';
  constructor(
    readonly path = '/',
    readonly bytes: Buffer = Buffer.alloc(0),
    expected = 'a value',
  ) {
    super(
      'CORRUPTED_VALUE',
      `Corrupted data for node "${path}": [${[...bytes].map((b) => '0x' + b.toString(16)).join(', ')}] (expected ${expected})`,
    );
  }
}
