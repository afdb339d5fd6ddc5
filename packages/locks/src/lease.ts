/**
 * Leases: what every acquire returns, and the bookkeeping of reentrant holds.
 *
 * A lease is one hold of one lock node. Reentrant acquires (the same explicit `owner` on the same
 * lock object) share the node and its token; each returns its own Lease, and the node is deleted
 * when the last of them is released.
 */
import type { WaitScope } from '@tenure/client';
import type { HeldNode } from './held-node.js';

/** One hold of a lock, a read or write lock, or one semaphore lease. */
export interface Lease extends AsyncDisposable {
  /** Our node's full path. */
  readonly path: string;
  /**
   * The czxid of our node. It rises strictly from one holder to the next on the same lock path,
   * even when the container parent is removed and re-created (sequence numbers restart then;
   * zxids never do). Pass it to the resource you guard, which rejects smaller tokens.
   */
  readonly fencingToken: bigint;
  /**
   * Aborts as soon as the lease is no longer safe: LOST always, SUSPENDED under the client's
   * `standard` errorPolicy (the default), our node deleted or no longer ours, the client or lock
   * closed, and at release. Its reason is a LeaseLostError. Once aborted the lease is dead for
   * good: acquire again for a new token.
   */
  readonly signal: AbortSignal;
  /** The `owner` given to acquire, if any. */
  readonly owner: unknown;
  /** True until this lease is released or the lease is lost. */
  isHeld(): boolean;
  /**
   * Releases this hold; the last hold of a node deletes it with a guaranteed delete. Resolves when
   * the node is gone or its session has ended (during a connection loss, after the reconnect).
   * Idempotent.
   */
  release(): Promise<void>;
}

/** A node held by one owner, with the count of its reentrant holds. */
export class Holding {
  private count = 0;
  private freed = false;
  /** The first lease handed out: what revocation listeners receive. */
  first: Lease | undefined;

  constructor(
    readonly node: HeldNode,
    readonly owner: unknown,
    private readonly onFree: (h: Holding) => void,
    private readonly onReleased: (h: Holding) => void = () => {},
  ) {
    node.signal.addEventListener('abort', () => this.free(), { once: true });
  }

  get holds(): number {
    return this.count;
  }

  /** A new hold (a reentrant acquire when there is one already). */
  lease(): Lease {
    this.count++;
    const l = new LeaseHandle(this);
    this.first ??= l;
    return l;
  }

  /** @internal */
  releaseOne(): Promise<void> {
    if (this.count > 0) this.count--;
    if (this.count > 0) return Promise.resolve();
    this.free();
    this.onReleased(this);
    return this.node.release();
  }

  private free(): void {
    if (this.freed) return;
    this.freed = true;
    this.onFree(this);
  }
}

class LeaseHandle implements Lease {
  private released = false;

  constructor(private readonly holding: Holding) {}

  get path(): string {
    return this.holding.node.path;
  }
  get fencingToken(): bigint {
    return this.holding.node.fencingToken;
  }
  get signal(): AbortSignal {
    return this.holding.node.signal;
  }
  get owner(): unknown {
    return this.holding.owner;
  }

  isHeld(): boolean {
    return !this.released && this.holding.node.isHeld();
  }

  release(): Promise<void> {
    if (this.released) return Promise.resolve();
    this.released = true;
    return this.holding.releaseOne();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}

/**
 * The holds of one lock object, by owner. Acquires without an owner never share a node; acquires
 * with the same owner do while the node is held (a concurrent second acquire waits for the first).
 */
export class Holdings {
  private readonly byOwner = new Map<unknown, Holding | Promise<Holding>>();
  private readonly live = new Set<Holding>();
  /** Holdings whose node has not been released yet (lost ones included). */
  private readonly open = new Set<Holding>();

  /** The live holding of `owner`, if any. */
  current(owner: unknown): Holding | undefined {
    if (owner === undefined) return undefined;
    const h = this.byOwner.get(owner);
    return h instanceof Holding && h.node.isHeld() ? h : undefined;
  }

  /** Every live holding. */
  get all(): readonly Holding[] {
    return [...this.live];
  }

  /** Every holding whose node is still ours to release: the live ones and the lost ones kept until release (keepNodeUntilRelease). */
  get unreleased(): readonly Holding[] {
    return [...this.open].filter((h) => h.node.isHeld() || h.node.awaitingRelease);
  }

  /**
   * A lease for `owner`: another hold of its live node, or a new node from `fresh`.
   * `wrap` sees the holding before the lease is returned (revocation wiring).
   */
  async acquire(owner: unknown, scope: WaitScope, fresh: () => Promise<HeldNode>, wrap?: (h: Holding) => void): Promise<Lease> {
    for (;;) {
      if (owner === undefined) {
        // A node lost between its grant and now is already being deleted: queue again.
        const node = await fresh();
        if (node.isHeld()) return this.adopt(node, undefined, wrap).lease();
        discard(node);
        scope.check();
        continue;
      }
      scope.check();
      const existing = this.byOwner.get(owner);
      if (existing instanceof Holding) {
        if (existing.node.isHeld()) return existing.lease();
        this.byOwner.delete(owner);
        continue;
      }
      if (existing !== undefined) {
        // Another acquire of this owner is under way: join it, or try ourselves if it fails.
        await Promise.race([existing.catch(() => null), scope.whenAborted]);
        continue;
      }
      const pending = fresh().then((node) => this.adopt(node, owner, wrap));
      this.byOwner.set(owner, pending);
      try {
        const h = await pending;
        if (h.node.isHeld()) return h.lease();
        discard(h.node);
      } finally {
        if (this.byOwner.get(owner) === pending) this.byOwner.delete(owner);
      }
    }
  }

  private adopt(node: HeldNode, owner: unknown, wrap?: (h: Holding) => void): Holding {
    const h = new Holding(
      node,
      owner,
      (x) => {
        this.live.delete(x);
        if (!x.node.awaitingRelease) this.open.delete(x);
        if (owner !== undefined && this.byOwner.get(owner) === x) this.byOwner.delete(owner);
      },
      (x) => this.open.delete(x),
    );
    if (node.isHeld()) {
      this.live.add(h);
      this.open.add(h);
      if (owner !== undefined) this.byOwner.set(owner, h);
    }
    wrap?.(h);
    return h;
  }
}

/** A node lost before it was handed out: one kept until release (keepNodeUntilRelease) is released now. */
function discard(node: HeldNode): void {
  if (node.awaitingRelease) node.release().catch(() => {});
}
