/**
 * LeaderObserver: who leads an election, for processes that do not take part (etcd's
 * Election.Observe). Works on a LeaderLatch's or a LeaderSelector's path, Curator's or Tenure's
 * (one layout), and holds no node: only a watch.
 *
 * Protocol (one pass at a time, the kit's PassRunner):
 * 1. List `<path>`'s children with a children watch (the one watch that matters, set through a
 *    `trackingWatches()` view, always with the same callback, so a pass never adds a second one).
 *    With it, pipelined, an exists on `<path>` whose data watch only makes the observer visible in
 *    the servers' watch listings (`wchp` lists data watches only; option `listed`). `<path>`
 *    missing: an exists watch on it instead (it fires when the first participant creates it);
 *    nobody leads.
 * 2. Sort the children as the participants do (the sequence after the last `latch-`, or `lock-`
 *    for a LeaderSelector): the first node leads. Read it (getData): its data is the participant
 *    id (UTF-8, as Curator reads it), its czxid the fencing token (the latch's own token), its
 *    ctime dates it. Gone meanwhile: list again.
 * 3. A leader whose czxid differs from the last one is a change: pushed to every iterator and
 *    emitted (`leader`); nobody left is `vacant`. A waiter joining or leaving changes nothing.
 * 4. The watch fires (children changed, `<path>` created or deleted): pass again. RECONNECTED and
 *    CONNECTED (a new session after LOST) pass again too, so a change made while away is seen,
 *    and only a real change is reported (the same leader node is the same leader).
 * 5. Failures follow the kit's triage: transient ones wait for RECONNECTED or retry with backoff;
 *    NoAuth stops the observer (`error`, iterators reject with it); the client's close ends every
 *    iterator with ClosedError.
 * 6. close(): the watch is taken back (on the server too), iterators end (`done`).
 */
import { EventEmitter } from 'eventemitter3';
import {
  ClosedError,
  ConnectionState,
  NoNodeError,
  PassRunner,
  RecipeLifecycle,
  RetryPacer,
  WatcherType,
  asError,
  safeEmitter,
  triageFailure,
  InvalidArgumentError,
} from '@tenure/client';
import type { Client, Logger, RecipeState, RetryPolicy, SafeEmit, WaitOptions, WatchEvent } from '@tenure/client';
import { validatePath } from '@tenure/protocol';
import { isElectionRecipe, layoutName, readCurrentLeader, type ElectionRecipe, type LeaderInfo } from './leader-info.js';
import { LeaderStream } from './leader-stream.js';
import { electionOrder } from './participants.js';

export type { ElectionRecipe, LeaderInfo } from './leader-info.js';
import { Waiters } from './waiters.js';

export interface LeaderObserverOptions {
  /**
   * The layout to read: `leader-latch` (`…-latch-<seq>` nodes) or `leader-selector`
   * (`…-lock-<seq>`). Default: `leader-latch` when the path holds latch nodes, else `leader-selector`.
   */
  recipe?: ElectionRecipe;
  /**
   * Also hold a data watch on `<path>` (default true), so that operators see this observer:
   * ZooKeeper's `wchp` / `wchc` (and its admin server's watch listings) list data watches only,
   * never children watches. The election's parent's data never changes, so the watch costs the
   * server one entry and fires only when the path goes (as the children watch does). `false`:
   * the children watch alone; `tenure leaders` then finds the observer on Tenure's servers only.
   */
  listed?: boolean;
  /** pino-compatible; default a child of the client's logger. */
  logger?: Logger;
  /** Paces the retries after a failed pass (default the client's retry policy). */
  retryPolicy?: RetryPolicy;
}

/**
 * - `leader`: a new leader (the first one at start, then one per change).
 * - `vacant`: the election has no participant any more (the next `leader` follows when one joins).
 * - `error`: a pass failed for a reason the observer cannot ride out; it retries with backoff,
 *   except after a NoAuthError (then it stops, and iterators reject with it).
 */
export interface LeaderObserverEvents {
  leader(leader: LeaderInfo): void;
  vacant(): void;
  error(error: Error): void;
}

export class LeaderObserver extends EventEmitter<LeaderObserverEvents> implements AsyncIterable<LeaderInfo>, AsyncDisposable {
  readonly path: string;
  private readonly recipe: ElectionRecipe | undefined;
  /** Also a data watch on `<path>`, so that the servers' watch listings (`wchp`) show this observer. */
  private readonly listed: boolean;
  /** Every watch goes through this view: close() takes it back. */
  private readonly watches: Client;
  private readonly logger: Logger;
  private readonly life: RecipeLifecycle;
  private readonly runner: PassRunner;
  private readonly pacer: RetryPacer;
  private readonly emitSafely: SafeEmit<LeaderObserverEvents>;
  private readonly stream = new LeaderStream<LeaderInfo>();
  private readonly loadWaiters = new Waiters<true>();
  private known: LeaderInfo | undefined = undefined;
  private loaded = false;
  /** Date.now() of the notification behind the next pass, if one caused it. */
  private noticedAt: number | null = null;
  /** The connection went away since the last pass: what the next pass finds may be old news. */
  private away = false;
  /** Why the observer stopped for good (the client closed: ClosedError; NoAuth). */
  private stoppedBy: Error | null = null;
  private readonly onState = (s: ConnectionState): void => this.stateChanged(s);
  private readonly onClientClosed = (): void => this.stop(new ClosedError(`leader observer ${this.path}: the client closed`));
  /** The one watch callback (children, or exists while `<path>` is missing). */
  private readonly onWatch = (ev: WatchEvent): void => {
    if (ev.type === 'ChildWatchRemoved' || ev.type === 'DataWatchRemoved' || !this.life.isStarted) return;
    this.noticedAt = Date.now();
    this.runner.run();
  };

  constructor(
    readonly client: Client,
    path: string,
    options: LeaderObserverOptions = {},
  ) {
    super();
    this.path = validatePath(path);
    if (options.recipe !== undefined && !isElectionRecipe(options.recipe))
      throw new InvalidArgumentError(`LeaderObserver: recipe must be 'leader-latch' or 'leader-selector', got ${String(options.recipe)}`);
    this.recipe = options.recipe;
    this.listed = options.listed ?? true;
    this.watches = client.trackingWatches();
    this.logger = options.logger ?? client.childLogger({ recipe: 'leader-observer', path: this.path });
    this.emitSafely = safeEmitter<LeaderObserverEvents>(this, this.logger);
    this.life = new RecipeLifecycle(`LeaderObserver ${this.path}`);
    this.pacer = new RetryPacer(client, options.retryPolicy);
    this.runner = new PassRunner(
      client.clock,
      () => this.pass(),
      (err) => this.failed(err),
    );
  }

  /** `latent` before start(), `started`, then `closed`. */
  get state(): RecipeState {
    return this.life.state;
  }

  /**
   * Starts observing. Resolves once the election was first read; rejects with TimeoutError /
   * AbortError (the observer keeps trying), ClosedError, the NoAuthError that stopped it, or
   * IllegalStateError on a second start() or one after close().
   */
  start(options: WaitOptions = {}): Promise<void> {
    return this.life.start(
      () => {
        this.client.on('stateChanged', this.onState);
        this.client.closedSignal.addEventListener('abort', this.onClientClosed, { once: true });
        const loaded = this.whenLoaded(options, 'start');
        this.runner.run();
        return loaded;
      },
      () => {
        if (this.client.closedSignal.aborted) throw new ClosedError(`leader observer ${this.path}: the client is closed`);
      },
    );
  }

  /**
   * The leader, or undefined when nobody takes part. Started: the observer's view (once the first
   * read is done; while disconnected, the last one known). Before start() or after close(): one
   * read of the server.
   */
  async current(options: WaitOptions = {}): Promise<LeaderInfo | undefined> {
    if (this.life.isStarted) {
      await this.whenLoaded(options, 'current');
      return this.known;
    }
    return readCurrentLeader(this.client, this.path, this.recipe, options);
  }

  /**
   * The leaders: the current one first (if any; before the first read, the leader found then),
   * then one per change of leader, none for a waiter joining or leaving. Ends (`done`) on close()
   * or when `signal` aborts; rejects with ClosedError when the client closes.
   */
  leaders(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<LeaderInfo> {
    const failure = this.life.isClosed
      ? null
      : (this.stoppedBy ??
        (this.client.closedSignal.aborted ? new ClosedError(`leader observer ${this.path}: the client is closed`) : null));
    if (failure !== null) {
      const failed = new LeaderStream<LeaderInfo>();
      failed.end(failure);
      return failed.subscribe();
    }
    const now = this.life.isStarted && this.loaded && this.known ? [this.known] : [];
    return this.stream.subscribe(options.signal, now);
  }

  [Symbol.asyncIterator](): AsyncIterator<LeaderInfo> {
    return this.leaders();
  }

  /** Stops observing: the watch is taken back (on the server too) and every iterator ends. */
  close(): Promise<void> {
    return this.life.close(async () => {
      this.detach();
      const closed = new ClosedError(`leader observer ${this.path}`);
      this.loadWaiters.close(closed);
      this.stream.end();
      await this.runner.whenIdle();
      await this.watches.removeAllWatches();
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- the pass ----

  private async pass(): Promise<void> {
    if (!this.life.isStarted) return;
    const noticedAt = this.noticedAt;
    this.noticedAt = null;
    const wasAway = this.away;
    // The listed watch (see `listed`) goes out with the listing, pipelined: no extra wait.
    const existsWatch = (): Promise<unknown> => this.watches.exists(this.path, { watch: this.onWatch });
    const listed = this.listed ? existsWatch() : null;
    let listing: { children: string[]; stat: { pzxid: bigint } } | null;
    try {
      listing = await this.watches.getChildren(this.path, { watch: this.onWatch });
    } catch (err) {
      if (!(err instanceof NoNodeError)) {
        await listed?.catch(() => {});
        throw err;
      }
      listing = null;
    }
    if (listing === null) {
      // No `<path>`: the exists watch (a data watch if it was created meanwhile) waits for it.
      const stat = await (listed ?? existsWatch());
      if (stat !== null) {
        if (!this.listed) await this.watches.removeWatches(this.path, WatcherType.Data, { watcher: this.onWatch, quietly: true });
        this.runner.run(); // created meanwhile: list it
        return;
      }
      return this.settle(undefined, wasAway);
    }
    await listed;
    const { children } = listing;
    const pzxid = listing.stat.pzxid;
    if (!this.life.isStarted) return;
    const first = electionOrder(children, this.layoutName(children))[0];
    if (first === undefined) return this.settle(undefined, wasAway);
    const nodePath = `${this.path}/${first}`;
    let read: { data: Buffer; stat: { czxid: bigint; ctime: number } };
    try {
      read = await this.client.getData(nodePath);
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      this.runner.run(); // it left between the listing and the read: look again
      return;
    }
    if (!this.life.isStarted) return;
    const token = read.stat.czxid;
    if (this.known?.fencingToken === token) return this.settle(this.known, wasAway);
    // Dated by the notification only for a change seen live, and not when its node's creation was
    // the election's last change (then it has led since it joined: ctime is exact).
    const seenLive = this.loaded && !wasAway && noticedAt !== null && pzxid !== token;
    const leader: LeaderInfo = Object.freeze({
      participantId: read.data.toString('utf8'),
      fencingToken: token,
      since: new Date(seenLive ? noticedAt : read.stat.ctime),
      path: nodePath,
    });
    this.settle(leader, wasAway);
  }

  private layoutName(children: readonly string[]): string {
    return layoutName(children, this.recipe);
  }

  /** What a pass found: reported only when it is another leader than the last one. */
  private settle(leader: LeaderInfo | undefined, wasAway: boolean): void {
    this.pacer.succeeded();
    if (wasAway && this.client.isConnected) this.away = false;
    const previous = this.known;
    this.known = leader;
    const firstRead = !this.loaded;
    if (firstRead) {
      this.loaded = true;
      this.loadWaiters.notify(true);
    }
    if (leader === previous && !firstRead) return;
    if (leader !== undefined) {
      this.logger.debug({ leader: leader.participantId, token: leader.fencingToken, path: leader.path }, 'leader observer: new leader');
      this.stream.push(leader);
      this.emitSafely('leader', leader);
    } else if (!firstRead) {
      this.logger.debug({ path: this.path }, 'leader observer: no leader');
      this.emitSafely('vacant');
    }
  }

  // ---- states, failures, waits ----

  private stateChanged(s: ConnectionState): void {
    if (!this.life.isStarted || this.stoppedBy !== null) return;
    switch (s) {
      case ConnectionState.SUSPENDED:
      case ConnectionState.LOST:
        this.away = true;
        break;
      case ConnectionState.RECONNECTED:
      case ConnectionState.CONNECTED:
      case ConnectionState.READ_ONLY:
        this.runner.run();
        break;
    }
  }

  private failed(err: unknown): void {
    if (!this.life.isStarted || this.stoppedBy !== null) return;
    const verdict = triageFailure(err, this.client.closedSignal);
    if (verdict === 'closed') return; // the client's close: onClientClosed ends the iterators
    if (verdict === 'stop') {
      this.logger.error({ err, path: this.path }, 'leader observer: NoAuth, it stops');
      this.emitSafely('error', asError(err));
      return this.stop(asError(err));
    }
    // LOST, or a connection problem while away: RECONNECTED passes again.
    if ((verdict === 'session' || verdict === 'transient') && !this.client.isConnected) return;
    if (verdict === 'report') {
      this.logger.warn({ err, path: this.path }, 'leader observer: a read failed; retrying');
      this.emitSafely('error', asError(err));
    }
    if (this.life.isStarted) this.pacer.schedule(() => this.runner.run());
  }

  /** For good (the client closed, NoAuth): no more passes; waits and iterators end with `err`. */
  private stop(err: Error): void {
    if (this.stoppedBy !== null || !this.life.isStarted) return;
    this.stoppedBy = err;
    this.detach();
    this.loadWaiters.close(err);
    this.stream.end(err);
  }

  private detach(): void {
    this.runner.stop();
    this.pacer.cancel();
    this.client.off('stateChanged', this.onState);
    this.client.closedSignal.removeEventListener('abort', this.onClientClosed);
  }

  private async whenLoaded(options: WaitOptions, what: string): Promise<void> {
    if (this.stoppedBy) throw this.stoppedBy;
    if (this.loaded) return;
    await this.loadWaiters.wait(this.client.waitScope(options, `leader observer ${this.path} ${what}`));
  }
}
