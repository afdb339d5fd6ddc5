/**
 * DistributedQueue (Curator's DistributedQueue): a FIFO of items in `<path>/queue-<seq>` nodes.
 * The protocol is queue-base.ts's; the order is the names' (the sequence), and a failed item is
 * re-queued at the back.
 */
import type { Client, WaitOptions } from '@tenure/client';
import { QueueBase, queueChildren, type QueueOptions } from './queue-base.js';

/**
 * A distributed FIFO queue, node for node and byte for byte Curator's, so Java and Node producers
 * and consumers can share it.
 *
 * | node | mode | data |
 * |---|---|---|
 * | `<path>` | PERSISTENT (parents containers) | empty |
 * | `<path>/queue-<seq>` | PERSISTENT_SEQUENTIAL | ItemSerializer frame |
 * | `<lockPath>/queue-<seq>` (with `lockPath`) | EPHEMERAL | empty |
 */
export class DistributedQueue<T = Buffer> extends QueueBase<T> {
  constructor(client: Client, path: string, options: QueueOptions<T> = {}) {
    super(client, path, options, { sort: queueChildren }, 'DistributedQueue');
  }

  /** Adds `item` at the back; with `maxItems`, waits while the queue is full. Resolves to the item's node path. */
  put(item: T, options?: WaitOptions): Promise<string> {
    return this.putFrame('queue-', [item], options, 'put');
  }

  /** Adds `items` in one node (Curator's MultiItem); consumers get them one by one, in order. */
  putMulti(items: readonly T[], options?: WaitOptions): Promise<string> {
    return this.putFrame('queue-', items, options, 'putMulti');
  }
}
