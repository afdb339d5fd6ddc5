/**
 * Mutex: Curator's InterProcessMutex, node for node.
 *
 * Nodes: `<path>/_c_<uuid>-lock-<10-digit seq>`, EPHEMERAL_SEQUENTIAL, made by a protected create
 * under container parents (the server removes `<path>` once the last node is gone). The node's
 * data is the optional lock payload (empty when revocable, as in Curator).
 *
 * Protocol: children sort by the sequence after the last `lock-`. The first node holds the lock;
 * every other waiter watches only its immediate predecessor, so a release wakes exactly one waiter.
 * See lock-queue.ts for the create / list / watch loop and held-node.ts for what ends a lease.
 *
 * Reentrancy: none by default. A second acquire() waits its turn, even on the same object. An
 * explicit `owner` makes acquires of that owner share one node (with a count); the node is deleted
 * when the last of its leases is released.
 *
 * Lost leases: by default a lease that ends by itself deletes its node at once; with the acquire
 * option `keepNodeUntilRelease` the node stays until release() (see held-node.ts).
 *
 * Revocation: Curator's cooperative protocol. After makeRevocable(listener), a holder whose node's
 * data is set to `__REVOKE__` (Revoker.attemptRevoke, from Tenure or Curator) has its listener
 * called with the lease; releasing is up to the listener.
 */
import {
  ClosedError,
  NoNodeError,
  queuePosition,
  sequenceAfter,
  sortBySequence,
  type Client,
  type Logger,
  type NodeData,
  type WaitOptions,
  type WaitScope,
} from '@tenure/client';
import { validatePath } from '@tenure/protocol';
import type { HeldNode } from './held-node.js';
import { Holdings, type Holding, type Lease } from './lease.js';
import { joinQueue, type Decision, type QueueSpec } from './lock-queue.js';
import { REVOKE_MESSAGE } from './revoker.js';
import { tracedAcquire } from './diagnostics.js';

// Curator's names for a ReadWriteLock's halves (read-write-lock.ts exports them; it imports this module).
const READ_LOCK_NAME = '__READ__';
const WRITE_LOCK_NAME = '__WRIT__';

export interface MutexOptions {
  /** The data of our lock node (Curator's lock node bytes). Default empty. */
  data?: NodeData;
  /** pino-compatible; default a child of the client's logger. */
  logger?: Logger;
}

export interface AcquireOptions extends WaitOptions {
  /**
   * Makes acquires reentrant for this owner (any value, compared with ===): while the owner holds
   * the lock through this object, another acquire with the same owner returns at once with the
   * same node and token. Without an owner, every acquire queues for the lock.
   */
  owner?: unknown;
  /**
   * When the lease ends by itself (SUSPENDED under the `standard` errorPolicy, LOST, READ_ONLY, our
   * node not ours), keep our node until `release()` instead of deleting it at once: the signal
   * still aborts and isHeld() turns false at once, but the next waiter is not granted the lock
   * before you release, so work that is slow to stop cannot overlap the next holder's (Curator's
   * behaviour). release() then deletes it with a guaranteed delete; after LOST the node went with
   * the session and release() resolves at once. Default false: the node is deleted at once.
   * With an `owner`, the first acquire of the shared node decides.
   */
  keepNodeUntilRelease?: boolean;
}

/** Called when someone asks the holder to give the lock up (`__REVOKE__`). */
export type RevocationListener = (lease: Lease) => void;

export class Mutex implements AsyncDisposable {
  /** The lock's path (the parent of the lock nodes). */
  readonly path: string;
  private readonly holdings = new Holdings();
  private readonly scopes = new Set<WaitScope>();
  private readonly data: NodeData | null;
  private readonly logger: Logger;
  private revocation: RevocationListener | undefined;
  private isClosed = false;

  constructor(
    readonly client: Client,
    path: string,
    options: MutexOptions = {},
    /** @internal Curator's lock name: 'lock-' for a mutex. */
    protected readonly lockName: string = 'lock-',
  ) {
    this.path = validatePath(path);
    this.data = options.data ?? null;
    this.logger = options.logger ?? client.childLogger({ recipe: 'mutex', path: this.path });
  }

  /**
   * Waits for the lock. Rejects with TimeoutError after `timeoutMs`, AbortError when `signal`
   * aborts, ClosedError when the client or this lock closes; our node is deleted in each case.
   */
  acquire(options: AcquireOptions = {}): Promise<Lease> {
    const kind = this.lockName === READ_LOCK_NAME ? 'read' : this.lockName === WRITE_LOCK_NAME ? 'write' : 'mutex';
    return tracedAcquire(kind, this.path, 1, () => this.acquireNow(options));
  }

  private async acquireNow(options: AcquireOptions): Promise<Lease> {
    if (this.isClosed) throw new ClosedError(`lock ${this.path}`);
    const scope = this.client.waitScope(options, `acquire ${this.path}`);
    this.scopes.add(scope);
    try {
      const owner = options.owner;
      this.beforeAcquire(owner);
      let revokeAsked = false;
      let holding: Holding | undefined;
      const fire = (h: Holding): void => {
        const listener = this.revocation;
        if (listener && h.first && h.node.isHeld()) listener(h.first);
      };
      const revocable = this.revocation !== undefined;
      const spec: QueueSpec = {
        basePath: this.path,
        lockName: this.lockName,
        data: revocable ? null : this.data,
        sortKey: (name) => this.sortKey(name),
        decide: (sorted, ours) => this.decide(sorted, ours, owner),
        logger: this.logger,
        held: {
          keepNodeUntilRelease: options.keepNodeUntilRelease === true,
          onData: (data) => {
            if (!this.revocation || !data.equals(REVOKE_MESSAGE)) return;
            if (holding) fire(holding);
            else revokeAsked = true;
          },
        },
      };
      return await this.holdings.acquire(
        owner,
        scope,
        () => {
          const fixed = this.fixedSequence(owner);
          return joinQueue(this.client, fixed === undefined ? spec : { ...spec, fixedSequence: fixed }, scope);
        },
        (h) => {
          holding = h;
          if (revokeAsked) queueMicrotask(() => fire(h));
        },
      );
    } finally {
      scope.dispose();
      this.scopes.delete(scope);
    }
  }

  /**
   * Cooperative revocation (Curator's makeRevocable): while held, a `__REVOKE__` written to our node
   * calls `listener` with the lease. Call before acquire(); revocable locks create empty nodes.
   */
  makeRevocable(listener: RevocationListener): void {
    this.revocation = listener;
  }

  /** The lock's nodes in queue order (full paths); the first holds the lock. */
  async participantNodes(): Promise<string[]> {
    try {
      const { children } = await this.client.getChildren(this.path);
      return sortBySequence(children, (n) => this.sortKey(n)).map((n) => `${this.path}/${n}`);
    } catch (err) {
      if (err instanceof NoNodeError) return [];
      throw err;
    }
  }

  /** Whether this object holds the lock now (Curator's isAcquiredInThisProcess). */
  isAcquiredInThisProcess(): boolean {
    return this.holdings.all.length > 0;
  }

  /** The live holds of this object. */
  protected get held(): readonly Holding[] {
    return this.holdings.all;
  }

  /** @internal The live node of `owner` on this lock, if any. */
  heldBy(owner: unknown): HeldNode | undefined {
    return this.holdings.current(owner)?.node;
  }

  /** Stops every pending acquire (ClosedError) and releases every lease of this object. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const s of this.scopes) s.abort(new ClosedError(`lock ${this.path}`));
    await Promise.allSettled(this.holdings.unreleased.map((h) => h.node.release('closed')));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- the recipe's rule (overridden by the read and write locks) ----

  protected sortKey(name: string): string {
    return sequenceAfter(name, this.lockName);
  }

  /** The first node holds the lock; the others watch their immediate predecessor. */
  protected decide(sorted: readonly string[], ourName: string, _owner: unknown): Decision {
    const position = queuePosition(sorted, ourName)!;
    return position.granted ? { granted: true } : { granted: false, watch: position.watch };
  }

  /** Throws when this acquire must be refused. */
  protected beforeAcquire(_owner: unknown): void {}

  /** A fixed sequence for our node (EPHEMERAL), or undefined for EPHEMERAL_SEQUENTIAL. */
  protected fixedSequence(_owner: unknown): string | undefined {
    return undefined;
  }
}
