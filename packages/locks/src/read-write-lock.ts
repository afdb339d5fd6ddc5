/**
 * ReadWriteLock: Curator's InterProcessReadWriteLock, node for node.
 *
 * Nodes, all in one queue under `<path>`: `_c_<uuid>-__WRIT__<seq>` for writers and
 * `_c_<uuid>-__READ__<seq>` for readers, EPHEMERAL_SEQUENTIAL, protected, under container parents.
 * Both names have the same length and sort by the sequence after them.
 *
 * - A writer holds the lock when its node is first of all; otherwise it watches its immediate
 *   predecessor (reader or writer).
 * - A reader holds the lock when no writer's node is ahead of it; otherwise it watches the first
 *   writer ahead of it. Readers never block readers.
 * - Downgrade: the holder of the write lock may take the read lock (same `owner`). Its read node is
 *   created EPHEMERAL with the writer's sequence (Curator's layout), and is granted at once; once
 *   the write lease is released, the read lease still holds every later writer back.
 * - Upgrade (a read holder asking for the write lock) is refused with LockUpgradeError: the writer
 *   would wait for its own reader forever.
 *
 * Downgrade and upgrade are recognised through the explicit `owner` of acquire(), the same value
 * that makes these locks reentrant. Each lease has its own node and its own czxid token.
 */
import { sequenceAfter, type Client } from '@tenure/client';
import { LockUpgradeError } from './errors.js';
import type { Decision } from './lock-queue.js';
import { Mutex, type MutexOptions } from './mutex.js';

/** Curator's names; they must have the same length. */
export const READ_LOCK_NAME = '__READ__';
export const WRITE_LOCK_NAME = '__WRIT__';

function readWriteSortKey(name: string): string {
  return sequenceAfter(sequenceAfter(name, READ_LOCK_NAME), WRITE_LOCK_NAME);
}

export class WriteLock extends Mutex {
  /** @internal */
  constructor(
    client: Client,
    path: string,
    options: MutexOptions,
    private readonly rw: ReadWriteLock,
  ) {
    super(client, path, options, WRITE_LOCK_NAME);
  }

  protected override sortKey(name: string): string {
    return readWriteSortKey(name);
  }

  protected override beforeAcquire(owner: unknown): void {
    if (owner !== undefined && this.rw.readLock.heldBy(owner) && !this.heldBy(owner)) throw new LockUpgradeError(this.path);
  }
}

export class ReadLock extends Mutex {
  /** @internal */
  constructor(
    client: Client,
    path: string,
    options: MutexOptions,
    private readonly rw: ReadWriteLock,
  ) {
    super(client, path, options, READ_LOCK_NAME);
  }

  protected override sortKey(name: string): string {
    return readWriteSortKey(name);
  }

  protected override decide(sorted: readonly string[], ourName: string, owner: unknown): Decision {
    if (this.writerNode(owner) !== undefined) return { granted: true }; // a downgrade
    let firstWrite = -1;
    for (let i = 0; i < sorted.length; i++) {
      const name = sorted[i]!;
      if (name === ourName) break;
      if (firstWrite < 0 && name.includes(WRITE_LOCK_NAME)) firstWrite = i;
    }
    return firstWrite < 0 ? { granted: true } : { granted: false, watch: sorted[firstWrite]! };
  }

  protected override fixedSequence(owner: unknown): string | undefined {
    const writer = this.writerNode(owner);
    return writer === undefined ? undefined : sequenceAfter(writer, WRITE_LOCK_NAME);
  }

  /** The write node held by `owner`, if this acquire is a downgrade. */
  private writerNode(owner: unknown): string | undefined {
    if (owner === undefined) return undefined;
    return this.rw.writeLock.heldBy(owner)?.path;
  }
}

export class ReadWriteLock implements AsyncDisposable {
  readonly path: string;
  /** Shared: held by any number of readers while no writer holds or waits ahead of them. */
  readonly readLock: ReadLock;
  /** Exclusive. */
  readonly writeLock: WriteLock;

  constructor(client: Client, path: string, options: MutexOptions = {}) {
    this.writeLock = new WriteLock(client, path, options, this);
    this.readLock = new ReadLock(client, path, options, this);
    this.path = this.writeLock.path;
  }

  /** Every reader and writer node in queue order (full paths). */
  participantNodes(): Promise<string[]> {
    return this.writeLock.participantNodes();
  }

  /** Closes both locks: pending acquires stop, held leases are released. */
  async close(): Promise<void> {
    await Promise.all([this.readLock.close(), this.writeLock.close()]);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
