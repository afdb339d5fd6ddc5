/**
 * Storage in a data dir, in ZooKeeper's own format: recovery at open, the txn log with group
 * commit, snapshots every `snapCount` txns (at a randomised point, as SyncRequestProcessor does),
 * and autopurge. The server hands it every txn as it is applied and learns from `onDurable` up to
 * which zxid everything is on disk; it shows nothing of a later txn before that.
 */
import { unlinkSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { JuteWriter } from '@tenure/protocol';
import { snapshotName } from './file-names.js';
import { DurableFileWriter, syncDir, writeFileDurablySync } from './fs-sync.js';
import { purge, type PurgeResult } from './purge.js';
import { dirPaths, recover, type DirPaths, type Recovered } from './recovery.js';
import { takeFuzzySnapshot } from './fuzzy-snapshot.js';
import { encodeSnapshot, type SnapshotState } from './snapshot.js';
import { TxnLogWriter } from './txn-log.js';
import { encodeTxn, type TxnBody, type TxnHeader } from './txn-records.js';

export interface DataDirOptions {
  dataDir: string;
  /** Where the txn logs go (ZooKeeper's dataLogDir). Default: dataDir. */
  dataLogDir?: string;
  /** Txns between snapshots, randomised in [snapCount/2, snapCount) as ZooKeeper does. Default 100,000. */
  snapCount?: number;
  /** Log preallocation step in KiB, as zoo.cfg's preAllocSize. Default 65,536 (64 MiB). */
  preAllocSize?: number;
  /** Sync the log before answering (zoo.cfg forceSync=yes). Default true. */
  forceSync?: boolean;
  /** Purge old snapshots and logs every `purgeIntervalHours` (0: never), keeping `snapRetainCount` snapshots (min 3). */
  autopurge?: { snapRetainCount: number; purgeIntervalHours: number };
}

export interface StorageHooks {
  /** The state to snapshot, consistent as of the last txn appended. */
  state(): SnapshotState;
  /** Everything up to `zxid` is on disk. */
  durable(zxid: bigint): void;
  /** The log could not be written or synced: the server must stop answering. */
  failed(err: Error): void;
  warn(obj: unknown, msg: string): void;
  /** A snapshot is on disk: how long it took in all, and its two syncs (ms). */
  snapshotted?(info: SnapshotInfo): void;
}

export interface SnapshotInfo {
  zxid: bigint;
  nodes: number;
  bytes: number;
  /** From the start of the walk to the rename being synced. */
  totalMs: number;
  /** The file's and the dir's fsync. */
  syncMs: number;
  /** Whether the file carries the tree digest (see fuzzy-snapshot.ts). */
  digest: boolean;
}

export class DataDirStorage {
  readonly paths: DirPaths;
  readonly recovered: Recovered;
  private readonly writer: TxnLogWriter;
  private readonly snapCount: number;
  private readonly forceSync: boolean;
  private hooks: StorageHooks | undefined;
  private sinceSnapshot = 0;
  private randRoll: number;
  private snapshotting: Promise<void> | undefined;
  private lastAppended: bigint;
  private purgeTimer: NodeJS.Timeout | undefined;
  private readonly encoder = new JuteWriter(1024);
  private closed = false;
  /** Snapshots written since open; syncs are in `log`. */
  readonly stats = { snapshots: 0, lastSnapshotZxid: -1n };

  /** Recovers the dir (synchronously; throws DataDirCorruptError) and opens the log for appends. */
  constructor(
    readonly options: DataDirOptions,
    ttlEnabled: boolean,
  ) {
    this.paths = dirPaths(options.dataDir, options.dataLogDir);
    this.recovered = recover(this.paths, { ttlEnabled });
    this.lastAppended = this.recovered.lastZxid;
    this.snapCount = Math.max(2, Math.trunc(options.snapCount ?? 100_000));
    this.randRoll = this.roll();
    this.forceSync = options.forceSync ?? true;
    this.removeTempFiles();
    this.writer = new TxnLogWriter({
      dir: this.paths.logDir,
      preAllocBytes: Math.max(1, Math.trunc(options.preAllocSize ?? 65_536)) * 1024,
      forceSync: this.forceSync,
      onDurable: (zxid) => this.hooks?.durable(zxid),
      onFailure: (err) => this.hooks?.failed(err),
    });
    if (this.forceSync) syncDir(this.paths.logDir);
  }

  /**
   * Starts serving. An empty dir gets snapshot.0 now (a dir of logs without a snapshot would not
   * open again). After a replay, the snapshot at the last zxid (ZooKeeper's loadData takes it
   * before serving) is a fuzzy one taken once the server serves: until it lands the dir still
   * holds the old snapshot and every log after it, so a crash during it recovers as this start did.
   */
  start(hooks: StorageHooks): void {
    this.hooks = hooks;
    const r = this.recovered;
    if (r.snapshotZxid === undefined) {
      const bytes = encodeSnapshot(hooks.state(), r.lastZxid);
      writeFileDurablySync(this.paths.snapDir, `tmp.${snapshotName(r.lastZxid)}`, snapshotName(r.lastZxid), bytes);
      this.stats.snapshots++;
      this.stats.lastSnapshotZxid = r.lastZxid;
    } else if (r.replayed > 0) {
      // After the current turn of the loop (the listener binds first); close() waits for it.
      this.snapshotting = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => this.takeSnapshot(true))
        .finally(() => (this.snapshotting = undefined));
    }
    const ap = this.options.autopurge;
    if (ap !== undefined && ap.purgeIntervalHours > 0) {
      this.purgeTimer = setInterval(() => this.purgeNow(), ap.purgeIntervalHours * 3_600_000);
      this.purgeTimer.unref();
    }
  }

  get logStats(): Readonly<{ commits: number; txns: number; bytes: number; syncMs: number }> {
    return this.writer.stats;
  }

  /** Appends one txn to the log (written and synced with the next group commit). */
  append(header: TxnHeader, body: TxnBody): void {
    if (this.closed) return;
    this.writer.append(header.zxid, encodeTxn(header, body, this.encoder));
    this.lastAppended = header.zxid;
    if (++this.sinceSnapshot > this.snapCount / 2 + this.randRoll) {
      this.sinceSnapshot = 0;
      this.randRoll = this.roll();
      if (this.snapshotting !== undefined) {
        this.hooks?.warn({}, 'too busy to snapshot, skipping');
      } else {
        this.writer.roll();
        // After the current request; the walk then runs in slices between requests.
        this.snapshotting = new Promise<void>((resolve) => setImmediate(resolve))
          .then(() => this.takeSnapshot())
          .finally(() => (this.snapshotting = undefined));
      }
    }
  }

  private roll(): number {
    return Math.floor(Math.random() * (this.snapCount / 2));
  }

  /**
   * Takes a snapshot now (after the one under way, if any): a fuzzy walk named by the last zxid at
   * its start, written to a temp file, synced, renamed, the dir synced.
   */
  async snapshot(): Promise<void> {
    while (this.snapshotting !== undefined) await this.snapshotting;
    if (this.hooks === undefined || this.closed) return;
    this.snapshotting = this.takeSnapshot().finally(() => (this.snapshotting = undefined));
    await this.snapshotting;
  }

  /** `startup`: the snapshot after a replay, which a close right after the start still takes, synced as it always was. */
  private async takeSnapshot(startup = false): Promise<void> {
    const hooks = this.hooks;
    if (hooks === undefined || (this.closed && !startup)) return;
    const t0 = performance.now();
    let name = snapshotName(this.lastAppended);
    let file = undefined as DurableFileWriter | undefined;
    try {
      const snap = await takeFuzzySnapshot({ state: () => hooks.state(), lastZxid: () => this.lastAppended }, async (zxid) => {
        name = snapshotName(zxid);
        return (file = await DurableFileWriter.open(this.paths.snapDir, `tmp.${name}`));
      });
      const syncMs = await file!.commit(name, startup || this.forceSync);
      file = undefined;
      this.stats.snapshots++;
      this.stats.lastSnapshotZxid = snap.zxid;
      hooks.snapshotted?.({
        zxid: snap.zxid,
        nodes: snap.nodes,
        bytes: snap.bytes,
        totalMs: performance.now() - t0,
        syncMs,
        digest: snap.digest,
      });
    } catch (err) {
      await file?.abort();
      hooks.warn({ err }, `snapshot ${name} failed`);
    }
  }

  /** Purges as `autopurge` says (the interval timer calls it too). */
  purgeNow(): PurgeResult {
    const ap = this.options.autopurge;
    try {
      return purge(this.paths, ap?.snapRetainCount ?? 3);
    } catch (err) {
      this.hooks?.warn({ err }, 'purge failed');
      return { snapshots: [], logs: [] };
    }
  }

  private removeTempFiles(): void {
    for (const dir of new Set([this.paths.snapDir, this.paths.logDir])) {
      for (const name of readdirSync(dir)) if (name.startsWith('tmp.snapshot.')) unlinkSync(join(dir, name));
    }
  }

  /** Writes and syncs everything appended, waits for a snapshot under way, closes the files. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.purgeTimer !== undefined) clearInterval(this.purgeTimer);
    try {
      await this.writer.close();
    } finally {
      await this.snapshotting;
    }
  }
}
