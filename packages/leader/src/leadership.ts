/** One leadership term: its fencing token and the signal that ends it; and what every participant is given. */
import type { Logger, RetryPolicy } from '@tenure/client';
import { LeadershipLostError, type LeadershipEnd } from './errors.js';

/** Options of every participant, latch or selector. */
export interface ParticipantOptions {
  /** The participant's id: the data of our node. Default ''. */
  id?: string;
  /** pino-compatible; default a child of the client's logger. */
  logger?: Logger;
  /** Paces the retries after a failure (its `delayMs`); default the client's retry policy. */
  retryPolicy?: RetryPolicy;
}

/** What a participant holds while it leads. */
export interface Leadership {
  /**
   * The czxid of the node that won: it rises strictly from one leader to the next on the same
   * election path (zxids are never reused, even when the container parent is re-created). A term
   * that resumes on the same node after a reconnect keeps its token, as no other leader can have
   * come between. Pass it to the resources you guard; they reject smaller tokens.
   */
  readonly fencingToken: bigint;
  /** Aborts (with a LeadershipLostError) the moment the term ends, before any event. */
  readonly signal: AbortSignal;
  /** The winning node's full path. */
  readonly path: string;
}

/** A term in progress: the leadership handed out and the controller that ends it. */
export class Term {
  private readonly controller = new AbortController();
  /** What listeners and callers see (a plain object: they cannot end the term themselves). */
  readonly leadership: Leadership;

  constructor(
    fencingToken: bigint,
    path: string,
    private readonly electionPath: string,
  ) {
    this.leadership = Object.freeze({ fencingToken, signal: this.controller.signal, path });
  }

  get ended(): boolean {
    return this.controller.signal.aborted;
  }

  end(end: LeadershipEnd, cause?: unknown): void {
    if (!this.ended) this.controller.abort(new LeadershipLostError(this.electionPath, end, cause === undefined ? undefined : { cause }));
  }
}
