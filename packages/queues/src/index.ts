/**
 * @tenure/queues: Curator-compatible distributed queues. Node names and bytes are Curator 5.4's,
 * so Java and Node producers and consumers can share a queue.
 */
export { DistributedQueue } from './distributed-queue.js';
export { DistributedPriorityQueue, priorityName, type PriorityQueueOptions } from './priority-queue.js';
export { DistributedDelayQueue, delayName, epochOf, type DelayQueueOptions } from './delay-queue.js';
export { DistributedIdQueue, idOf } from './id-queue.js';
export { SimpleDistributedQueue, NoSuchElementError } from './simple-queue.js';
export {
  bufferSerializer,
  type QueueBase,
  type QueueOptions,
  type QueueSerializer,
  type QueueConsumer,
  type ConsumerContext,
  type ErrorMode,
} from './queue-base.js';
export { ITEM_CHANNEL, itemChannel, type QueueItemMessage } from './diagnostics.js';
export { encodeFrame, decodeFrame, CorruptItemError } from './item-frame.js';
// The wait errors, so that one import suffices.
export { TimeoutError, AbortError, ClosedError } from '@tenure/client';
