/**
 * The engine of AtomicLong and AtomicInteger: Curator's DistributedAtomicValue, with outcomes that
 * are never guessed.
 *
 * Node: `<path>`, PERSISTENT (parents as containers), created by the first write. Its data is the
 * value in the codec's bytes; a missing or empty node reads as 0.
 *
 * Protocol of an update (increment, add, trySet, ...):
 * 1. Optimistic: getData (no watch), compute the next value, then setData with the version read
 *    (or create, when the node is missing). A conflict (BadVersion, NoNode, NodeExists) tries again
 *    under `retryPolicy` (default conflictRetryPolicy()).
 * 2. If that gave up and `promotedToLock` is set: take a Mutex on `promotedToLock.path` (Curator's
 *    InterProcessMutex layout) within its `timeoutMs`, repeat step 1 under its `retryPolicy`
 *    (default one attempt), release. Writes under the lock are still version-checked, so writers
 *    that skip the lock stay safe.
 * In one process, contenders on a path take turns at their attempts (local-turns.ts): timing only.
 * `succeeded: false` means nothing was written. A write whose connection went in flight is settled
 * by versionedWrite: proven not to have landed (tried again), or an OutcomeUnknownError.
 */
import { ClosedError, NoNodeError, TimeoutError, type Client, type RetryPolicy } from '@tenure/client';
import { Mutex } from '@tenure/locks';
import { decodeOrZero, type FixedCodec } from './codecs.js';
import { ONE_ATTEMPT, conflictRetryPolicy, pause } from './conflict-retry.js';
import { inTurn } from './local-turns.js';
import { ConnectionDrops, versionedWrite, type ReadMark } from './versioned-write.js';

/** What an operation did (Curator's AtomicStats). */
export interface AtomicStats {
  optimisticTries: number;
  promotedLockTries: number;
  optimisticTimeMs: number;
  promotedTimeMs: number;
}

/** The result of every operation (Curator's AtomicValue), as plain fields. */
export interface AtomicResult<T> {
  /** The write was applied (for `get`, the read happened). False: nothing was written. */
  succeeded: boolean;
  /** The value read by the last attempt. */
  preValue: T;
  /** The value written; 0 when nothing was (as in Curator). */
  postValue: T;
  stats: AtomicStats;
}

/** Curator's PromotedToLock: the lock that updates fall back to once optimism gave up. */
export interface PromotedToLock {
  /** The Mutex's path. */
  path: string;
  /** How long to wait for the lock; past it, the update fails (`succeeded: false`). */
  timeoutMs: number;
  /** Attempts under the lock; default exactly one. */
  retryPolicy?: RetryPolicy;
}

export interface AtomicOptions {
  /** How conflicts are retried; default conflictRetryPolicy() (not the client's connection policy). */
  retryPolicy?: RetryPolicy;
  promotedToLock?: PromotedToLock;
  /**
   * This process's contenders on the path take turns at their attempts (default true): sharing an
   * event loop they would step in time and conflict; other processes still race by version.
   */
  localTurns?: boolean;
}

type Attempt<T> = { kind: 'written'; pre: T; post: T } | { kind: 'conflict' | 'not-landed' | 'mismatch'; pre: T };

export class AtomicValue<T> implements AsyncDisposable {
  private readonly retryPolicy: RetryPolicy;
  private readonly drops: ConnectionDrops;
  private mutex: Mutex | undefined;

  constructor(
    readonly client: Client,
    readonly path: string,
    private readonly codec: FixedCodec<T>,
    private readonly options: AtomicOptions = {},
  ) {
    this.retryPolicy = options.retryPolicy ?? conflictRetryPolicy();
    this.drops = new ConnectionDrops(client);
  }

  /** The current value (one getData). */
  async get(): Promise<AtomicResult<T>> {
    const { value } = await this.read();
    return { succeeded: true, preValue: value, postValue: value, stats: newStats() };
  }

  /** Applies `next` to the current value: optimistically, then under the promoted lock. */
  async update(operation: string, next: (current: T) => T): Promise<AtomicResult<T>> {
    const stats = newStats();
    const clock = this.client.clock;
    const attempt = (): Promise<Attempt<T>> => this.writeNext(operation, next);
    let t0 = clock.now();
    let last = await this.loop(this.retryPolicy, true, attempt, () => stats.optimisticTries++);
    stats.optimisticTimeMs = clock.now() - t0;
    const promoted = this.options.promotedToLock;
    if (last.kind !== 'written' && promoted !== undefined) {
      t0 = clock.now();
      last =
        (await this.underLock(promoted, () =>
          this.loop(promoted.retryPolicy ?? ONE_ATTEMPT, true, attempt, () => stats.promotedLockTries++),
        )) ?? last;
      stats.promotedTimeMs = clock.now() - t0;
    }
    return this.result(last, stats);
  }

  /** Writes `next` if the node holds exactly the bytes of `expected`. One attempt; never creates. */
  async compareAndSet(expected: T, next: T): Promise<AtomicResult<T>> {
    const stats = newStats();
    const want = this.codec.encode(expected);
    const bytes = this.codec.encode(next);
    const last = await this.loop(
      this.retryPolicy,
      false,
      async () => {
        const read = await this.read();
        if (read.mark === null || !read.data.equals(want)) return { kind: 'mismatch', pre: read.value };
        return this.write('compareAndSet', read, next, bytes);
      },
      () => stats.optimisticTries++,
    );
    return this.result(last, stats);
  }

  /** Creates the node with `value`; fails if it exists. */
  async initialize(value: T): Promise<AtomicResult<T>> {
    const stats = newStats();
    const bytes = this.codec.encode(value);
    const missing = { mark: null, value: this.codec.zero, data: Buffer.alloc(0) };
    let last = await this.loop(
      this.retryPolicy,
      false,
      () => this.write('initialize', missing, value, bytes),
      () => stats.optimisticTries++,
    );
    if (last.kind !== 'written') last = { kind: last.kind, pre: (await this.read()).value };
    return this.result(last, stats);
  }

  /** Writes `value` whatever the node holds (creating it if missing). */
  async forceSet(value: T): Promise<AtomicResult<T>> {
    const stats = newStats();
    const bytes = this.codec.encode(value);
    const last = await this.loop(
      this.retryPolicy,
      true,
      async () => this.write('forceSet', await this.read(), value, bytes, -1),
      () => stats.optimisticTries++,
    );
    return this.result(last, stats);
  }

  /** Closes the promoted lock and stops listening to the client. */
  async close(): Promise<void> {
    this.drops.close();
    await this.mutex?.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private async writeNext(operation: string, next: (current: T) => T): Promise<Attempt<T>> {
    // In-process contenders take turns: racing each other, they would step in time and conflict.
    const attempt = async (): Promise<Attempt<T>> => {
      const read = await this.read();
      const value = this.codec.check(next(read.value), 'the new value');
      return this.write(operation, read, value, this.codec.encode(value));
    };
    return this.options.localTurns === false ? attempt() : inTurn(this.client, this.path, attempt);
  }

  /** setData with the version read (or `version`), or create when the node was missing. */
  private async write(operation: string, read: Read<T>, value: T, bytes: Buffer, version?: number): Promise<Attempt<T>> {
    const { client, path } = this;
    const mark = read.mark;
    const outcome = await versionedWrite(
      client,
      this.drops,
      path,
      mark,
      () =>
        mark === null
          ? client.create(path, bytes, { createParentContainers: true }).then((r) => r.stat)
          : client.setData(path, bytes, { version: version ?? mark.version }),
      operation,
    );
    return outcome.kind === 'written' ? { kind: 'written', pre: read.value, post: value } : { kind: outcome.kind, pre: read.value };
  }

  /** Attempts until one writes, or `policy` gives up; conflicts are retried only if `retryConflicts`. */
  private async loop(
    policy: RetryPolicy,
    retryConflicts: boolean,
    attempt: () => Promise<Attempt<T>>,
    counted: () => void,
  ): Promise<Attempt<T>> {
    const clock = this.client.clock;
    const startedAt = clock.now();
    for (let retries = 0; ; retries++) {
      if (this.client.closed) throw new ClosedError('client');
      counted();
      const a = await attempt();
      if (a.kind === 'written' || a.kind === 'mismatch' || (a.kind === 'conflict' && !retryConflicts)) return a;
      const sleepMs = policy.allowRetry(retries, clock.now() - startedAt);
      if (sleepMs === false) return a;
      await pause(this.client, sleepMs);
    }
  }

  /** Runs `work` holding the promoted lock; undefined if the lock was not had in time. */
  private async underLock(promoted: PromotedToLock, work: () => Promise<Attempt<T>>): Promise<Attempt<T> | undefined> {
    this.mutex ??= new Mutex(this.client, promoted.path);
    let lease;
    try {
      lease = await this.mutex.acquire({ timeoutMs: promoted.timeoutMs });
    } catch (err) {
      if (err instanceof TimeoutError) return undefined;
      throw err;
    }
    try {
      return await work();
    } finally {
      await lease
        .release()
        .catch((err: unknown) => this.client.logger.warn({ err, path: promoted.path }, 'releasing the promoted lock failed'));
    }
  }

  private async read(): Promise<Read<T>> {
    try {
      const { data, stat } = await this.client.getData(this.path);
      return { mark: { version: stat.version, czxid: stat.czxid }, data, value: decodeOrZero(this.codec, data, this.path) };
    } catch (err) {
      if (err instanceof NoNodeError) return { mark: null, data: Buffer.alloc(0), value: this.codec.zero };
      throw err;
    }
  }

  private result(last: Attempt<T>, stats: AtomicStats): AtomicResult<T> {
    const succeeded = last.kind === 'written';
    return { succeeded, preValue: last.pre, postValue: succeeded ? last.post : this.codec.zero, stats };
  }
}

interface Read<T> {
  mark: ReadMark;
  data: Buffer;
  value: T;
}

const newStats = (): AtomicStats => ({ optimisticTries: 0, promotedLockTries: 0, optimisticTimeMs: 0, promotedTimeMs: 0 });
