/**
 * The server's side of its data dir: who waits for a zxid to be on disk, what the storage's
 * events are told to, and the failure that stops the server answering. Output held for the log
 * and the recovery itself are elsewhere (semantics/connection-host.ts, data-dir-storage.ts).
 */
import { ConnectionLossError } from '@tenure/protocol';
import type { Logger, StorageEvent } from '../options.js';
import type { DataDirStorage, StorageHooks } from './data-dir-storage.js';

/** What the server does when more is on disk, or when the log fails. */
export interface DurabilityHooks {
  /** Everything up to `zxid` is on disk: output that waited for it may go. */
  visible(zxid: bigint): void;
  /** The log cannot be written: the server stops answering (what was not on disk is never shown). */
  failed(): void;
  readonly logger: Logger | undefined;
  readonly onStorageEvent: ((event: StorageEvent) => void) | undefined;
}

export interface StorageStats {
  durableZxid: bigint;
  commits: number;
  txns: number;
  snapshots: number;
  recovered: { replayed: number; snapshotZxid: bigint | undefined };
}

export class Durability {
  /** The storage's failure, when the log could not be written or synced. */
  failure: Error | undefined;
  durableZxid: bigint;
  private readonly waiters: Array<{ zxid: bigint; resolve: () => void }> = [];
  private readonly listeners = new Set<(event: StorageEvent) => void>();

  constructor(
    readonly dir: DataDirStorage,
    private readonly hooks: DurabilityHooks,
  ) {
    this.durableZxid = dir.recovered.lastZxid;
  }

  /** Hands the storage its hooks; `state` is what a snapshot writes. */
  start(state: StorageHooks['state']): void {
    this.dir.start({
      state,
      durable: (zxid) => this.onDurable(zxid),
      failed: (err) => this.fail(err),
      warn: (obj, msg) => this.hooks.logger?.warn(obj, msg),
      snapshotted: (info) => this.emit({ kind: 'snapshot', ...info }),
    });
  }

  /** Resolves once everything up to `zxid` is on disk; rejects when the log failed. */
  durable(zxid: bigint): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(new ConnectionLossError(undefined, 'storage failed'));
    if (zxid <= this.durableZxid) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ zxid, resolve }));
  }

  private onDurable(zxid: bigint): void {
    this.durableZxid = zxid;
    this.hooks.visible(zxid);
    const s = this.dir.logStats;
    this.emit({ kind: 'durable', zxid, commits: s.commits, txns: s.txns, syncMs: s.syncMs });
    let kept = 0;
    for (const w of this.waiters) {
      if (w.zxid <= zxid) w.resolve();
      else this.waiters[kept++] = w;
    }
    this.waiters.length = kept;
  }

  /** The log cannot be written: nothing more is answered; what was not on disk is never shown. */
  fail(err: Error): void {
    if (this.failure !== undefined) return;
    this.failure = err;
    this.hooks.logger?.warn({ err }, 'the txn log could not be written or synced; the server stops answering');
    this.hooks.failed();
    for (const w of this.waiters.splice(0)) w.resolve(); // accept() then finds the server failed
    this.emit({ kind: 'failed', error: err });
  }

  get stats(): StorageStats {
    const s = this.dir;
    return {
      durableZxid: this.durableZxid,
      commits: s.logStats.commits,
      txns: s.logStats.txns,
      snapshots: s.stats.snapshots,
      recovered: { replayed: s.recovered.replayed, snapshotZxid: s.recovered.snapshotZxid },
    };
  }

  private emit(event: StorageEvent): void {
    this.hooks.onStorageEvent?.(event);
    for (const l of this.listeners) l(event);
  }

  /** Listens to the storage's events besides the option; returns the unsubscribe. */
  onStorage(listener: (event: StorageEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
