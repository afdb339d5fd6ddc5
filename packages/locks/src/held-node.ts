/**
 * A lock or lease node we hold, and the watch over its safety.
 *
 * From the moment it is granted, a held node is watched three ways:
 * - connection states: an error state under the client's errorPolicy (LOST always, SUSPENDED under
 *   `standard`) ends it at once;
 * - the node itself (a getData watch): deleted by someone else ends it; a data change is passed on
 *   (revocation requests arrive that way), and under the `session` policy every RECONNECTED
 *   re-reads the node and checks that its ephemeralOwner is still our session;
 * - the client closing ends it.
 *
 * Ending aborts `signal` with a LeaseLostError and deletes the node with a guaranteed delete (even if
 * it survived a reconnect): a lease, once lost, is never silently valid again. With
 * `keepNodeUntilRelease` a lease that ends by itself aborts its signal just the same but keeps its
 * node until release(), so the next holder waits for our work to stop (Curator's LeaderSelector).
 */
import { ConnectionState, NoNodeError, type Client, type Stat, type WatchEvent } from '@tenure/client';
import { LeaseLostError, type LeaseEnd } from './errors.js';
import { nextTurn } from './next-turn.js';

export interface HeldNodeOptions {
  /** Called with the node's data when it is first read and whenever it changes while held. */
  onData?: (data: Buffer, node: HeldNode) => void;
  /**
   * When the lease ends by itself (error state, lost session, not ours), keep the node until
   * release() instead of deleting it at once. The signal still aborts at once.
   */
  keepNodeUntilRelease?: boolean;
}

export class HeldNode {
  readonly signal: AbortSignal;
  /** The czxid of the node: our fencing token. */
  readonly fencingToken: bigint;
  /** The session that owns the node. */
  readonly sessionId: bigint;
  private readonly controller = new AbortController();
  /** `kept`: ended, but the node waits for release() (keepNodeUntilRelease). */
  private state: 'held' | 'kept' | 'ended' = 'held';
  /** Set once the node is handed out: a node refused at construction is abandoned by the queue. */
  private keepUntilRelease = false;
  private deleting: Promise<void> | null = null;
  /** The watch on our node goes through this view, so dropping it is removeAllWatches. */
  private readonly watches: Client;
  private readonly onClientClosed = (): void => this.end('closed');
  private readonly onState = (s: ConnectionState): void => this.stateChanged(s);
  private readonly onWatch = (ev: WatchEvent): void => this.nodeChanged(ev);

  constructor(
    private readonly client: Client,
    /** Our node's full path. */
    readonly path: string,
    stat: Stat,
    private readonly options: HeldNodeOptions = {},
  ) {
    this.signal = this.controller.signal;
    this.fencingToken = stat.czxid;
    this.sessionId = stat.ephemeralOwner;
    this.watches = client.trackingWatches();
    client.on('stateChanged', this.onState);
    if (client.closedSignal.aborted) {
      this.end('closed');
      return;
    }
    client.closedSignal.addEventListener('abort', this.onClientClosed, { once: true });
    if (client.sessionId !== this.sessionId) {
      this.end('not-owner');
      return;
    }
    this.keepUntilRelease = options.keepNodeUntilRelease === true;
    // Armed once the caller has run on: a lease released at once never needs the watch (and its
    // read would delay the delete). A deletion before the watch is armed shows in the arming read.
    nextTurn(() => {
      if (this.state === 'held') this.watchNode();
    });
  }

  isHeld(): boolean {
    return this.state === 'held';
  }

  /** True when the lease has ended but its node is kept until release() (keepNodeUntilRelease). */
  get awaitingRelease(): boolean {
    return this.state === 'kept';
  }

  /** Ends the lease (the signal aborts with `end`) and deletes the node; resolves once it is gone or its session is. */
  release(end: LeaseEnd = 'released'): Promise<void> {
    if (this.state === 'kept') {
      this.state = 'ended';
      if (this.client.closed || this.client.sessionId !== this.sessionId) {
        // Our session ended (LOST) or the client closed: the ephemeral is gone, or going, with it.
        this.dropWatch();
        this.deleting = Promise.resolve();
      } else {
        this.deleting = this.deleteNode();
      }
    } else {
      this.end(end);
    }
    return this.deleting ?? Promise.resolve();
  }

  private end(end: LeaseEnd): void {
    if (this.state !== 'held') return;
    // Decided before the signal aborts, so its listeners see whether the node awaits release().
    const keep = this.keepUntilRelease && end !== 'released' && end !== 'closed' && end !== 'deleted' && !this.client.closed;
    this.state = keep ? 'kept' : 'ended';
    this.client.off('stateChanged', this.onState);
    this.client.closedSignal.removeEventListener('abort', this.onClientClosed);
    this.controller.abort(new LeaseLostError(this.path, end));
    if (end === 'deleted' || this.client.closed) {
      // Gone already, or the client's close ends the session and its ephemerals.
      this.deleting = Promise.resolve();
      this.dropWatch();
      return;
    }
    if (keep) {
      // The node stays until release(); the watch stays too (it ignores events from now on).
      if (end === 'lost' || end === 'not-owner') this.dropWatch();
      return;
    }
    // Our own delete fires the node watch, which removes it on both sides; when the session is
    // gone (LOST) the node is too, so the watch is only dropped locally.
    if (end === 'lost' || end === 'not-owner') this.dropWatch();
    this.deleting = this.deleteNode();
  }

  private async deleteNode(): Promise<void> {
    if (this.client.sessionId !== this.sessionId && this.client.sessionId !== 0n) return; // not ours to delete
    try {
      await this.client.delete(this.path, { guaranteed: true });
    } catch (err) {
      if (err instanceof NoNodeError) return;
      // The session ended or the client closed: the ephemeral went with it.
      if (this.client.closed || this.client.sessionId !== this.sessionId) return;
      throw err;
    }
  }

  private dropWatch(): void {
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- never rejects (Client.removeAllWatches)
    void this.watches.removeAllWatches();
  }

  private watchNode(): void {
    this.watches.getData(this.path, { watch: this.onWatch }).then(
      ({ data, stat }) => {
        if (this.state !== 'held') return;
        if (stat.ephemeralOwner !== this.sessionId || this.client.sessionId !== this.sessionId) return this.end('not-owner');
        this.options.onData?.(data, this);
      },
      (err: unknown) => {
        if (this.state !== 'held') return;
        if (err instanceof NoNodeError) return this.end(this.client.sessionId === this.sessionId ? 'deleted' : 'lost');
        // A connection problem: the state machine decides (SUSPENDED ends the lease under the
        // standard policy; under `session`, RECONNECTED comes back here).
      },
    );
  }

  private nodeChanged(ev: WatchEvent): void {
    if (this.state !== 'held') return;
    if (ev.type === 'NodeDeleted') return this.end(this.client.sessionId === this.sessionId ? 'deleted' : 'lost');
    if (ev.type === 'NodeDataChanged' || ev.type === 'NodeCreated') this.watchNode();
  }

  private stateChanged(s: ConnectionState): void {
    if (this.state !== 'held') return;
    if (s === ConnectionState.LOST) return this.end('lost');
    // A read-only server is cut off from the quorum: our session may be expiring there.
    if (this.client.isErrorState(s) || s === ConnectionState.READ_ONLY) return this.end('suspended');
    if (this.client.sessionId !== this.sessionId && this.client.sessionId !== 0n) return this.end('lost');
    // Back on the same session (errorPolicy `session`): make sure the node is still ours, and re-arm.
    if (s === ConnectionState.RECONNECTED) this.watchNode();
  }
}
