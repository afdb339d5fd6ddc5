/**
 * Semaphore: Curator's InterProcessSemaphoreV2 layout, with a fixed maximum number of leases or
 * one that follows a count (Curator's SharedCount constructor).
 *
 * Nodes:
 * - `<path>/locks/_c_<uuid>-lock-<seq>`: a Mutex that lets one acquirer at a time take leases;
 * - `<path>/leases/_c_<uuid>-lease-<seq>`: one EPHEMERAL_SEQUENTIAL protected node per lease,
 *   under container parents, with the optional lease data.
 *
 * Protocol: take the `locks` mutex; create a lease node; list `leases`: while there are more
 * children than maxLeases, wait for a change of `leases` (a child watch; only the mutex holder
 * watches, so there is no herd). Then release the mutex. Every lease node is counted, granted or
 * waiting, so a lease is granted only when at most maxLeases nodes exist: the limit holds even if the
 * mutex is lost meanwhile (the mutex only keeps acquirers from blocking each other).
 *
 * A count-backed maximum is read at every check, and a change of the count wakes the waiter, which
 * compares again. Lowering it revokes no lease: new acquirers wait until enough are returned. Its
 * listener is on the count only while an acquirer waits (and close() removes it).
 *
 * acquire(n) is all or nothing: the mutex is held until all n leases are granted (Curator takes it
 * once per lease, so two acquirers of n can each end up holding part and wait for each other);
 * on timeout, abort or failure every lease node made so far is deleted.
 * Every lease has its own node, its own czxid token and its own signal.
 */
import {
  ClosedError,
  ConnectionState,
  CreateMode,
  NoNodeError,
  SessionExpiredError,
  abandonNode,
  newProtectedId,
  InvalidArgumentError,
} from '@tenure/client';
import type { Client, Logger, NodeData, Stat, WaitOptions, WaitScope, WatchCallback } from '@tenure/client';
import { validatePath } from '@tenure/protocol';
import { LeaseCountError } from './errors.js';
import { HeldNode } from './held-node.js';
import { tracedAcquire } from './diagnostics.js';
import { Holding, type Lease } from './lease.js';
import { Mutex } from './mutex.js';

/**
 * A maximum that moves: any `{ count, on('change'), off('change') }`, such as @tenure/counters'
 * SharedCount (started by the caller; the semaphore never writes it). Typed by shape, so that this
 * package does not depend on @tenure/counters.
 */
export interface LeaseCount {
  readonly count: number;
  on(event: 'change', listener: () => void): unknown;
  off(event: 'change', listener: () => void): unknown;
}

export interface SemaphoreOptions {
  /** The data of each lease node (Curator's setNodeData). Default empty. */
  data?: NodeData;
  /** pino-compatible; default a child of the client's logger. */
  logger?: Logger;
}

const LOCK_PARENT = 'locks';
const LEASE_PARENT = 'leases';
const LEASE_BASE_NAME = 'lease-';

export class Semaphore implements AsyncDisposable {
  readonly path: string;
  private readonly limit: number | LeaseCount;
  /** Removers of the count listeners of waiting acquirers. */
  private readonly countListeners = new Set<() => void>();
  private readonly lock: Mutex;
  private readonly leasesPath: string;
  private readonly data: NodeData | null;
  private readonly logger: Logger;
  private readonly scopes = new Set<WaitScope>();
  private readonly live = new Set<Holding>();
  private isClosed = false;

  constructor(
    readonly client: Client,
    path: string,
    maxLeases: number | LeaseCount,
    options: SemaphoreOptions = {},
  ) {
    this.path = validatePath(path);
    if (typeof maxLeases === 'number' && (!Number.isSafeInteger(maxLeases) || maxLeases < 1))
      throw new InvalidArgumentError(`${path}: maxLeases must be a positive integer, got ${String(maxLeases)}`);
    this.limit = maxLeases;
    this.logger = options.logger ?? client.childLogger({ recipe: 'semaphore', path: this.path });
    this.lock = new Mutex(client, `${this.path}/${LOCK_PARENT}`, { logger: this.logger });
    this.leasesPath = `${this.path}/${LEASE_PARENT}`;
    this.data = options.data ?? null;
  }

  /** The maximum now: the fixed one, or the count's current value. */
  get maxLeases(): number {
    return typeof this.limit === 'number' ? this.limit : this.limit.count;
  }

  /** One lease. Rejects with TimeoutError, AbortError or ClosedError; nothing is left behind then. */
  acquire(options?: WaitOptions): Promise<Lease>;
  /** `count` leases, all or none. With a count-backed maximum, more than it allows now waits for it to rise. */
  acquire(count: number, options?: WaitOptions): Promise<Lease[]>;
  acquire(countOrOptions?: number | WaitOptions, maybeOptions?: WaitOptions): Promise<Lease | Lease[]> {
    const many = typeof countOrOptions === 'number';
    const count = many ? countOrOptions : 1;
    return tracedAcquire('semaphore', this.path, count, () => this.acquireNow(many, count, (many ? maybeOptions : countOrOptions) ?? {}));
  }

  private async acquireNow(many: boolean, count: number, options: WaitOptions): Promise<Lease | Lease[]> {
    if (!Number.isSafeInteger(count) || count < 1)
      throw new InvalidArgumentError(`${this.path}: lease count must be a positive integer, got ${String(count)}`);
    if (typeof this.limit === 'number' && count > this.limit) throw new LeaseCountError(this.path, count, this.maxLeases);
    if (this.isClosed) throw new ClosedError(`semaphore ${this.path}`);
    const scope = this.client.waitScope(options, `acquire ${this.path}`);
    this.scopes.add(scope);
    try {
      for (;;) {
        scope.check();
        const nodes = await this.attempt(count, scope);
        if (nodes === null) continue; // the session ended meanwhile: start over
        const leases = nodes.map((n) => this.adopt(n));
        return many ? leases : leases[0]!;
      }
    } finally {
      scope.dispose();
      this.scopes.delete(scope);
    }
  }

  /** The lease nodes' names (granted and waiting). */
  async participantNodes(): Promise<string[]> {
    try {
      return (await this.client.getChildren(this.leasesPath)).children;
    } catch (err) {
      if (err instanceof NoNodeError) return [];
      throw err;
    }
  }

  /** Stops pending acquires (ClosedError) and releases every lease taken through this object. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const s of this.scopes) s.abort(new ClosedError(`semaphore ${this.path}`));
    for (const stop of [...this.countListeners]) stop();
    await Promise.allSettled([...this.live].map((h) => h.node.release('closed')));
    await this.lock.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private adopt(node: HeldNode): Lease {
    const h = new Holding(node, undefined, (x) => this.live.delete(x));
    if (node.isHeld()) this.live.add(h);
    return h.lease();
  }

  /** Takes `count` leases under the mutex; null when our session ended and we must start over. */
  private async attempt(count: number, scope: WaitScope): Promise<HeldNode[] | null> {
    const client = this.client;
    const gate = await this.lock.acquire({ signal: scope.signal });
    const created: Array<{ path: string; stat: Stat }> = [];
    let granted: HeldNode[] | null = null;
    try {
      while (created.length < count) {
        let c: { path: string; stat: Stat };
        try {
          c = await client.create(`${this.leasesPath}/${LEASE_BASE_NAME}`, this.data, {
            mode: CreateMode.EPHEMERAL_SEQUENTIAL,
            protection: newProtectedId(),
            createParentContainers: true,
            signal: scope.signal,
          });
        } catch (err) {
          if (scope.aborted) throw scope.reason;
          if (err instanceof SessionExpiredError) return null;
          throw err;
        }
        created.push(c);
        if (c.stat.ephemeralOwner !== client.sessionId) return null;
        if (!(await this.waitForRoom(c.path.slice(c.path.lastIndexOf('/') + 1), c.stat.ephemeralOwner, scope))) return null;
      }
      granted = this.grant(created, scope);
      return granted;
    } catch (err) {
      if (scope.aborted) throw scope.reason;
      if (err instanceof SessionExpiredError) return null;
      throw err;
    } finally {
      if (granted === null)
        await Promise.all(created.map((c) => abandonNode(client, c.path, c.stat.ephemeralOwner, { logger: this.logger })));
      // The next acquirer may go on; the delete need not be awaited (requests stay in order).
      void gate.release().catch(() => {});
    }
  }

  /** Our nodes become leases together, at once on a healthy connection. */
  private grant(created: ReadonlyArray<{ path: string; stat: Stat }>, scope: WaitScope): HeldNode[] {
    scope.check();
    const state = this.client.state;
    if (state !== null && (this.client.isErrorState(state) || state === ConnectionState.READ_ONLY)) {
      throw new SessionExpiredError(this.leasesPath); // start over once reconnected
    }
    const nodes = created.map((c) => new HeldNode(this.client, c.path, c.stat));
    if (nodes.every((n) => n.isHeld())) return nodes;
    for (const n of nodes) void n.release('not-owner').catch(() => {});
    throw new SessionExpiredError(this.leasesPath);
  }

  /** Calls `listener` on each change of a count-backed maximum, until the returned function is called or close(). */
  private onCountChange(listener: () => void): () => void {
    const limit = this.limit;
    if (typeof limit === 'number' || this.isClosed) return () => {};
    limit.on('change', listener);
    const stop = (): void => {
      limit.off('change', listener);
      this.countListeners.delete(stop);
    };
    this.countListeners.add(stop);
    return stop;
  }

  /**
   * Waits until at most maxLeases lease nodes exist. Returns false when our node is gone (the
   * session ended). The first listing sets no watch; only a wait does (through a tracking view),
   * and it is removed after.
   */
  private async waitForRoom(ourName: string, session: bigint, scope: WaitScope): Promise<boolean> {
    const client = this.client;
    const watches = client.trackingWatches();
    let changed = false;
    let wake: (() => void) | null = null;
    const callback: WatchCallback = (ev) => {
      if (ev.type === 'ChildWatchRemoved' || ev.type === 'DataWatchRemoved') return;
      changed = true;
      wake?.();
    };
    let watching = false;
    const onState = (s: ConnectionState): void => {
      if (s === ConnectionState.LOST || (client.sessionId !== session && client.sessionId !== 0n)) wake?.();
    };
    const onAbort = (): void => wake?.();
    let recount = false; // the maximum moved since we last compared
    const stopCount = this.onCountChange(() => {
      recount = true;
      wake?.();
    });
    client.on('stateChanged', onState);
    scope.signal.addEventListener('abort', onAbort, { once: true });
    try {
      let children = (await client.getChildren(this.leasesPath)).children;
      for (;;) {
        if (!children.includes(ourName) || client.sessionId !== session) return false;
        recount = false;
        if (children.length <= this.maxLeases) return true;
        if (watching && !changed) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            if (recount || scope.aborted || client.sessionId !== session) resolve();
          });
          wake = null;
          scope.check();
          if (client.sessionId !== session) return false;
          if (recount && !changed) continue; // only the maximum moved: the listing stands
        }
        changed = false;
        watching = true;
        children = (await watches.getChildren(this.leasesPath, { watch: callback })).children;
      }
    } catch (err) {
      if (err instanceof NoNodeError) return false;
      throw err;
    } finally {
      stopCount();
      client.off('stateChanged', onState);
      scope.signal.removeEventListener('abort', onAbort);
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- never rejects (Client.removeAllWatches)
      if (watching && !changed) void watches.removeAllWatches();
    }
  }
}
