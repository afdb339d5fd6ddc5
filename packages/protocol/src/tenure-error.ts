/**
 * The one base of every error a Tenure package throws. `code` is a stable string to branch on
 * (`'NONODE'`, `'TLS_CERT_REFUSED'`, `'ILLEGAL_STATE'`); the message is for people.
 */
export class TenureError extends Error {
  override name = 'TenureError';
  readonly code: string;
  constructor(code = 'TENURE', message = 'tenure error', options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * A call made in a state that does not allow it: a second `start()`, a `start()` after `close()`,
 * an operation on a handle that was never started. A programming error, never retried.
 */
export class IllegalStateError extends TenureError {
  override name = 'IllegalStateError';
  constructor(message = 'illegal state', options?: { cause?: unknown }) {
    super('ILLEGAL_STATE', message, options);
  }
}

/**
 * An argument or option a call cannot work with: a negative timeout, an unknown mode, a missing
 * client. A programming error, thrown at once and never retried.
 */
export class InvalidArgumentError extends TenureError {
  override name = 'InvalidArgumentError';
  constructor(message = 'invalid argument', options?: { cause?: unknown }) {
    super('INVALID_ARGUMENT', message, options);
  }
}

/**
 * What a `catch` caught, as an Error to rethrow or reject with: an Error stays itself; anything
 * else (a string or an object some callback threw) becomes a TenureError `'UNEXPECTED'` holding it
 * as `cause`.
 */
export function asError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new TenureError('UNEXPECTED', typeof value === 'string' ? value : `a non-Error was thrown (${typeof value})`, { cause: value });
}
