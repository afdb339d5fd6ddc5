/**
 * SimpleDistributedQueue (Curator's, after ZooKeeper's own queue recipe): raw bytes, no frame,
 * in `<path>/qn-<seq>` PERSISTENT_SEQUENTIAL nodes under a CONTAINER `<path>`.
 *
 * - `offer` creates an item (parents as containers).
 * - The consumers take the first `qn-` child in name order: getData, then an unversioned delete;
 *   NoNode on either means another consumer won it, so go on to the next. Exactly one caller gets
 *   each item. There is no lock: a consumer that dies after the delete loses the item.
 * - Unlike Curator, which lists the children for every call, an instance walks one listing
 *   (queue-cursor.ts) and lists again only when it is used up and the children have changed, so
 *   taking n items costs O(n) reads. `take` waits on the one children watch.
 * - A listing that finds `<path>` gone (a reaped container) makes it again and lists once more.
 * - `close()` removes the watch.
 */
import {
  ClosedError,
  CreateMode,
  NodeExistsError,
  NoNodeError,
  type Client,
  type WaitOptions,
  type WaitScope,
  TenureError,
} from '@tenure/client';
import { ChildrenWatch } from './children-watch.js';
import { QueueCursor } from './queue-cursor.js';

/** `element()` or `remove()` on an empty queue (Java's NoSuchElementException). */
export class NoSuchElementError extends TenureError {
  override name = 'NoSuchElementError';
  constructor(readonly path = '/') {
    super('NO_SUCH_ELEMENT', `queue ${path} is empty`);
  }
}

const PREFIX = 'qn-';
const sort = (children: readonly string[]): string[] => children.filter((c) => c.startsWith(PREFIX)).sort();

/**
 * A distributed FIFO of byte strings, node for node Curator's SimpleDistributedQueue.
 *
 * | node | mode | data |
 * |---|---|---|
 * | `<path>` | CONTAINER | empty |
 * | `<path>/qn-<seq>` | PERSISTENT_SEQUENTIAL | the item's bytes |
 */
export class SimpleDistributedQueue implements AsyncDisposable {
  private readonly client: Client;
  private readonly watch: ChildrenWatch;
  private readonly cursor: QueueCursor;
  private readonly closing = new AbortController();

  constructor(
    client: Client,
    readonly path: string,
  ) {
    this.client = client.trackingWatches();
    this.watch = new ChildrenWatch(this.client, path, () => this.ensure());
    this.cursor = new QueueCursor(this.client, this.watch, { sort });
  }

  /** Adds `data` at the back; resolves to the item's node path. */
  async offer(data: Buffer | string): Promise<string> {
    this.check();
    return (
      await this.client.create(`${this.path}/${PREFIX}`, data, { mode: CreateMode.PERSISTENT_SEQUENTIAL, createParentContainers: true })
    ).path;
  }

  /** The head's bytes without taking it, or null when the queue is empty. */
  async peek(): Promise<Buffer | null> {
    using scope = this.scope(undefined, 'peek');
    for (;;) {
      const name = await this.cursor.next(scope, false);
      if (name === null) return null;
      try {
        return (await this.client.getData(`${this.path}/${name}`)).data;
      } catch (err) {
        if (!(err instanceof NoNodeError)) throw err;
        this.cursor.advance(name);
      }
    }
  }

  /** The head's bytes without taking it; NoSuchElementError when the queue is empty. */
  async element(): Promise<Buffer> {
    const head = await this.peek();
    if (head === null) throw new NoSuchElementError(this.path);
    return head;
  }

  /** Takes the head, or resolves to null at once when the queue is empty. */
  async poll(): Promise<Buffer | null> {
    using scope = this.scope(undefined, 'poll');
    return this.takeHead(scope, false);
  }

  /** Takes the head; NoSuchElementError when the queue is empty. */
  async remove(): Promise<Buffer> {
    const head = await this.poll();
    if (head === null) throw new NoSuchElementError(this.path);
    return head;
  }

  /** Takes the head, waiting for one; TimeoutError, AbortError or ClosedError when the wait ends first. */
  async take(options?: WaitOptions): Promise<Buffer> {
    using scope = this.scope(options, 'take');
    return (await this.takeHead(scope, true))!;
  }

  /** Removes the watch; calls after this reject with ClosedError. */
  async close(): Promise<void> {
    if (this.closing.signal.aborted) return;
    this.closing.abort(new ClosedError(`queue ${this.path}`));
    this.watch.close();
    await this.client.removeAllWatches();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private async takeHead(scope: WaitScope, wait: boolean): Promise<Buffer | null> {
    for (;;) {
      const name = await this.cursor.next(scope, wait);
      if (name === null) return null;
      const itemPath = `${this.path}/${name}`;
      try {
        const { data } = await this.client.getData(itemPath);
        await this.client.delete(itemPath);
        this.cursor.advance(name);
        return data;
      } catch (err) {
        if (!(err instanceof NoNodeError)) {
          this.cursor.reset();
          throw err;
        }
        this.cursor.advance(name);
      }
    }
  }

  private scope(options: WaitOptions | undefined, what: string): WaitScope {
    this.check();
    const signal = options?.signal ? AbortSignal.any([this.closing.signal, options.signal]) : this.closing.signal;
    return this.client.waitScope({ timeoutMs: options?.timeoutMs, signal }, `${what} on ${this.path}`);
  }

  private check(): void {
    if (this.closing.signal.aborted) throw new ClosedError(`queue ${this.path}`);
  }

  private async ensure(): Promise<void> {
    try {
      await this.client.create(this.path, null, { mode: CreateMode.CONTAINER, createParentContainers: true, retryAmbiguousWrites: 'raw' });
    } catch (err) {
      if (!(err instanceof NodeExistsError)) throw err;
    }
  }
}
