/**
 * LeaderLatch: Curator's LeaderLatch, node for node, with a fencing token and a signal per term.
 *
 * Nodes: each participant creates `<path>/_c_<uuid>-latch-<10-digit seq>`, EPHEMERAL_SEQUENTIAL,
 * with a protected create under container parents (a lost create reply is recovered by the
 * client; the server removes `<path>` once the last participant has gone). The node's data is the
 * participant's id in UTF-8, which is how Tenure and Curator list participants.
 *
 * Protocol (one step at a time: the steps below never overlap):
 * 1. Join: create our node. The create2 reply carries its Stat: the czxid is the fencing token,
 *    the ephemeralOwner the session that owns the node.
 * 2. Check: list the children, sort them by the sequence after the last `latch-`.
 *    - Our node is missing, or `<path>` is gone: reset (delete our node if it is still ours, join again).
 *    - First: claim leadership, but only if the node's ephemeralOwner is the client's current
 *      session and the connection is not in an error state. Without the owner check a node left
 *      by a session that has just been replaced (still listed, about to expire) would make a
 *      second leader: Curator's CURATOR-696 double leader.
 *    - Otherwise: watch only the predecessor (getData, which leaves no watch behind when the node
 *      is already gone) and check again when it changes. No herd: a departure wakes one participant.
 * 3. While leading, watch our own node: deleted by someone else, the term ends and we reset.
 * 4. Connection states: SUSPENDED ends the term under the `standard` errorPolicy, LOST and
 *    READ_ONLY under any. RECONNECTED checks again without resetting: on the same node the term
 *    resumes with the same token (no other leader can have come between); after LOST our node is
 *    gone and step 2 resets.
 * 5. Ending a term aborts `leadership.signal` first, then emits `notLeader`.
 * 6. close(): the term ends (`notLeader` only with closeMode `notifyLeader`; the signal always
 *    aborts), our watches are removed and our node deleted with a guaranteed delete.
 * 7. leaders(): the election's leaders, anyone's, through a LeaderObserver on our path, made at
 *    the first call (its one children watch exists only then) and closed with the latch.
 */
import { EventEmitter } from 'eventemitter3';
import {
  ClosedError,
  ConnectionState,
  CreateMode,
  NoNodeError,
  PassRunner,
  RecipeLifecycle,
  RetryPacer,
  abandonNode,
  asError,
  queuePosition,
  safeEmitter,
  triageFailure,
  InvalidArgumentError,
} from '@tenure/client';
import type { Client, Logger, RecipeState, SafeEmit, WaitOptions } from '@tenure/client';
import { nodeName, validatePath } from '@tenure/protocol';
import type { LeadershipEnd } from './errors.js';
import { Term, type Leadership, type ParticipantOptions } from './leadership.js';
import type { LeaderInfo } from './leader-observer.js';
import { ParticipantLeaders } from './participant-leaders.js';
import { electionOrder, readLeader, readParticipants, type Participant } from './participants.js';
import { Waiters } from './waiters.js';
import { WatchSlot } from './watch-slot.js';
import { publishLeaderState } from './diagnostics.js';

import { LATCH_NAME } from './layout.js';

export { LATCH_NAME } from './layout.js';

/** `silent` (Curator's default): close() emits no `notLeader`. `notifyLeader`: it does. */
export type CloseMode = 'silent' | 'notifyLeader';

export interface LeaderLatchOptions extends ParticipantOptions {
  /** Default `silent`. */
  closeMode?: CloseMode;
}

/**
 * - `joined`: our node is in place: the first join, and every rejoin after a reset (e.g. after LOST).
 * - `isLeader`: we lead. The leadership's signal aborts when the term ends.
 * - `notLeader`: the term ended; `leadership.signal` aborted just before.
 * - `error`: a failure the latch cannot fix by itself. It retries with backoff, except after a
 *   NoAuthError: then it stops trying (the kit's NoAuth rule; `start()` and `await()` reject with it).
 */
export interface LeaderLatchEvents {
  joined(path: string): void;
  isLeader(leadership: Leadership): void;
  notLeader(end: LeadershipEnd): void;
  error(error: Error): void;
}

/** The recipe lifecycle's state (leadership is `leadership` / `hasLeadership()`). */
export type LatchState = RecipeState;

/** Our node in the election: its czxid is the token, its ephemeralOwner the owner. */
interface OurNode {
  readonly path: string;
  readonly name: string;
  readonly token: bigint;
  readonly owner: bigint;
}

type Step = 'check' | 'reset';

export class LeaderLatch extends EventEmitter<LeaderLatchEvents> implements AsyncDisposable {
  /** The election's path (the parent of the latch nodes). */
  readonly path: string;
  readonly id: string;
  readonly closeMode: CloseMode;
  private readonly idBytes: Buffer;
  private readonly logger: Logger;
  private readonly retry: RetryPacer;
  /** emit, without letting a listener's exception break the latch (it is reported as `error`). */
  private readonly emitSafely: SafeEmit<LeaderLatchEvents>;
  private readonly life: RecipeLifecycle;
  /** The steps, one at a time (the kit's "run once more"). */
  private readonly runner: PassRunner;
  /** The NoAuthError that stopped the latch. */
  private stoppedBy: Error | null = null;
  private node: OurNode | null = null;
  private term: { node: OurNode; term: Term } | null = null;
  private readonly predecessor: WatchSlot;
  /** Our own node, watched while we lead. */
  private readonly ownWatch: WatchSlot;
  private pending: Step | null = null;
  /** The create of our node, while in flight. */
  private creating: Promise<unknown> | null = null;
  private readonly lifetime = new AbortController();
  private readonly joinWaiters = new Waiters<true>();
  private readonly leaderWaiters = new Waiters<Leadership>();
  /** Set once a check has placed us: leading, watching a predecessor, or waiting for a safe state. */
  private joinedOnce = false;
  private readonly onState = (s: ConnectionState): void => this.stateChanged(s);
  private readonly observed: ParticipantLeaders;

  constructor(
    readonly client: Client,
    path: string,
    options: LeaderLatchOptions = {},
  ) {
    super();
    this.path = validatePath(path);
    const id = options.id ?? '';
    if (typeof id !== 'string') throw new InvalidArgumentError('LeaderLatch: id must be a string');
    this.id = id;
    this.idBytes = Buffer.from(id, 'utf8');
    const closeMode = options.closeMode ?? 'silent';
    if (closeMode !== 'silent' && closeMode !== 'notifyLeader')
      throw new InvalidArgumentError(`LeaderLatch: closeMode must be 'silent' or 'notifyLeader', got ${String(closeMode)}`);
    this.closeMode = closeMode;
    this.logger = options.logger ?? client.childLogger({ recipe: 'leader-latch', path: this.path });
    this.emitSafely = safeEmitter<LeaderLatchEvents>(this, this.logger);
    this.retry = new RetryPacer(client, options.retryPolicy);
    this.life = new RecipeLifecycle(`LeaderLatch ${this.path}`);
    this.runner = new PassRunner(
      client.clock,
      () => this.step(),
      (err) => this.failed(err),
    );
    const live = (): boolean => this.life.isStarted;
    this.predecessor = new WatchSlot(client, live);
    this.ownWatch = new WatchSlot(client, live);
    this.observed = new ParticipantLeaders(client, this.path, 'leader-latch', this.logger, (err) => this.emitSafely('error', err));
  }

  /** `latent` before start(), `started`, then `closed`. */
  get state(): LatchState {
    return this.life.state;
  }

  /** The current term while we lead, else null. */
  get leadership(): Leadership | null {
    return this.term?.term.leadership ?? null;
  }

  /** Our node's full path, once created (it may change: after LOST we join again with a new node). */
  get ourPath(): string | null {
    return this.node?.path ?? null;
  }

  hasLeadership(): boolean {
    return this.life.isStarted && this.term !== null;
  }

  /**
   * Joins the election. Resolves once our node is in place and our position known (leader or
   * not); rejects with TimeoutError / AbortError (the latch keeps trying), ClosedError, the NoAuthError that
   * stopped it, or IllegalStateError on a second start() or one after close().
   * Connection problems are ridden out: the latch joins once the client is connected.
   */
  start(options: WaitOptions = {}): Promise<void> {
    return this.life.start(() => {
      this.client.on('stateChanged', this.onState);
      const joined = this.wait(this.joinWaiters, this.joinedOnce ? true : null, 'start', options);
      this.request('reset');
      return joined.then(() => undefined);
    });
  }

  /**
   * Waits until we lead and returns the term. Rejects with TimeoutError after `timeoutMs`,
   * AbortError when `signal` aborts, ClosedError when the latch closes. (Curator's await.)
   */
  await(options: WaitOptions = {}): Promise<Leadership> {
    return this.wait(this.leaderWaiters, this.leadership, 'await', options);
  }

  /** Every participant in election order, Curator's included (each id read from its node). */
  getParticipants(options: { signal?: AbortSignal } = {}): Promise<Participant[]> {
    return readParticipants(this.client, this.path, LATCH_NAME, options.signal);
  }

  /** The participant whose node is first, or null when nobody takes part. Reads the server. */
  getLeader(options: { signal?: AbortSignal } = {}): Promise<Participant | null> {
    return readLeader(this.client, this.path, LATCH_NAME, options.signal);
  }

  /**
   * The election's leaders, whoever they are (a LeaderObserver's iterable): the current one
   * first, then one per change of leader, none for a waiter joining. Ends on close() of the latch
   * or when `signal` aborts; rejects with ClosedError when the client closes.
   */
  leaders(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<LeaderInfo> {
    return this.observed.leaders(options);
  }

  /**
   * Leaves the election: the term ends (signal first; `notLeader` only with closeMode
   * `notifyLeader`, or the mode given here), our watches go, and our node is deleted with a
   * guaranteed delete. Resolves once the node is gone, or, if the connection is down, once the
   * delete is handed to the client (`client.pendingDeletes`; it ends with the session at the latest).
   */
  close(closeMode: CloseMode = this.closeMode): Promise<void> {
    return this.life.close((wasStarted) => this.release(wasStarted, closeMode));
  }

  private async release(wasStarted: boolean, closeMode: CloseMode): Promise<void> {
    this.runner.stop();
    this.client.off('stateChanged', this.onState);
    this.retry.cancel();
    const closed = new ClosedError(`leader latch ${this.path}`);
    this.lifetime.abort(closed);
    this.endTerm('closed', closeMode === 'notifyLeader');
    this.joinWaiters.close(closed);
    this.leaderWaiters.close(closed);
    const observed = this.observed.close();
    if (!wasStarted) return observed;
    // A create in flight rejects at once (aborted; the client removes what it may have left) or
    // has just landed, and then its node is ours to delete. Other steps need not be waited for:
    // they change nothing once closed.
    await this.creating?.catch(() => {});
    this.predecessor.drop();
    const node = this.node;
    this.node = null;
    // Our own delete fires the watch on our node, which removes it on both sides: no
    // removeWatches ahead of the delete that hands leadership over.
    if (node !== null && this.ownWatch.holds(node.path) && this.client.sessionId === node.owner) this.ownWatch.forget();
    else this.ownWatch.drop();
    if (node) await this.deleteNode(node, true);
    await observed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- the steps, run one at a time ----

  /** Asks for a step; a reset asked for wins over a check. */
  private request(step: Step): void {
    if (!this.life.isStarted) return;
    if (this.pending !== 'reset') this.pending = step;
    this.runner.run();
  }

  /** The step asked for last (the runner runs it once more when another is asked for meanwhile). */
  private async step(): Promise<void> {
    const step = this.pending;
    this.pending = null;
    if (step === null || !this.life.isStarted) return;
    await (step === 'reset' ? this.reset() : this.check());
    this.retry.succeeded();
  }

  /** Deletes our node (if any) and joins again with a new one. */
  private async reset(): Promise<void> {
    this.endTerm(this.node !== null && this.client.sessionId !== this.node.owner ? 'lost' : 'deleted');
    const old = this.node;
    this.node = null;
    this.predecessor.drop();
    if (old) this.deleteNode(old, false).catch((err: unknown) => this.logger.warn({ err, path: old.path }, 'deleting our old node failed'));
    const creating = this.client.create(`${this.path}/${LATCH_NAME}`, this.idBytes, {
      mode: CreateMode.EPHEMERAL_SEQUENTIAL,
      protection: true,
      createParentContainers: true,
      signal: this.lifetime.signal,
    });
    this.creating = creating;
    const { path, stat } = await creating.finally(() => (this.creating = null));
    // Kept even when closed meanwhile: close() deletes it.
    this.node = { path, name: nodeName(path), token: stat.czxid, owner: stat.ephemeralOwner };
    this.logger.debug({ path, token: stat.czxid, id: this.id }, 'leader latch joined');
    if (!this.life.isStarted) return;
    this.emitSafely('joined', path);
    await this.check();
  }

  /** Where do we stand? Claims leadership, or watches the predecessor. */
  private async check(): Promise<void> {
    const node = this.node;
    // A node of a session that has been replaced is gone (or about to go): join again.
    if (node === null || node.owner !== this.client.sessionId) return this.reset();
    let children: string[];
    try {
      children = (await this.client.getChildren(this.path, { signal: this.lifetime.signal })).children;
    } catch (err) {
      if (err instanceof NoNodeError) return this.reset(); // the whole election path went
      throw err;
    }
    if (!this.life.isStarted || this.node !== node) return;
    const position = queuePosition(electionOrder(children, LATCH_NAME), node.name);
    if (position === null) return this.reset();
    if (position.granted) {
      this.predecessor.drop();
      return this.claim(node);
    }
    this.endTerm('not-first');
    const path = `${this.path}/${position.watch}`;
    // Still watched (a check after a reconnect: the client re-set the watch): it fires when the node goes.
    if (this.predecessor.holds(path)) return this.settleJoin();
    const result = await this.predecessor.watch(path, () => this.request('check'));
    if (result === 'gone')
      this.request('check'); // gone already: look again
    else if (result === 'watching') this.settleJoin();
  }

  /** Takes leadership for `node`, if it is safe now; otherwise the next RECONNECTED checks again. */
  private claim(node: OurNode): void {
    if (!this.life.isStarted) return;
    if (this.term?.node === node) {
      // Resumed without a break (errorPolicy `session`): re-arm our node's watch if it never landed.
      if (this.ownWatch.idle) this.watchOwnNode(node);
      return this.settleJoin();
    }
    const client = this.client;
    const state = client.state;
    const unsafe = state === null || state === ConnectionState.LOST || state === ConnectionState.READ_ONLY || client.isErrorState(state);
    if (unsafe) return this.settleJoin();
    if (client.sessionId !== node.owner) return this.request('reset');
    this.endTerm('not-first');
    const term = new Term(node.token, node.path, this.path);
    this.term = { node, term };
    this.logger.info({ path: node.path, token: node.token, id: this.id }, 'leader latch: leading');
    this.watchOwnNode(node);
    this.settleJoin();
    const leadership = term.leadership;
    this.leaderWaiters.notify(leadership);
    publishLeaderState({ recipe: 'latch', path: this.path, id: this.id, leader: true, fencingToken: node.token, node: node.path });
    this.emitSafely('isLeader', leadership);
  }

  /** Ends the current term: the signal aborts, then (if `notify`) `notLeader` is emitted. */
  private endTerm(end: LeadershipEnd, notify = true): void {
    const current = this.term;
    if (current === null) return;
    this.term = null;
    // 'closed': close() decides (our own delete removes that watch); 'deleted': it fired already.
    if (end === 'deleted') this.ownWatch.forget();
    else if (end !== 'closed') this.ownWatch.drop();
    current.term.end(end);
    this.logger.info({ path: current.node.path, end, id: this.id }, 'leader latch: no longer leading');
    const { token, path } = current.node;
    publishLeaderState({ recipe: 'latch', path: this.path, id: this.id, leader: false, fencingToken: token, node: path, end });
    if (notify) this.emitSafely('notLeader', end);
  }

  // ---- watches and states ----

  /** While we lead: our node deleted by someone else ends the term, and we rejoin. */
  private watchOwnNode(node: OurNode): void {
    const gone = (): void => {
      this.endTerm(this.client.sessionId === node.owner ? 'deleted' : 'lost');
      this.request('reset');
    };
    this.ownWatch
      .watch(node.path, (ev) => {
        if (this.term?.node !== node) return;
        if (ev.type !== 'NodeDeleted')
          this.watchOwnNode(node); // a data change used the watch up: set it again
        else gone();
      })
      .then(
        (result) => {
          if (result === 'gone' && this.term?.node === node) gone();
        },
        // Connection problems: the states decide (SUSPENDED / LOST end the term; RECONNECTED
        // checks, and re-arms this watch if the term goes on).
        () => {},
      );
  }

  private stateChanged(s: ConnectionState): void {
    if (!this.life.isStarted) return;
    switch (s) {
      case ConnectionState.SUSPENDED:
        if (this.client.isErrorState(s)) this.endTerm('suspended');
        break;
      case ConnectionState.LOST:
        this.endTerm('lost');
        break;
      case ConnectionState.READ_ONLY:
        this.endTerm('read-only');
        break;
      case ConnectionState.RECONNECTED:
      case ConnectionState.CONNECTED:
        this.request('check');
        break;
    }
  }

  // ---- failures, waits, deletes ----

  private failed(err: unknown): void {
    if (!this.life.isStarted) return;
    const verdict = triageFailure(err, this.client.closedSignal);
    // The client closed: so did the session, and our node with it.
    if (verdict === 'closed') return this.endTerm('closed');
    // LOST: the state machine reports RECONNECTED with a new session, which checks again.
    if (verdict === 'session') return;
    if (verdict === 'transient' && !this.client.isConnected) return; // RECONNECTED checks again
    if (verdict === 'stop') return this.stop(asError(err));
    if (verdict === 'report') {
      this.logger.warn({ err, path: this.path, id: this.id }, 'leader latch step failed; retrying');
      this.emitSafely('error', asError(err));
    }
    // An `error` listener may have closed the latch: then no retry timer may outlive it.
    if (this.life.isStarted) this.retry.schedule(() => this.request('check'));
  }

  /** NoAuth: the latch stops trying (no retry, no more steps); waits reject with it; close() still cleans up. */
  private stop(err: Error): void {
    this.logger.error({ err, path: this.path, id: this.id }, 'leader latch: NoAuth, it stops');
    this.stoppedBy = err;
    this.runner.stop();
    this.retry.cancel();
    this.endTerm('closed');
    this.joinWaiters.close(err);
    this.leaderWaiters.close(err);
    this.emitSafely('error', err);
  }

  private settleJoin(): void {
    this.joinedOnce = true;
    this.joinWaiters.notify(true);
  }

  /** `now` at once when there is one, else the next notify() of `waiters`. */
  private async wait<T>(waiters: Waiters<T>, now: T | null, what: string, options: WaitOptions): Promise<T> {
    if (this.life.isClosed) throw new ClosedError(`leader latch ${this.path}`);
    if (this.stoppedBy) throw this.stoppedBy;
    return now ?? waiters.wait(this.client.waitScope(options, `leader latch ${this.path} ${what}`));
  }

  /** Deletes our node (the sequence queue's abandon: guaranteed; `wait`: awaited while connected), unless it went with an earlier session. */
  private async deleteNode(node: OurNode, wait: boolean): Promise<void> {
    if (this.client.sessionId === node.owner) await abandonNode(this.client, node.path, node.owner, { wait, logger: this.logger });
  }
}
