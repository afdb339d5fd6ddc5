/**
 * SetPartitioner: kazoo's SetPartitioner (kazoo/recipe/partitioner.py), node for node and with its
 * partition function, so kazoo and Tenure processes share one partitioned set.
 *
 * 1. Nodes: `<path>/party/<uuid4 hex>-<identifier>` (kazoo's ShallowParty: EPHEMERAL, data = the
 *    identifier; a member's id is the name after the first `-`), and kazoo's Lock on each item,
 *    `<path>/locks/<item>/<uuid4 hex>__lock__<seq>` (KazooLock). `<path>`, `party` and `locks` are
 *    persistent, as kazoo's `ensure_path` makes them.
 * 2. allocating: join the party, then wait until its children have not changed for
 *    `timeBoundaryMs` (kazoo's PatientChildrenWatch; one children watch, re-armed as it fires).
 * 3. Split: the partition function over the members' identifiers; kazoo's sorts the items and the
 *    members (code point order, as Python's `sorted`) and gives the member at index i the items
 *    i, i + n, i + 2n… (`sorted(items)[i::n]`).
 * 4. Take kazoo's Lock on each of our items, in order, waiting on each as kazoo does. A party
 *    change meanwhile aborts the wait: what was taken is released, and allocation starts over at 2.
 *    A lock held by a member that has gone is waited for: its node goes with its session, within
 *    a session timeout (kazoo#392 is the loop of kazoo's non-blocking retries that never waited).
 * 5. acquired: every lock of our split is held. A party change, or a lock lost (its lease's
 *    signal: SUSPENDED under the `standard` errorPolicy, LOST, its node deleted), makes it
 *    `release`: we release every lock ourselves, before any re-split, then allocate again (2).
 * 6. failure: the session was lost (every lock and our party node went with it) or the server
 *    refused us for good (NoAuth). As kazoo's FAILURE, it is final: make a new SetPartitioner.
 * 7. close(): releases every lock and leaves the party (kazoo's `finish()`); allocation is then
 *    `failure`, and nothing is left on the server.
 */
import { EventEmitter } from 'eventemitter3';
import {
  ConnectionState,
  CreateMode,
  InvalidArgumentError,
  NodeExistsError,
  PassRunner,
  RecipeLifecycle,
  RetryPacer,
  SessionExpiredError,
  TenureError,
  asError,
  safeEmitter,
  triageFailure,
  type Client,
  type Logger,
  type RecipeState,
  type RetryPolicy,
  type SafeEmit,
  type WaitOptions,
  type WatchEvent,
  channelOf,
} from '@tenure/client';
import { KazooLock, hostName, uuidHex, type Lease } from '@tenure/locks';
import { joinPath, validatePath } from '@tenure/protocol';
import { kazooPartition, partyMemberId, pythonSorted, type PartitionFunction } from './partition-function.js';

/** kazoo's child folders under the partitioner's path. */
export const PARTY_NODE = 'party';
export const LOCKS_NODE = 'locks';

/** The diagnostics channel of allocation changes: a {@link PartitionMessage} per change. */
export const PARTITION_CHANNEL = 'tenure:group:partition';

/** What the partition channel publishes. */
export interface PartitionMessage {
  readonly path: string;
  readonly identifier: string;
  readonly allocation: Allocation;
  /** Our items when acquired, else empty. */
  readonly items: readonly string[];
}

// The client's browser-safe channel lookup (silent where there is no diagnostics_channel).
const partitionChannel = channelOf(PARTITION_CHANNEL);

/** kazoo's PartitionState, in lower case. */
export type Allocation = 'allocating' | 'acquired' | 'release' | 'failure';

export interface SetPartitionerOptions {
  /** This member's identifier (unique in the party). Default `<host name>-<pid>`, as kazoo's. */
  identifier?: string;
  /** How long the party must be unchanged before allocating. Default 30,000 ms (kazoo's 30 s). */
  timeBoundaryMs?: number;
  /** Which items are ours: `(identifier, members, items) => ours`. Default kazoo's (kazooPartition). */
  partitionFunction?: PartitionFunction;
  /** Paces retries after failures; default the client's retry policy. */
  retryPolicy?: RetryPolicy;
  /** pino-compatible; default a child of the client's logger. */
  logger?: Logger;
}

export interface SetPartitionerEvents {
  /** The allocation changed; `items` are ours when it is `acquired`, empty otherwise. */
  allocation: (allocation: Allocation, items: readonly string[]) => void;
  error: (error: Error) => void;
}

/** The partitioner reached `failure` (its session was lost, or the server refused it); `cause` says why. */
export class PartitionFailedError extends TenureError {
  override name = 'PartitionFailedError';
  constructor(
    readonly path = '/',
    cause?: unknown,
  ) {
    super('PARTITION_FAILED', `the set partitioner at ${path} failed${cause instanceof Error ? `: ${cause.message}` : ''}`, { cause });
  }
}

let defaultIds = 0;
function defaultIdentifier(): string {
  const pid = (globalThis as { process?: { pid?: number } }).process?.pid ?? 0;
  const n = defaultIds++;
  return `${hostName() ?? 'tenure'}-${pid}${n === 0 ? '' : `-${n}`}`;
}

interface HeldItem {
  readonly lock: KazooLock;
  readonly lease: Lease;
}

export class SetPartitioner extends EventEmitter<SetPartitionerEvents> implements AsyncDisposable {
  readonly path: string;
  readonly partyPath: string;
  readonly locksPath: string;
  readonly identifier: string;
  /** The whole set, sorted and without duplicates. */
  readonly set: readonly string[];
  private readonly timeBoundaryMs: number;
  private readonly partition: PartitionFunction;
  private readonly client: Client;
  private readonly watches: Client;
  private readonly logger: Logger;
  private readonly life: RecipeLifecycle;
  private readonly runner: PassRunner;
  private readonly pacer: RetryPacer;
  private readonly emitSafely: SafeEmit<SetPartitionerEvents>;
  private current: Allocation = 'allocating';
  private ours: readonly string[] = [];
  private readonly held = new Map<string, HeldItem>();
  /** Our party node (full path) and the session it belongs to. */
  private partyNode: string | undefined;
  private partySession = 0n;
  /** Party changes seen (children watch events). */
  private generation = 0;
  private watchArmed = false;
  /** The party as last read: unchanged since `at` (client clock) while `generation` holds. */
  private stable: { generation: number; at: number } | undefined;
  private acquiredGeneration = -1;
  private leaseLost = false;
  private allocating: AbortController | undefined;
  private readonly waiters = new Set<() => void>();
  private failureCause: unknown;
  private readonly onState = (s: ConnectionState): void => this.stateChanged(s);
  private readonly onPartyChange = (ev: WatchEvent): void => this.partyChanged(ev);

  constructor(client: Client, path: string, items: Iterable<string>, options: SetPartitionerOptions = {}) {
    super();
    this.path = validatePath(path);
    this.partyPath = joinPath(this.path, PARTY_NODE);
    this.locksPath = joinPath(this.path, LOCKS_NODE);
    const identifier = options.identifier ?? defaultIdentifier();
    if (typeof identifier !== 'string' || identifier.length === 0 || identifier.includes('/')) {
      throw new InvalidArgumentError(`SetPartitioner: identifier must be a non-empty name without '/', got ${JSON.stringify(identifier)}`);
    }
    this.identifier = identifier;
    const set = new Set<string>();
    for (const item of items) {
      if (typeof item !== 'string' || item.length === 0 || item.includes('/') || item === '.' || item === '..') {
        throw new InvalidArgumentError(
          `SetPartitioner: every item must be a node name (its lock is <path>/locks/<item>), got ${JSON.stringify(item)}`,
        );
      }
      set.add(item);
    }
    this.set = pythonSorted(set);
    const boundary = options.timeBoundaryMs ?? 30_000;
    if (typeof boundary !== 'number' || !(boundary >= 0) || !Number.isFinite(boundary)) {
      throw new InvalidArgumentError(`SetPartitioner: timeBoundaryMs must be a number >= 0, got ${String(boundary)}`);
    }
    this.timeBoundaryMs = boundary;
    this.partition = options.partitionFunction ?? kazooPartition;
    this.client = client;
    this.watches = client.trackingWatches();
    this.logger = options.logger ?? client.childLogger({ recipe: 'setPartitioner', path: this.path, identifier });
    this.life = new RecipeLifecycle(`SetPartitioner ${identifier} at ${this.path}`);
    this.emitSafely = safeEmitter<SetPartitionerEvents>(this, this.logger);
    this.pacer = new RetryPacer(client, options.retryPolicy);
    this.runner = new PassRunner(
      client.clock,
      () => this.pass(),
      (err) => this.failed(err),
    );
  }

  /** `'latent'`, `'started'`, `'closed'`: the recipe lifecycle. The partition's own state is `allocation`. */
  get state(): RecipeState {
    return this.life.state;
  }

  /** Where the partition is: allocating, acquired, release (being released) or failure (final). */
  get allocation(): Allocation {
    return this.current;
  }

  /** Our items while acquired (their locks are held); empty otherwise. */
  get items(): readonly string[] {
    return this.current === 'acquired' ? this.ours : [];
  }

  /** Joins the party and starts allocating, in the background (`allocation` events, `waitForAcquire`). */
  start(): Promise<void> {
    return this.life.start(() => {
      this.client.on('stateChanged', this.onState);
      this.runner.run();
    });
  }

  /**
   * Resolves with our items once `acquired` (at once if it is); rejects with PartitionFailedError
   * on `failure`, and with TimeoutError, AbortError or ClosedError (kazoo's `wait_for_acquire`).
   */
  async waitForAcquire(options: WaitOptions = {}): Promise<readonly string[]> {
    using scope = this.client.waitScope(options, `acquire a partition of ${this.path}`);
    for (;;) {
      if (this.current === 'acquired') return this.items;
      if (this.current === 'failure' || this.life.isClosed) throw new PartitionFailedError(this.path, this.failureCause);
      let wake!: () => void;
      const changed = new Promise<void>((resolve) => (wake = resolve));
      this.waiters.add(wake);
      try {
        await scope.race(changed);
      } finally {
        this.waiters.delete(wake);
      }
    }
  }

  /** Releases every lock, leaves the party and stops (kazoo's `finish()`). Idempotent. */
  close(): Promise<void> {
    return this.life.close(async () => {
      this.client.off('stateChanged', this.onState);
      this.runner.stop();
      this.pacer.cancel();
      this.allocating?.abort();
      await this.runner.whenIdle();
      await this.releaseAll();
      const node = this.partyNode;
      this.partyNode = undefined;
      if (node !== undefined && this.client.sessionId === this.partySession && !this.client.closed) {
        await this.client.delete(node, { guaranteed: true }).catch(() => {});
      }
      await this.watches.removeAllWatches();
      this.setAllocation('failure');
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- the pass ----

  /** One step: join, release what must go, wait out the time boundary, then split and lock. */
  private async pass(): Promise<void> {
    if (this.halted) return;
    await this.join();
    if (this.halted) return;
    if (this.held.size > 0 && (this.current !== 'acquired' || this.leaseLost || this.acquiredGeneration !== this.generation)) {
      if (this.current === 'acquired') this.setAllocation('release');
      await this.releaseAll();
      if (this.halted) return;
    }
    if (this.current === 'acquired') return;
    this.setAllocation('allocating');

    const now = this.client.clock.now();
    if (this.stable === undefined || this.stable.generation !== this.generation || !this.watchArmed) {
      const generation = this.generation;
      await this.readParty(true);
      this.stable = { generation, at: now };
      if (this.generation === generation && !this.halted) this.runner.runIn(this.timeBoundaryMs);
      return;
    }
    const waited = now - this.stable.at;
    if (waited < this.timeBoundaryMs) {
      this.runner.runIn(this.timeBoundaryMs - waited);
      return;
    }

    const generation = this.generation;
    const members = await this.readParty(false);
    if (members === null || this.generation !== generation || this.halted) return;
    const ours = [...this.partition(this.identifier, members, this.set)];
    const abort = new AbortController();
    this.allocating = abort;
    this.leaseLost = false;
    try {
      for (const item of ours) {
        if (abort.signal.aborted || this.generation !== generation || this.halted) return;
        const lock = new KazooLock(this.client, joinPath(this.locksPath, item), { identifier: this.identifier, logger: this.logger });
        let lease: Lease;
        try {
          lease = await lock.acquire({ signal: abort.signal });
        } catch (err) {
          await lock.close();
          if (abort.signal.aborted) return;
          throw err;
        }
        this.held.set(item, { lock, lease });
        lease.signal.addEventListener('abort', () => this.lost(item, lease), { once: true });
      }
    } finally {
      if (this.allocating === abort) this.allocating = undefined;
      // Failed or closed meanwhile: nothing taken may stay.
      if (this.halted) await this.releaseAll();
    }
    this.pacer.succeeded();
    if (this.generation !== generation || this.leaseLost) {
      this.runner.run();
      return;
    }
    this.ours = ours;
    this.acquiredGeneration = generation;
    this.setAllocation('acquired');
  }

  /** Failed (final) or no longer started: the pass does nothing more. */
  private get halted(): boolean {
    return this.current === 'failure' || !this.life.isStarted;
  }

  /** Our party node, created once per session (kazoo's ShallowParty.join), and the persistent folders. */
  private async join(): Promise<void> {
    if (this.partyNode !== undefined && this.partySession === this.client.sessionId) return;
    await this.client.create(this.locksPath, null, { createParents: true }).catch(ignoreExists);
    const session = this.client.sessionId;
    const node = joinPath(this.partyPath, `${uuidHex()}-${this.identifier}`);
    try {
      await this.client.create(node, this.identifier, { mode: CreateMode.EPHEMERAL, createParents: true });
    } catch (err) {
      // A retried create whose first reply was lost: the node is ours if our session owns it.
      if (!(err instanceof NodeExistsError) || (await this.client.exists(node))?.ephemeralOwner !== session) throw err;
    }
    this.partyNode = node;
    this.partySession = session;
  }

  /** The members' identifiers; with `watch`, arms the one children watch (unless armed). Null when our node is missing (we join again). */
  private async readParty(watch: boolean): Promise<string[] | null> {
    const arm = watch && !this.watchArmed;
    if (arm) this.watchArmed = true;
    let children: string[];
    try {
      ({ children } = await this.watches.getChildren(this.partyPath, arm ? { watch: this.onPartyChange } : {}));
    } catch (err) {
      if (arm) this.watchArmed = false;
      throw err;
    }
    const ourName = this.partyNode?.slice(this.partyPath.length + 1);
    if (ourName === undefined || !children.includes(ourName)) {
      // Someone deleted our node: join again, then wait for the party to settle.
      this.partyNode = undefined;
      this.runner.run();
      return null;
    }
    return children.map(partyMemberId);
  }

  private partyChanged(ev: WatchEvent): void {
    if (ev.type === 'ChildWatchRemoved' || ev.type === 'DataWatchRemoved') return;
    this.watchArmed = false;
    this.generation++;
    this.allocating?.abort();
    if (this.current === 'acquired' && this.life.isStarted) this.setAllocation('release');
    this.runner.run();
  }

  private lost(item: string, lease: Lease): void {
    if (this.held.get(item)?.lease !== lease || !this.life.isStarted) return; // our own release
    this.leaseLost = true;
    this.allocating?.abort();
    if (this.current === 'acquired') this.setAllocation('release');
    this.runner.run();
  }

  private stateChanged(s: ConnectionState): void {
    if (s === ConnectionState.LOST) this.fail(undefined);
  }

  private failed(err: unknown): void {
    const verdict = triageFailure(err, this.client.closedSignal);
    if (verdict === 'closed' || !this.life.isStarted) return;
    if (verdict === 'session') return this.fail(err);
    if (verdict === 'stop') {
      this.emitSafely('error', asError(err));
      return this.fail(err);
    }
    if (verdict === 'report') this.emitSafely('error', asError(err));
    this.pacer.schedule(() => this.runner.run());
  }

  /** Final: every lock went (or goes) with the session; nothing more is tried. */
  private fail(cause: unknown): void {
    if (this.current === 'failure' || !this.life.isStarted) return;
    this.failureCause = cause ?? new SessionExpiredError(this.partyNode ?? this.partyPath);
    this.runner.stop();
    this.pacer.cancel();
    this.allocating?.abort();
    this.setAllocation('failure');
    this.releaseAll()
      .then(() => this.watches.removeAllWatches())
      .catch(() => {}); // neither rejects
  }

  private async releaseAll(): Promise<void> {
    const held = [...this.held.values()];
    this.held.clear();
    this.ours = [];
    await Promise.allSettled(held.map((h) => h.lock.close()));
  }

  private setAllocation(next: Allocation): void {
    // failure is final (kazoo's): a pass still in flight cannot leave it.
    if (this.current === next || this.current === 'failure') return;
    this.current = next;
    for (const wake of this.waiters) wake();
    if (partitionChannel.hasSubscribers) {
      partitionChannel.publish({
        path: this.path,
        identifier: this.identifier,
        allocation: next,
        items: this.items,
      } satisfies PartitionMessage);
    }
    this.emitSafely('allocation', next, this.items);
  }
}

function ignoreExists(err: unknown): void {
  if (!(err instanceof NodeExistsError)) throw err;
}
