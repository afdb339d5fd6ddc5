/**
 * The one rule for what a recipe does when a step fails, so that every recipe answers the same:
 *
 * | verdict     | the failure                                      | the recipe                                        |
 * |-------------|--------------------------------------------------|---------------------------------------------------|
 * | `closed`    | ClosedError, or the client (or recipe) closed    | stops quietly: nothing can run any more           |
 * | `stop`      | NoAuthError                                      | reports it (`error` event / its error path) and stops that work; never retried |
 * | `session`   | SessionExpiredError (the session was LOST)       | quiet: its RECONNECTED handler starts over on the new session |
 * | `transient` | ConnectionLoss, OperationTimeout, SessionMoved   | quiet: retries with backoff (or on RECONNECTED)   |
 * | `report`    | anything else                                    | reports it, retries with backoff                  |
 *
 * NoAuth is Curator's rule: credentials do not change by waiting, so a retry would loop forever.
 */
import { ClosedError, NoAuthError, SessionExpiredError } from '@tenure/protocol';
import { isRetryableError } from '../retry-policies.js';

export type FailureVerdict = 'closed' | 'stop' | 'session' | 'transient' | 'report';

/** @param closed the owner's closed signal (`client.closedSignal`, or the recipe's own). */
export function triageFailure(err: unknown, closed?: AbortSignal): FailureVerdict {
  if (err instanceof ClosedError || closed?.aborted) return 'closed';
  if (err instanceof NoAuthError) return 'stop';
  if (err instanceof SessionExpiredError) return 'session';
  if (isRetryableError(err)) return 'transient';
  return 'report';
}
