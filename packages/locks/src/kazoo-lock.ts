/**
 * KazooLock: kazoo's Lock recipe (kazoo/recipe/lock.py), node for node, so kazoo and Tenure
 * processes share one lock. SetPartitioner's item locks and the non-blocking leases stand on it.
 *
 * 1. Nodes: `<path>/<uuid4 hex>__lock__<10-digit seq>`, EPHEMERAL_SEQUENTIAL, data = the
 *    identifier in UTF-8 (empty without one), under persistent parents (kazoo's `ensure_path`; a
 *    container parent could be reaped between kazoo's `ensure_path` and its create).
 * 2. Contenders: the children matching kazoo's `__lock__(-?\d{10})$`, ordered by that sequence.
 *    Other children (a lease's `lease_holder`, Curator's `lock-` nodes) are not in the queue.
 * 3. The first contender holds the lock; every other one watches its immediate predecessor (a
 *    getData watch, as kazoo's `get`), so a release wakes one waiter. The queue loop is the locks'
 *    own (lock-queue.ts): the lease is fenced (czxid) and watched (held-node.ts) like a Mutex's.
 * 4. kazoo's uuid trick instead of Curator's protected create: every node of ours is named by a
 *    fresh uuid, so a node with our uuid that is not the one the create returned is a duplicate of
 *    a retried create (its reply lost): it is deleted and never waited on. A create that fails
 *    without a definite answer deletes whatever carries our uuid, in the background.
 * 5. Not reentrant, as kazoo's: a second acquire() waits its turn, even on the same object.
 */
import {
  ClosedError,
  CreateMode,
  KeeperError,
  NoNodeError,
  isRetryableError,
  queuePosition,
  type Client,
  type Logger,
  type Stat,
  type WaitOptions,
  type WaitScope,
} from '@tenure/client';
import { validatePath } from '@tenure/protocol';
import { Holdings, type Lease } from './lease.js';
import { joinQueue, type Decision, type QueueSpec } from './lock-queue.js';

/** kazoo's `Lock._NODE_NAME`: between the contender's uuid and its sequence. */
export const KAZOO_LOCK_NAME = '__lock__';
/** kazoo's contender pattern (`_contenders_re` for a plain Lock); group 1 is the sequence. */
export const KAZOO_CONTENDER = /__lock__(-?\d{10})$/;

export interface KazooLockOptions {
  /** kazoo's `identifier`: our node's data, what `contenders()` lists. Default empty. */
  identifier?: string;
  /** pino-compatible; default a child of the client's logger. */
  logger?: Logger;
}

export interface KazooAcquireOptions extends WaitOptions {
  /** As for Mutex: a lease that ends by itself keeps its node until release(). */
  keepNodeUntilRelease?: boolean;
}

/** kazoo's contenders among `children`, in lock order (the first holds the lock). */
export function kazooContenders(children: readonly string[]): string[] {
  return children
    .map((name) => ({ name, seq: KAZOO_CONTENDER.exec(name)?.[1] }))
    .filter((c): c is { name: string; seq: string } => c.seq !== undefined)
    .sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0))
    .map((c) => c.name);
}

/** A random uuid4 as 32 hex digits (Python's `uuid.uuid4().hex`). */
export function uuidHex(): string {
  return globalThis.crypto.randomUUID().replaceAll('-', '');
}

export class KazooLock implements AsyncDisposable {
  /** The lock's path (the parent of the lock nodes). */
  readonly path: string;
  readonly identifier: string;
  private readonly holdings = new Holdings();
  private readonly scopes = new Set<WaitScope>();
  private readonly logger: Logger;
  private isClosed = false;

  constructor(
    readonly client: Client,
    path: string,
    options: KazooLockOptions = {},
  ) {
    this.path = validatePath(path);
    this.identifier = options.identifier ?? '';
    this.logger = options.logger ?? client.childLogger({ recipe: 'kazooLock', path: this.path });
  }

  /**
   * Waits for the lock (kazoo's blocking `acquire()`). Rejects with TimeoutError after
   * `timeoutMs`, AbortError when `signal` aborts, ClosedError when the client or this lock
   * closes; our node is deleted in each case.
   */
  async acquire(options: KazooAcquireOptions = {}): Promise<Lease> {
    if (this.isClosed) throw new ClosedError(`lock ${this.path}`);
    const scope = this.client.waitScope(options, `acquire ${this.path}`);
    this.scopes.add(scope);
    try {
      return await this.holdings.acquire(undefined, scope, () => joinQueue(this.client, this.spec(options), scope));
    } finally {
      scope.dispose();
      this.scopes.delete(scope);
    }
  }

  /** The identifiers of the contenders in lock order (kazoo's `contenders()`); the first holds it. */
  async contenders(): Promise<string[]> {
    const out: string[] = [];
    for (const node of await this.participantNodes()) {
      try {
        out.push((await this.client.getData(node)).data.toString('utf8'));
      } catch (err) {
        if (!(err instanceof NoNodeError)) throw err;
      }
    }
    return out;
  }

  /** The lock's contender nodes in lock order (full paths). */
  async participantNodes(): Promise<string[]> {
    try {
      const { children } = await this.client.getChildren(this.path);
      return kazooContenders(children).map((n) => `${this.path}/${n}`);
    } catch (err) {
      if (err instanceof NoNodeError) return [];
      throw err;
    }
  }

  /** Whether this object holds the lock now. */
  isAcquiredInThisProcess(): boolean {
    return this.holdings.all.length > 0;
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

  /** One node's queue spec: a fresh uuid, kazoo's create and kazoo's order. */
  private spec(options: KazooAcquireOptions): QueueSpec {
    const prefix = uuidHex() + KAZOO_LOCK_NAME;
    const discarded = new Set<string>();
    const decide = (sorted: readonly string[], ourName: string): Decision => {
      const queue: string[] = [];
      for (const name of sorted) {
        if (!KAZOO_CONTENDER.test(name)) continue;
        if (name !== ourName && name.startsWith(prefix)) {
          // A duplicate of ours, left by a retried create whose first reply was lost.
          if (!discarded.has(name)) {
            discarded.add(name);
            this.client.delete(`${this.path}/${name}`, { guaranteed: true }).catch(() => {});
          }
          continue;
        }
        queue.push(name);
      }
      const position = queuePosition(queue, ourName)!;
      return position.granted ? { granted: true } : { granted: false, watch: position.watch };
    };
    return {
      basePath: this.path,
      lockName: KAZOO_LOCK_NAME,
      data: this.identifier,
      // Non-contenders sort last and are dropped by decide's queue position (ours is always a contender).
      sortKey: (name) => KAZOO_CONTENDER.exec(name)?.[1] ?? '\uffff' + name,
      decide,
      logger: this.logger,
      held: { keepNodeUntilRelease: options.keepNodeUntilRelease === true },
      create: (scope) => createKazooNode(this.client, this.path, prefix, this.identifier, scope, this.logger),
    };
  }
}

/** Creates `<base>/<prefix><seq>`; a failure without a definite answer deletes what may have landed. */
async function createKazooNode(
  client: Client,
  base: string,
  prefix: string,
  data: string,
  scope: WaitScope,
  logger: Logger,
): Promise<{ path: string; stat: Stat }> {
  try {
    return await client.create(`${base}/${prefix}`, data, {
      mode: CreateMode.EPHEMERAL_SEQUENTIAL,
      createParents: true,
      signal: scope.signal,
    });
  } catch (err) {
    const unknown = !(err instanceof KeeperError) || isRetryableError(err);
    if (unknown && !client.closed) {
      void deleteByPrefix(client, base, prefix).catch((e: unknown) =>
        logger.debug({ err: e, base, prefix }, 'clean-up after a failed create'),
      );
    }
    throw err;
  }
}

async function deleteByPrefix(client: Client, base: string, prefix: string): Promise<void> {
  const { children } = await client.getChildren(base);
  for (const name of children) {
    if (name.startsWith(prefix)) await client.delete(`${base}/${name}`, { guaranteed: true }).catch(() => {});
  }
}
