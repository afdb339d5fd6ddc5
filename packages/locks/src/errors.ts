/**
 * The locks' own errors. Waits also reject with the protocol's TimeoutError, AbortError and
 * ClosedError, and server answers keep their KeeperError subclasses.
 */
import { TenureError } from '@tenure/client';

/** Why a lease stopped being safe (the `reason` of `lease.signal`). */
export type LeaseEnd =
  /** The holder called release(). */
  | 'released'
  /** The connection was suspended and the client's errorPolicy is `standard`. */
  | 'suspended'
  /** The session ended (LOST): its ephemeral node is gone or about to go. */
  | 'lost'
  /** Our lock node was deleted by someone else. */
  | 'deleted'
  /** Our lock node no longer belongs to the current session. */
  | 'not-owner'
  /** The client or the lock was closed. */
  | 'closed';

/**
 * The reason of an aborted `lease.signal`: the lease ended and the work it guarded must stop.
 * `end` says why. A lease ended by anything but `released` was lost, not given up.
 */
export class LeaseLostError extends TenureError {
  override name = 'LeaseLostError';
  constructor(
    readonly path = '/',
    readonly end: LeaseEnd = 'lost',
  ) {
    super('LEASE_LOST', end === 'released' ? `the lease on ${path} was released` : `the lease on ${path} is no longer safe (${end})`);
  }
}

/** A holder of a read lock asked for the write lock of the same ReadWriteLock: refused, as it could never be granted. */
export class LockUpgradeError extends TenureError {
  override name = 'LockUpgradeError';
  constructor(readonly path = '/') {
    super('LOCK_UPGRADE', `${path}: cannot upgrade a read lock to a write lock (release the read lock first)`);
  }
}

/** A semaphore was asked for more leases than it can ever grant. */
export class LeaseCountError extends TenureError {
  override name = 'LeaseCountError';
  constructor(
    readonly path = '/',
    readonly requested = 2,
    readonly maxLeases = 1,
  ) {
    super('LEASE_COUNT', `${path}: cannot acquire ${requested} leases of a semaphore with ${maxLeases}`);
  }
}
