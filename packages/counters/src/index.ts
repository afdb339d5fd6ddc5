/**
 * @tenure/counters: Curator-compatible SharedValue, SharedCount, AtomicLong and AtomicInteger.
 * Same nodes, same bytes as Curator 5.4, so Java and Node services share one counter. Updates
 * never guess: `succeeded: false` means nothing was written, and a write lost with its connection
 * is either proven not to have landed (and retried) or reported as an OutcomeUnknownError.
 */
export { SharedValue, SharedCount } from './shared-value.js';
export type { VersionedValue, SharedValueEvents, SharedNode } from './shared-node.js';
export { AtomicLong, AtomicInteger } from './atomic-numbers.js';
export type { AtomicResult, AtomicStats, AtomicOptions, PromotedToLock } from './atomic-value.js';
export { conflictRetryPolicy, DEFAULT_CONFLICT_RETRIES } from './conflict-retry.js';
export { OutcomeUnknownError, CorruptedValueError } from './errors.js';
// The errors users meet, so that one import suffices.
export { TimeoutError, AbortError, ClosedError } from '@tenure/client';
