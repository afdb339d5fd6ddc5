/** Why a leadership term ended, and the error `leadership.signal` aborts with. */
import { TenureError } from '@tenure/client';

/**
 * The reason of an aborted `leadership.signal`: the term is over and work done under it must
 * stop. `end` says why; only `released` is a term given up rather than lost.
 */
export class LeadershipLostError extends TenureError {
  override name = 'LeadershipLostError';
  constructor(
    /** The election's path. */
    readonly path = '/',
    readonly end: LeadershipEnd = 'lost',
    options?: { cause?: unknown },
  ) {
    super('LEADERSHIP_LOST', end === 'released' ? `leadership of ${path} was released` : `leadership of ${path} ended (${end})`, options);
  }
}

/** Why a term ended (the `end` of a LeadershipLostError). */
export type LeadershipEnd =
  /** The connection was suspended and the client's errorPolicy is `standard`. */
  | 'suspended'
  /** The session ended (LOST): our ephemeral node is gone or about to go. */
  | 'lost'
  /** Connected to a read-only server, which is cut off from the quorum. */
  | 'read-only'
  /** Our node was deleted by someone else (or the election's path was). */
  | 'deleted'
  /** Our node does not belong to the current session. */
  | 'not-owner'
  /** A check found another node ahead of ours. */
  | 'not-first'
  /** The latch or selector was closed, or the client was. */
  | 'closed'
  /** LeaderSelector: interruptLeadership() was called. */
  | 'interrupted'
  /** LeaderSelector: takeLeadership returned. */
  | 'released';
