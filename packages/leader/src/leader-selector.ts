/**
 * LeaderSelector: Curator's LeaderSelector over @tenure/locks' Mutex. Leadership lasts exactly as
 * long as `takeLeadership` runs.
 *
 * Nodes: the Mutex's, i.e. Curator's InterProcessMutex layout on the election path:
 * `<path>/_c_<uuid>-lock-<10-digit seq>`, EPHEMERAL_SEQUENTIAL, protected, under container
 * parents. The node's data is the participant id (UTF-8), as Curator writes it, so participants of
 * either library list each other.
 *
 * Protocol:
 * 1. Acquire the mutex (first node holds it; each waiter watches only its predecessor).
 * 2. Call `takeLeadership(signal, leadership)`. The signal aborts when the lease is no longer safe
 *    (SUSPENDED under the `standard` errorPolicy, LOST under any, our node deleted or not ours),
 *    on interruptLeadership(), and on close().
 * 3. When it returns (or throws: the error is emitted as `error`, never swallowed), leadership
 *    ends and the lease is released, in that order. Then, with `autoRequeue`, queue again.
 *
 * leaders(): the election's leaders, anyone's, through a LeaderObserver on our path, made at the
 * first call and closed with the selector.
 *
 * A lost lease keeps its node until then (the Mutex's `keepNodeUntilRelease`), as in Curator: the
 * signal aborts at once, but the next participant leads only after takeLeadership has returned
 * and our node is deleted. After LOST the node went with the session, so nothing waits.
 */
import { EventEmitter } from 'eventemitter3';
import {
  AbortError,
  ClosedError,
  RecipeLifecycle,
  RetryPacer,
  asError,
  safeEmitter,
  triageFailure,
  type Client,
  type Logger,
  type RecipeState,
  type SafeEmit,
  InvalidArgumentError,
} from '@tenure/client';
import { LeaseLostError, Mutex, type Lease } from '@tenure/locks';
import { validatePath } from '@tenure/protocol';
import type { LeadershipEnd } from './errors.js';
import { Term, type Leadership, type ParticipantOptions } from './leadership.js';
import { readLeader, readParticipants, type Participant } from './participants.js';
import type { LeaderInfo } from './leader-observer.js';
import { ParticipantLeaders } from './participant-leaders.js';
import { publishLeaderState } from './diagnostics.js';

import { SELECTOR_LOCK_NAME } from './layout.js';

export { SELECTOR_LOCK_NAME } from './layout.js';

/** Runs while we lead; leadership ends when it returns. Stop promptly when `signal` aborts. */
export type TakeLeadership = (signal: AbortSignal, leadership: Leadership) => Promise<void> | void;

export interface LeaderSelectorOptions extends ParticipantOptions {
  /** Queue again after each term (Curator's autoRequeue()). Default false: one term per start()/requeue(). */
  autoRequeue?: boolean;
  takeLeadership: TakeLeadership;
}

/**
 * - `isLeader`: takeLeadership is about to be called.
 * - `notLeader`: takeLeadership returned (or threw); the lease is being released.
 * - `error`: takeLeadership threw, or acquiring failed for a reason other than closing.
 */
export interface LeaderSelectorEvents {
  isLeader: (leadership: Leadership) => void;
  notLeader: (end: LeadershipEnd) => void;
  error: (error: Error) => void;
}

/** The recipe lifecycle's state (leadership is `leadership` / `hasLeadership()`). */
export type SelectorState = RecipeState;

export class LeaderSelector extends EventEmitter<LeaderSelectorEvents> implements AsyncDisposable {
  readonly path: string;
  readonly id: string;
  readonly autoRequeue: boolean;
  private readonly takeLeadership: TakeLeadership;
  private readonly mutex: Mutex;
  private readonly logger: Logger;
  private readonly pacer: RetryPacer;
  private readonly life: RecipeLifecycle;
  private readonly safeEmit: SafeEmit<LeaderSelectorEvents>;
  private running: Promise<void> | null = null;
  private term: Term | null = null;
  /** Aborted at close: stops a pending acquire or backoff. */
  private readonly lifetime = new AbortController();
  private readonly observed: ParticipantLeaders;

  constructor(
    readonly client: Client,
    path: string,
    options: LeaderSelectorOptions,
  ) {
    super();
    this.path = validatePath(path);
    if (typeof options?.takeLeadership !== 'function') throw new InvalidArgumentError('LeaderSelector: takeLeadership must be a function');
    const id = options.id ?? '';
    if (typeof id !== 'string') throw new InvalidArgumentError('LeaderSelector: id must be a string');
    this.id = id;
    this.autoRequeue = options.autoRequeue ?? false;
    this.takeLeadership = options.takeLeadership;
    this.logger = options.logger ?? client.childLogger({ recipe: 'leader-selector', path: this.path });
    this.pacer = new RetryPacer(client, options.retryPolicy);
    this.life = new RecipeLifecycle(`LeaderSelector ${this.path}`);
    this.safeEmit = safeEmitter<LeaderSelectorEvents>(this, this.logger);
    // Curator writes the id only when there is one (an empty node otherwise).
    this.mutex = new Mutex(
      client,
      this.path,
      id.length > 0 ? { data: Buffer.from(id, 'utf8'), logger: this.logger } : { logger: this.logger },
    );
    this.observed = new ParticipantLeaders(client, this.path, 'leader-selector', this.logger, (err) => this.safeEmit('error', err));
  }

  get state(): SelectorState {
    return this.life.state;
  }

  /** The current term while takeLeadership runs, else null (its signal says whether it is still safe). */
  get leadership(): Leadership | null {
    return this.term?.leadership ?? null;
  }

  /**
   * True while takeLeadership runs (Curator's meaning), even after the term's signal aborted:
   * check `leadership.signal` to know whether acting as leader is still safe.
   */
  hasLeadership(): boolean {
    return this.term !== null;
  }

  /** Joins the election in the background. Rejects with IllegalStateError if already started or closed. */
  start(): Promise<void> {
    return this.life.start(() => void this.requeue());
  }

  /**
   * Queues for leadership again (when not already queued or leading). Returns whether it did.
   * Needed only without autoRequeue, after a term ended.
   */
  requeue(): boolean {
    this.life.requireStarted('requeue');
    if (this.running !== null) return false;
    this.running = this.loop().finally(() => {
      this.running = null;
    });
    return true;
  }

  /** Ends the current term: its signal aborts (`interrupted`); takeLeadership should return. */
  interruptLeadership(): void {
    this.term?.end('interrupted');
  }

  getParticipants(options: { signal?: AbortSignal } = {}): Promise<Participant[]> {
    return readParticipants(this.client, this.path, SELECTOR_LOCK_NAME, options.signal);
  }

  getLeader(options: { signal?: AbortSignal } = {}): Promise<Participant | null> {
    return readLeader(this.client, this.path, SELECTOR_LOCK_NAME, options.signal);
  }

  /**
   * The election's leaders, whoever they are (a LeaderObserver's iterable): the current one
   * first, then one per change of leader, none for a waiter joining. Ends on close() of the
   * selector or when `signal` aborts; rejects with ClosedError when the client closes.
   */
  leaders(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<LeaderInfo> {
    return this.observed.leaders(options);
  }

  /**
   * Leaves the election: a pending acquire stops, a running term's signal aborts (`closed`), and
   * close waits for takeLeadership to return before the lease is released. Resolves when done.
   */
  close(): Promise<void> {
    return this.life.close(async () => {
      this.lifetime.abort(new ClosedError(`leader selector ${this.path}`));
      this.term?.end('closed');
      const observed = this.observed.close();
      await this.running;
      await this.mutex.close();
      await observed;
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- the work loop ----

  private async loop(): Promise<void> {
    for (;;) {
      if (!this.life.isStarted) return;
      let lease: Lease;
      try {
        lease = await this.mutex.acquire({ signal: this.lifetime.signal, keepNodeUntilRelease: true });
      } catch (err) {
        const verdict = triageFailure(err, this.client.closedSignal);
        if (!this.life.isStarted || verdict === 'closed') return;
        if (err instanceof AbortError && this.lifetime.signal.aborted) return;
        this.report(err, 'acquiring leadership failed');
        // NoAuth: the kit's rule, no retry (requeue() may try again once the ACL allows it).
        if (!this.autoRequeue || verdict === 'stop') return;
        await this.pacer.pause(AbortSignal.any([this.lifetime.signal, this.client.closedSignal]));
        continue;
      }
      this.pacer.succeeded();
      await this.lead(lease);
      if (!this.autoRequeue) return;
    }
  }

  /** One term: takeLeadership runs; then leadership ends and the lease is released, in that order. */
  private async lead(lease: Lease): Promise<void> {
    const term = new Term(lease.fencingToken, lease.path, this.path);
    const onLost = (): void => {
      const reason: unknown = lease.signal.reason;
      term.end(reason instanceof LeaseLostError ? leaseEnd(reason) : 'lost', reason);
    };
    this.term = term;
    lease.signal.addEventListener('abort', onLost, { once: true });
    if (lease.signal.aborted) onLost();
    if (!this.life.isStarted) term.end('closed');
    this.logger.info({ path: lease.path, token: lease.fencingToken, id: this.id }, 'leader selector: leading');
    const state = { recipe: 'selector', path: this.path, id: this.id, fencingToken: lease.fencingToken, node: lease.path } as const;
    publishLeaderState({ ...state, leader: true });
    this.safeEmit('isLeader', term.leadership);
    try {
      await this.takeLeadership(term.leadership.signal, term.leadership);
    } catch (err) {
      this.report(err, 'takeLeadership threw');
    } finally {
      lease.signal.removeEventListener('abort', onLost);
      const reason = term.leadership.signal.reason as { end?: LeadershipEnd } | undefined;
      term.end('released');
      this.term = null;
      publishLeaderState({ ...state, leader: false, end: reason?.end ?? 'released' });
      this.safeEmit('notLeader', reason?.end ?? 'released');
      try {
        await lease.release();
      } catch (err) {
        this.logger.warn({ err, path: lease.path }, 'leader selector: releasing the lease failed');
      }
    }
  }

  private report(err: unknown, what: string): void {
    const error = asError(err);
    this.logger.warn({ err: error, path: this.path, id: this.id }, `leader selector: ${what}`);
    this.safeEmit('error', error);
  }
}

function leaseEnd(err: LeaseLostError): LeadershipEnd {
  switch (err.end) {
    case 'suspended':
    case 'lost':
    case 'deleted':
    case 'not-owner':
    case 'closed':
      return err.end;
    case 'released':
      return 'released';
  }
}
