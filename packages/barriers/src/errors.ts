/**
 * The barriers' own error. Waits also reject with the client's TimeoutError, AbortError and
 * ClosedError, and server answers keep their KeeperError subclasses.
 */
import { TenureError } from '@tenure/client';

/**
 * A DoubleBarrier member's session ended while it was inside: its node vanished without the mark
 * a Tenure member writes before it leaves. `leave()` rejects with this rather than pass as if the
 * member had finished. `member` is the lost member's node name; `self` says it was our own.
 */
export class MemberLostError extends TenureError {
  override name = 'MemberLostError';
  constructor(
    /** The barrier's path. */
    readonly path = '/',
    /** The lost member's node name (a UUID) under `path`. */
    readonly member = 'unknown',
    /** True when the lost member is the caller's own (its session ended). */
    readonly self = false,
  ) {
    super(
      'MEMBER_LOST',
      self
        ? `${path}: our member node ${member} is gone (our session ended while inside the barrier)`
        : `${path}: member ${member} was lost while inside the barrier (its session ended before it left)`,
    );
  }
}
