/**
 * The queues' diagnostics channel. `tenure:queues:item` is a TracingChannel around the handling of
 * each item taken from a queue: a consumer's call (start as it is called, asyncEnd as it settles,
 * with `error` when it rejects), or, for `items()`, from the yield until the loop asks for the
 * next item (or leaves). Nothing is published while nobody subscribes.
 */
import { tracingChannelOf } from '@tenure/client';

export const ITEM_CHANNEL = 'tenure:queues:item';

/** The message of every `tenure:queues:item` event; one object per item. */
export interface QueueItemMessage {
  /** The queue's path. */
  queue: string;
  /** The item's node (a node of a multi-item put holds several items: `index` tells them apart). */
  node: string;
  index: number;
  /** 'consumer': the queue's consumer; 'iterator': a loop over `items()`. */
  via: 'consumer' | 'iterator';
  /** Once the consumer rejected (the queue's errorMode decides what becomes of the item). */
  error?: unknown;
}

export const itemChannel = tracingChannelOf<QueueItemMessage>(ITEM_CHANNEL);
