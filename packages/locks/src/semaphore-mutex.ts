/**
 * SemaphoreMutex: Curator's InterProcessSemaphoreMutex, a Semaphore with one lease.
 *
 * Nodes: `<path>/locks/_c_<uuid>-lock-<seq>` and `<path>/leases/_c_<uuid>-lease-<seq>` (see
 * semaphore.ts). Unlike Mutex it is never reentrant: any second acquire waits for the first lease
 * to be released, whoever asks.
 */
import type { Client, WaitOptions } from '@tenure/client';
import type { Lease } from './lease.js';
import { Semaphore, type SemaphoreOptions } from './semaphore.js';

export class SemaphoreMutex implements AsyncDisposable {
  private readonly semaphore: Semaphore;

  constructor(client: Client, path: string, options: SemaphoreOptions = {}) {
    this.semaphore = new Semaphore(client, path, 1, options);
  }

  get path(): string {
    return this.semaphore.path;
  }

  /** Waits for the lock. Rejects with TimeoutError, AbortError or ClosedError, leaving nothing behind. */
  acquire(options: WaitOptions = {}): Promise<Lease> {
    return this.semaphore.acquire(options);
  }

  /** The lease nodes' names (the holder's and any waiter's). */
  participantNodes(): Promise<string[]> {
    return this.semaphore.participantNodes();
  }

  close(): Promise<void> {
    return this.semaphore.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
