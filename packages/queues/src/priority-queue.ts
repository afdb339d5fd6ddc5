/**
 * DistributedPriorityQueue (Curator's): items in `<path>/queue-<S><8 hex><seq>`, where S is 1 for
 * a priority >= 0 and 0 below, and the hex is the priority's 32-bit two's complement, uppercase.
 * The names then sort lower priorities first, FIFO within one. While taking a batch, the consumer
 * lists again after `minItemsBeforeRefresh` items once the children have changed, so a new urgent
 * item is seen (Curator's refreshOnWatch). A re-queued item goes under plain `queue-`, which sorts
 * ahead of every prioritised item, as in Curator.
 */
import type { Client, WaitOptions } from '@tenure/client';
import { QueueBase, queueChildren, type QueueOptions } from './queue-base.js';
import { InvalidArgumentError } from '@tenure/client';

export interface PriorityQueueOptions<T> extends QueueOptions<T> {
  /** Items taken from a listing before a changed queue is listed again. Default 100. */
  minItemsBeforeRefresh?: number;
}

/** The requested node name for `priority` (ZooKeeper appends the sequence). */
export function priorityName(priority: number): string {
  if (!Number.isInteger(priority) || priority < -0x80000000 || priority > 0x7fffffff) {
    throw new InvalidArgumentError(`priority must be a 32-bit integer, got ${priority}`);
  }
  return `queue-${priority >= 0 ? '1' : '0'}${(priority >>> 0).toString(16).toUpperCase().padStart(8, '0')}`;
}

/**
 * A distributed queue taken in priority order, lower numbers first.
 *
 * | node | mode | data |
 * |---|---|---|
 * | `<path>/queue-<S><8 hex digits><seq>` | PERSISTENT_SEQUENTIAL | ItemSerializer frame |
 * | `<lockPath>/<item name>` (with `lockPath`) | EPHEMERAL | empty |
 */
export class DistributedPriorityQueue<T = Buffer> extends QueueBase<T> {
  constructor(client: Client, path: string, options: PriorityQueueOptions<T> = {}) {
    const refreshAfter = options.minItemsBeforeRefresh ?? 100;
    super(client, path, options, { sort: queueChildren, refreshAfter }, 'DistributedPriorityQueue');
  }

  /** Adds `item` with `priority` (a 32-bit integer; lower is taken first). */
  put(item: T, priority: number, options?: WaitOptions): Promise<string> {
    return this.putFrame(priorityName(priority), [item], options, 'put');
  }

  /** Adds `items` in one node with one priority. */
  putMulti(items: readonly T[], priority: number, options?: WaitOptions): Promise<string> {
    return this.putFrame(priorityName(priority), items, options, 'putMulti');
  }
}
