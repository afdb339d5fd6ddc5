/**
 * MultiLock: Curator's InterProcessMultiLock. Takes several locks as one: in the order given, all of
 * them or none (whatever was taken is released, in reverse order, when one fails, times out or is
 * aborted), and releases them in reverse order. Creates no nodes of its own; each lock lays out its
 * own. Give every process the same order, or two MultiLocks can deadlock until their timeouts.
 */
import type { Client, WaitOptions } from '@tenure/client';
import type { Lease } from './lease.js';
import { Mutex } from './mutex.js';
import { InvalidArgumentError, asError } from '@tenure/client';

/** Anything that acquires a lease: Mutex, ReadLock, WriteLock, SemaphoreMutex, Semaphore. */
export interface Lockable {
  acquire(options?: WaitOptions): Promise<Lease>;
}

/** The leases of a MultiLock, held and released together. */
export interface MultiLease extends AsyncDisposable {
  /** One lease per lock, in the order of the locks. */
  readonly leases: readonly Lease[];
  /** Each lock's fencing token, in the order of the locks. */
  readonly fencingTokens: readonly bigint[];
  /** Aborts when any of the leases is no longer safe (the first reason wins). */
  readonly signal: AbortSignal;
  /** True while every lease is held. */
  isHeld(): boolean;
  /** Releases every lease, in reverse order. Idempotent. */
  release(): Promise<void>;
}

export class MultiLock implements AsyncDisposable {
  readonly locks: readonly Lockable[];
  private readonly client: Client;
  private readonly owned: Mutex[] = [];

  /** Mutexes on `paths`, or the given locks (any mix), on one client. */
  constructor(client: Client, locks: ReadonlyArray<string | Lockable>) {
    if (locks.length === 0) throw new InvalidArgumentError('MultiLock needs at least one lock');
    this.client = client;
    this.locks = locks.map((l) => {
      if (typeof l !== 'string') return l;
      const m = new Mutex(client, l);
      this.owned.push(m);
      return m;
    });
  }

  /** Takes every lock, or none. One timeout and one signal cover the whole wait. */
  async acquire(options: WaitOptions = {}): Promise<MultiLease> {
    const scope = this.client.waitScope(options, 'acquire MultiLock');
    const taken: Lease[] = [];
    try {
      for (const lock of this.locks) {
        scope.check();
        taken.push(await lock.acquire({ signal: scope.signal }));
      }
      return new Leases(taken);
    } catch (err) {
      await releaseInReverse(taken).catch(() => {});
      throw scope.aborted ? scope.reason : err;
    } finally {
      scope.dispose();
    }
  }

  /** Closes the mutexes this MultiLock made from paths (locks passed in are the caller's to close). */
  async close(): Promise<void> {
    await Promise.all(this.owned.map((m) => m.close()));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

class Leases implements MultiLease {
  readonly signal: AbortSignal;
  private releasing: Promise<void> | null = null;

  constructor(readonly leases: readonly Lease[]) {
    this.signal = AbortSignal.any(leases.map((l) => l.signal));
  }

  get fencingTokens(): readonly bigint[] {
    return this.leases.map((l) => l.fencingToken);
  }

  isHeld(): boolean {
    return this.releasing === null && this.leases.every((l) => l.isHeld());
  }

  release(): Promise<void> {
    this.releasing ??= releaseInReverse(this.leases);
    return this.releasing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}

/** Releases in reverse order; every release is attempted, the first error is thrown. */
async function releaseInReverse(leases: readonly Lease[]): Promise<void> {
  let first: Error | undefined;
  for (const l of [...leases].reverse()) {
    try {
      await l.release();
    } catch (err) {
      first ??= asError(err);
    }
  }
  if (first !== undefined) throw first;
}
