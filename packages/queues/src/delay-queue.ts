/**
 * DistributedDelayQueue (Curator's): items in `<path>/queue-|<epoch ms, uppercase hex, >= 8
 * digits>|<seq>`. Consumers order by the epoch (ties by sequence) and take an item only once its
 * time has come; with nothing due they wait for a change of the children or the first due time (a
 * timer on the client's clock, cleared when the wait ends). A name without two `|` is due at once,
 * as is a re-queued item (plain `queue-`), as in Curator.
 */
import type { Client, WaitOptions } from '@tenure/client';
import { QueueBase, type QueueOptions } from './queue-base.js';
import { InvalidArgumentError } from '@tenure/client';

export interface DelayQueueOptions<T> extends QueueOptions<T> {
  /** The wall clock in epoch milliseconds, which the delays are in. Default Date.now. */
  now?: () => number;
}

/** The requested node name for an item due at `epochMs`. */
export function delayName(epochMs: number): string {
  if (!Number.isSafeInteger(epochMs) || epochMs <= 0)
    throw new InvalidArgumentError(`delayUntilEpochMs must be a positive integer, got ${epochMs}`);
  return `queue-|${epochMs.toString(16).toUpperCase().padStart(8, '0')}|`;
}

/** The epoch an item is due at (Curator's getEpoch: the hex between the last two `|`; 0 if none). */
export function epochOf(name: string): number {
  const end = name.lastIndexOf('|');
  const start = end > 0 ? name.lastIndexOf('|', end - 1) : -1;
  if (start < 0) return 0;
  const hex = name.slice(start + 1, end);
  return /^[0-9a-fA-F]+$/.test(hex) ? parseInt(hex, 16) : 0;
}

const sequenceOf = (name: string): string => name.slice(-10);

/**
 * A distributed queue whose items are taken no earlier than their due time.
 *
 * | node | mode | data |
 * |---|---|---|
 * | `<path>/queue-\|<epoch hex>\|<seq>` | PERSISTENT_SEQUENTIAL | ItemSerializer frame |
 * | `<lockPath>/<item name>` (with `lockPath`) | EPHEMERAL | empty |
 */
export class DistributedDelayQueue<T = Buffer> extends QueueBase<T> {
  constructor(client: Client, path: string, options: DelayQueueOptions<T> = {}) {
    const now = options.now ?? Date.now;
    const sort = (children: readonly string[]): string[] =>
      children
        .filter((c) => c.startsWith('queue-'))
        .map((name) => ({ name, epoch: epochOf(name) }))
        .sort((a, b) => a.epoch - b.epoch || (sequenceOf(a.name) < sequenceOf(b.name) ? -1 : 1))
        .map((e) => e.name);
    super(client, path, options, { sort, dueInMs: (name) => epochOf(name) - now() }, 'DistributedDelayQueue');
  }

  /** Adds `item`, to be taken no earlier than `delayUntilEpochMs` (epoch milliseconds, > 0). */
  put(item: T, delayUntilEpochMs: number, options?: WaitOptions): Promise<string> {
    return this.putFrame(delayName(delayUntilEpochMs), [item], options, 'put');
  }

  /** Adds `items` in one node, all due at `delayUntilEpochMs`. */
  putMulti(items: readonly T[], delayUntilEpochMs: number, options?: WaitOptions): Promise<string> {
    return this.putFrame(delayName(delayUntilEpochMs), items, options, 'putMulti');
  }
}
