/**
 * The locks' diagnostics channel. `tenure:locks:acquire` is a TracingChannel around every acquire
 * of a Mutex, ReadLock, WriteLock and Semaphore: its start fires in the caller's async context as
 * acquire() is called, its asyncEnd when the lease is granted (or the wait failed), so the events
 * bracket the wait. The granted lease's `signal` aborts when the hold ends (release or loss): a
 * subscriber measures the hold from it. Nothing is published while nobody subscribes.
 */
import { tracingChannelOf } from '@tenure/client';
import type { Lease } from './lease.js';

export const ACQUIRE_CHANNEL = 'tenure:locks:acquire';

/** The message of every `tenure:locks:acquire` event; one object per acquire, filled in as it goes. */
export interface AcquireMessage {
  /** Which lock: a Mutex (and a SemaphoreMutex's gate), a ReadWriteLock's halves, a Semaphore. */
  lock: 'mutex' | 'read' | 'write' | 'semaphore';
  /** The lock's path (the parent of its nodes). */
  path: string;
  /** Leases asked for (a Semaphore's acquire(count); 1 otherwise). */
  count: number;
  /** Once granted: the lease, or a Semaphore's acquire(count) leases. */
  result?: Lease | Lease[];
  /** Once the wait failed (TimeoutError, AbortError, ClosedError, a KeeperError). */
  error?: unknown;
}

export const acquireChannel = tracingChannelOf<AcquireMessage>(ACQUIRE_CHANNEL);

/** Runs `acquire` inside the channel's events when anyone subscribes, else just runs it. */
export function tracedAcquire<T extends Lease | Lease[]>(
  lock: AcquireMessage['lock'],
  path: string,
  count: number,
  acquire: () => Promise<T>,
): Promise<T> {
  if (!acquireChannel.hasSubscribers) return acquire();
  return acquireChannel.tracePromise(acquire, { lock, path, count });
}
