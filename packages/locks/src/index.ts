/**
 * @tenure/locks: Curator-compatible mutexes, read-write lock, semaphores and multi-lock, with
 * fencing tokens (the czxid of our node) and a signal that says when a lease is no longer safe.
 */
export { Mutex, type MutexOptions, type AcquireOptions, type RevocationListener } from './mutex.js';
export { ReadWriteLock, ReadLock, WriteLock, READ_LOCK_NAME, WRITE_LOCK_NAME } from './read-write-lock.js';
export { Semaphore, type SemaphoreOptions, type LeaseCount } from './semaphore.js';
export { SemaphoreMutex } from './semaphore-mutex.js';
export { MultiLock, type MultiLease, type Lockable } from './multi-lock.js';
export { Revoker, REVOKE_MESSAGE } from './revoker.js';
export type { Lease } from './lease.js';
export {
  KazooLock,
  KAZOO_LOCK_NAME,
  KAZOO_CONTENDER,
  kazooContenders,
  uuidHex,
  type KazooLockOptions,
  type KazooAcquireOptions,
} from './kazoo-lock.js';
export {
  NonBlockingLease,
  MultiNonBlockingLease,
  LeaseFormatError,
  TIMED_LEASE_CHANNEL,
  LEASE_HOLDER_NODE,
  LEASE_RECORD_VERSION,
  decodeLeaseRecord,
  encodeLeaseRecord,
  formatKazooTime,
  parseKazooTime,
  wallClock,
  hostName,
  type LeaseOptions,
  type LeaseResult,
  type LeaseRecord,
  type LeaseAttemptMessage,
} from './non-blocking-lease.js';
export type { WaitOptions } from '@tenure/client';
export { ACQUIRE_CHANNEL, acquireChannel, type AcquireMessage } from './diagnostics.js';
export { LeaseLostError, LockUpgradeError, LeaseCountError, type LeaseEnd } from './errors.js';
// The wait errors, so that one import suffices.
export { TimeoutError, AbortError, ClosedError } from '@tenure/client';
