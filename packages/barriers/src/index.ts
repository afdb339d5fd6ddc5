/**
 * @tenure/barriers: Curator-compatible barriers. DistributedBarrier holds waiters until its node is
 * removed; DoubleBarrier lets members enter together and leave together, and reports a member
 * whose session ended inside (MemberLostError) instead of passing as if it had left.
 */
export { DistributedBarrier } from './distributed-barrier.js';
export { DoubleBarrier } from './double-barrier.js';
export { MemberLostError } from './errors.js';
export { INSIDE as MEMBER_INSIDE_DATA, LEFT as MEMBER_LEFT_DATA } from './roll-call.js';
// The wait options and errors, so that one import suffices.
export { TimeoutError, AbortError, ClosedError, type WaitOptions } from '@tenure/client';
