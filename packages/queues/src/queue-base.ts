/**
 * Curator's DistributedQueue protocol, shared by the FIFO, priority, delay and id queues:
 *
 * - `start()` creates `<path>` (PERSISTENT, parents as containers) and `<lockPath>` if given.
 * - A put creates `<path>/<name><10-digit seq>` PERSISTENT_SEQUENTIAL holding an ItemSerializer
 *   frame (item-frame.ts); the name is the queue's (`queue-`, or the priority, delay or id form).
 *   With `maxItems`, a put first waits while `<path>` has that many children (foreign ones count).
 * - A consumer keeps one children watch (children-watch.ts) and walks one sorted listing at a time
 *   (queue-cursor.ts), taking each item at most once or at least once (item-claim.ts). Items are
 *   handed to the consumer one after another, in order. Names not starting with `queue-` are skipped.
 *   An item skipped because another consumer holds its lock is watched through that lock node, so
 *   it is taken as soon as the lock goes (Curator waits for the next change of the children).
 * - Without a consumer the queue is an async iterator of its items.
 * - `close()` stops the consumer (its signal aborts), releases item locks still held (their items
 *   stay), and removes the watch: nothing of ours is left on the server or in the process.
 */
import {
  InvalidArgumentError,
  IllegalStateError,
  ClosedError,
  CreateMode,
  NodeExistsError,
  RecipeLifecycle,
  RetryPacer,
  triageFailure,
  type Client,
  type RecipeState,
  type Logger,
  type WaitOptions,
  type WaitScope,
  type WatchCallback,
} from '@tenure/client';
import { ChildrenWatch } from './children-watch.js';
import { claimAtMostOnce, claimLocked, type Claim, type ClaimContext, type Outcome } from './item-claim.js';
import { encodeFrame } from './item-frame.js';
import { QueueCursor, type QueueOrder } from './queue-cursor.js';
import { itemChannel, type QueueItemMessage } from './diagnostics.js';

/** A claim with its item's node path (for the item channel). */
type NamedClaim = Claim & { path: string };

/** Turns items into a node's bytes and back (Curator's QueueSerializer). */
export interface QueueSerializer<T> {
  serialize(item: T): Buffer;
  deserialize(bytes: Buffer): T;
}

/** Buffers in, Buffers out: the default serializer. */
export const bufferSerializer: QueueSerializer<Buffer> = {
  serialize: (item) => item,
  deserialize: (bytes) => Buffer.from(bytes),
};

export interface ConsumerContext {
  /** Aborts when the queue or its client closes: stop, and the item is treated as not consumed. */
  signal: AbortSignal;
}

/** Handles one item. Without `lockPath` the item is already deleted; with it, it is deleted once this resolves. */
export type QueueConsumer<T> = (item: T, context: ConsumerContext) => Promise<void>;

/** What happens to an item whose consumer rejects (only with `lockPath`): Curator's ErrorMode. */
export type ErrorMode = 'requeue' | 'delete';

export interface QueueOptions<T> {
  /** Default: Buffer in, Buffer out. */
  serializer?: QueueSerializer<T>;
  /** Takes the items, one after another. Without one, iterate the queue (`for await`). */
  consumer?: QueueConsumer<T>;
  /** Lock-safe (at-least-once) consumption through `<lockPath>/<item name>` EPHEMERAL nodes. */
  lockPath?: string;
  /** With `lockPath`: 'requeue' (default) puts a failed item back, in one transaction; 'delete' drops it. */
  errorMode?: ErrorMode;
  /** `put` waits while the queue node has this many children (a soft limit, as in Curator). */
  maxItems?: number;
  /** Default: a child of the client's logger. */
  logger?: Logger;
}

export abstract class QueueBase<T> implements AsyncIterable<T>, AsyncDisposable {
  /** A tracking view: every watch of the queue goes through it and is removed at close. */
  protected readonly client: Client;
  protected readonly logger: Logger;
  private readonly serializer: QueueSerializer<T>;
  private readonly options: QueueOptions<T>;
  private readonly watch: ChildrenWatch;
  private readonly closing = new AbortController();
  private readonly claims = new Set<Claim>();
  private readonly life: RecipeLifecycle;
  /** Paces the consumer's retries after a failure (the client's retry policy). */
  private readonly pacer: RetryPacer;
  private consuming: Promise<void> | null = null;

  protected constructor(
    client: Client,
    /** The queue node. */
    readonly path: string,
    options: QueueOptions<T>,
    private readonly order: QueueOrder,
    recipe: string,
  ) {
    if (options.errorMode !== undefined && options.lockPath === undefined)
      throw new InvalidArgumentError(`${recipe} ${path}: errorMode needs a lockPath`);
    if (options.maxItems !== undefined && !(Number.isInteger(options.maxItems) && options.maxItems > 0)) {
      throw new InvalidArgumentError(`${recipe} ${path}: maxItems must be a positive integer, got ${options.maxItems}`);
    }
    this.client = client.trackingWatches();
    this.logger = options.logger ?? client.childLogger({ recipe, path });
    this.serializer = options.serializer ?? (bufferSerializer as unknown as QueueSerializer<T>);
    this.options = options;
    this.life = new RecipeLifecycle(`${recipe} ${path}`);
    this.pacer = new RetryPacer(client);
    this.watch = new ChildrenWatch(this.client, path, () => this.ensure(path));
  }

  /** Creates the queue node (and the lock node), then starts the consumer, if there is one. */
  start(): Promise<void> {
    return this.life.start(async () => {
      await this.ensure(this.path);
      if (this.options.lockPath !== undefined) await this.ensure(this.options.lockPath);
      const consumer = this.options.consumer;
      if (consumer && this.life.isStarted) this.consuming = this.consume(consumer);
    });
  }

  /** `'latent'` before start(), `'started'`, then `'closed'` (the recipe lifecycle). */
  get state(): RecipeState {
    return this.life.state;
  }

  /**
   * The queue's items, taken one by one as the loop asks for them (only without a consumer). With
   * `lockPath`, an item is deleted when the loop asks for the next one; a loop that breaks or throws
   * in the middle of an item leaves it in the queue. Ends when the queue closes.
   */
  async *items(options: { signal?: AbortSignal } = {}): AsyncGenerator<T, void, undefined> {
    if (this.options.consumer) throw new IllegalStateError(`queue ${this.path} has a consumer; it cannot also be iterated`);
    this.checkStarted('items');
    const signal = options.signal ? AbortSignal.any([this.closing.signal, options.signal]) : this.closing.signal;
    using scope = this.client.waitScope({ signal }, `queue ${this.path} items`);
    const cursor = new QueueCursor(this.client, this.watch, this.order);
    for (;;) {
      let claim: NamedClaim | null;
      try {
        claim = await this.claimNext(cursor, scope);
      } catch (err) {
        if (this.closing.signal.aborted) return;
        throw err;
      }
      if (claim === null) continue;
      let outcome: Outcome = 'stopped';
      try {
        for (const [index, record] of claim.records.entries()) {
          if (!itemChannel.hasSubscribers) {
            yield this.serializer.deserialize(record);
            continue;
          }
          // The loop's body runs between the yield and the next call: published as tracePromise would.
          const message: QueueItemMessage = { queue: this.path, node: claim.path, index, via: 'iterator' };
          itemChannel.start.publish(message);
          itemChannel.end.publish(message);
          try {
            yield this.serializer.deserialize(record);
          } finally {
            itemChannel.asyncStart.publish(message);
            itemChannel.asyncEnd.publish(message);
          }
        }
        outcome = 'done';
      } finally {
        this.claims.delete(claim);
        await claim.settle(outcome);
      }
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this.items();
  }

  /** Stops the consumer, gives back item locks still held and removes the queue's watch. */
  close(): Promise<void> {
    return this.life.close(async () => {
      this.closing.abort(new ClosedError(`queue ${this.path}`));
      await this.consuming;
      await Promise.all([...this.claims].map((c) => c.settle('stopped').catch(() => {})));
      this.watch.close();
      await this.client.removeAllWatches();
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Puts `items` into one node named `<path>/<name><seq>`; returns its path. */
  protected async putFrame(name: string, items: readonly T[], options: WaitOptions | undefined, what: string): Promise<string> {
    this.checkStarted(what);
    const data = encodeFrame(items.map((item) => this.serializer.serialize(item)));
    const mode = CreateMode.PERSISTENT_SEQUENTIAL;
    if (this.options.maxItems === undefined && options?.timeoutMs === undefined) {
      return (await this.client.create(`${this.path}/${name}`, data, { mode, signal: options?.signal })).path;
    }
    using scope = this.client.waitScope(joinClosing(options, this.closing.signal), `${what} on ${this.path}`);
    if (this.options.maxItems !== undefined) await this.waitForRoom(this.options.maxItems, scope);
    scope.check();
    return (await this.client.create(`${this.path}/${name}`, data, { mode, signal: scope.signal })).path;
  }

  /** The name a failed item is re-queued under (Curator's makeRequeueItemPath). */
  protected requeueName(_itemName: string): string {
    return 'queue-';
  }

  /** The lock node directory, when consumption is lock-safe. */
  protected get lockPath(): string | undefined {
    return this.options.lockPath;
  }

  protected checkStarted(what: string): void {
    if (this.life.isClosed) throw new ClosedError(`queue ${this.path}`);
    this.life.requireStarted(what);
  }

  private async consume(consumer: QueueConsumer<T>): Promise<void> {
    using scope = this.client.waitScope({ signal: this.closing.signal }, `queue ${this.path} consumer`);
    const cursor = new QueueCursor(this.client, this.watch, this.order);
    while (!scope.aborted) {
      try {
        const claim = await this.claimNext(cursor, scope);
        if (claim !== null) await this.deliver(claim, consumer, scope.signal);
        this.pacer.succeeded();
      } catch (err) {
        if (scope.aborted) break;
        const verdict = triageFailure(err, this.client.closedSignal);
        if (verdict === 'closed') break;
        if (verdict === 'stop') {
          // The kit's NoAuth rule: not retried; the consumer stops (close() still releases everything).
          this.logger.error({ err }, 'queue consumer refused (NoAuth); it stops');
          break;
        }
        this.logger.warn({ err }, 'queue consumer failed; trying again');
        cursor.reset();
        await this.pacer.pause(scope.signal);
      }
    }
  }

  /** The next item, claimed; null when another consumer won it. */
  private async claimNext(cursor: QueueCursor, scope: WaitScope): Promise<NamedClaim | null> {
    const name = (await cursor.next(scope))!;
    const cx: ClaimContext = {
      client: this.client,
      logger: this.logger,
      requeuePath: (n) => `${this.path}/${this.requeueName(n)}`,
      heldElsewhere: (lockNode) => this.watchLock(lockNode),
    };
    const itemPath = `${this.path}/${name}`;
    const lockPath = this.options.lockPath;
    const taken = lockPath === undefined ? await claimAtMostOnce(cx, itemPath) : await claimLocked(cx, itemPath, `${lockPath}/${name}`);
    cursor.advance(name);
    const claim = taken && { ...taken, path: itemPath };
    if (claim !== null) this.claims.add(claim);
    return claim;
  }

  private async deliver(claim: NamedClaim, consumer: QueueConsumer<T>, signal: AbortSignal): Promise<void> {
    let outcome: Outcome = 'done';
    try {
      for (const [index, record] of claim.records.entries()) {
        try {
          const item = this.serializer.deserialize(record);
          if (!itemChannel.hasSubscribers) await consumer(item, { signal });
          else
            await itemChannel.tracePromise(() => consumer(item, { signal }), {
              queue: this.path,
              node: claim.path,
              index,
              via: 'consumer',
            });
        } catch (err) {
          if (signal.aborted) {
            outcome = 'stopped';
            break;
          }
          this.logger.error({ err }, 'queue consumer rejected an item');
          if (this.options.lockPath !== undefined && this.options.errorMode !== 'delete') {
            outcome = 'failed';
            break;
          }
        }
      }
    } finally {
      this.claims.delete(claim);
      await claim.settle(outcome);
    }
  }

  /**
   * Beyond Curator, whose consumers look at a skipped item again only when the queue's children
   * change: a getData watch on the lock node of an item another consumer holds, so that its release
   * (or its holder's death) wakes our consumers at once. getData leaves no watch when it is gone.
   */
  private watchLock(lockNode: string): void {
    this.client.getData(lockNode, { watch: this.onLockGone }).then(
      () => {},
      () => this.watch.poke(),
    );
  }

  private readonly onLockGone: WatchCallback = (event) => {
    if (event.type === 'NodeDeleted') this.watch.poke();
  };

  /** Waits until `<path>` has fewer than `maxItems` children (the count from exists; the watch only while full). */
  private async waitForRoom(maxItems: number, scope: WaitScope): Promise<void> {
    for (;;) {
      const stat = await this.client.exists(this.path, { signal: scope.signal });
      if (stat === null || stat.numChildren < maxItems) return;
      const version = this.watch.version;
      if ((await this.watch.list(scope.signal)).stat.numChildren < maxItems) return;
      await this.watch.changedSince(version, scope);
    }
  }

  private async ensure(path: string): Promise<void> {
    try {
      // Made by us or anyone, it exists: a lost reply's NodeExists will do.
      await this.client.create(path, null, { createParentContainers: true, retryAmbiguousWrites: 'raw' });
    } catch (err) {
      if (!(err instanceof NodeExistsError)) throw err;
    }
  }
}

/** Curator's lexicographic order over `queue-` children (FIFO for plain names); foreign nodes left out. */
export function queueChildren(children: readonly string[]): string[] {
  return children.filter((c) => c.startsWith('queue-')).sort();
}

function joinClosing(options: WaitOptions | undefined, closing: AbortSignal): WaitOptions {
  return { timeoutMs: options?.timeoutMs, signal: options?.signal ? AbortSignal.any([closing, options.signal]) : closing };
}
