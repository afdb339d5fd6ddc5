/** The error of a write whose outcome cannot be known (see write-outcome.ts and the README's table). */
import { TenureError } from '@tenure/protocol';

/**
 * A write was sent, the connection went while it was in flight, and what the server did cannot be
 * proven: the retry's answer (NodeExists, NoNode, BadVersion, a failed transaction) may have been
 * caused by the first attempt itself, or by someone else. Nothing is guessed: re-read and decide.
 * Code 'OUTCOME_UNKNOWN'; `operation` names the op ('create', 'delete', 'setData', 'setACL',
 * 'transaction', or a recipe's, e.g. 'increment'), `path` its node, `cause` the error that left
 * the outcome unknown (the retry's, or the connection loss when no retry could be risked).
 */
export class OutcomeUnknownError extends TenureError {
  override name = 'OutcomeUnknownError';
  constructor(
    /** The operation, e.g. `create` or `increment`. */
    readonly operation = 'write',
    readonly path = '/',
    cause?: unknown,
  ) {
    super('OUTCOME_UNKNOWN', `${operation} on ${path}: the connection was lost while the write was in flight, ${why(cause)}`, { cause });
  }
}

function why(cause: unknown): string {
  const code = (cause as { code?: unknown } | undefined)?.code;
  const answer = typeof code === 'string' ? ` (last answer: ${code})` : '';
  return `and whether it was applied cannot be proven${answer}: it may or may not have been applied`;
}

/**
 * The server's last answer behind `err`: the cause of an OutcomeUnknownError (the retry's
 * NodeExists, NoNode, BadVersion…), else `err` itself. For a caller to whom either outcome is fine,
 * e.g. "make sure the node exists": `if (!(answerOf(err) instanceof NodeExistsError)) throw err`.
 */
export function answerOf(err: unknown): unknown {
  return err instanceof OutcomeUnknownError ? err.cause : err;
}
