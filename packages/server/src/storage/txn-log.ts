/**
 * ZooKeeper's txn log (FileTxnLog), written with group commit as SyncRequestProcessor does.
 *
 * A file is `log.<hex zxid of its first txn>`: a FileHeader (magic "ZKLG", version 2, dbId 0),
 * then records `long adler32(entry) · int length · entry · 'B'`. The file is preallocated with
 * zeros in `preAllocSize` steps; a zero length marks the end. Appends go to a buffer; one commit
 * writes everything buffered and syncs once (with forceSync the file is O_DSYNC, so the write is
 * the sync), so every write that arrived during the previous sync shares the next one.
 * `onDurable` learns the last zxid on disk after each commit.
 */
import { closeSync, constants, fsyncSync, ftruncate, openSync, write } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { adler32 } from './adler32.js';
import { FORMAT_VERSION, LOG_MAGIC, logName } from './file-names.js';
import { syncDir } from './fs-sync.js';
import { StorageFailedError } from './storage-errors.js';

const writeAsync = promisify(write);
const truncateAsync = promisify(ftruncate);

export interface TxnLogOptions {
  dir: string;
  /** Bytes the file grows by when it fills up (ZooKeeper's preAllocSize, default 64 MiB). */
  preAllocBytes: number;
  /** fsync after each group of writes (forceSync). */
  forceSync: boolean;
  /** The last zxid on disk (synced, or written when forceSync is off). */
  onDurable(zxid: bigint): void;
  /** A write or a sync failed: nothing after `durable` can be trusted. */
  onFailure(err: Error): void;
}

interface LogFile {
  name: string;
  fd: number;
  /** Where the next byte goes. */
  position: number;
  /** The file's size with its preallocated zeros. */
  size: number;
}

interface Segment {
  file: LogFile;
  chunks: Buffer[];
  bytes: number;
}

function fileHeader(): Buffer {
  const b = Buffer.alloc(16);
  b.writeInt32BE(LOG_MAGIC, 0);
  b.writeInt32BE(FORMAT_VERSION, 4);
  b.writeBigInt64BE(0n, 8);
  return b;
}

/** One framed record: checksum, length, entry, 'B'. */
export function frameRecord(entry: Buffer): Buffer {
  const out = Buffer.allocUnsafe(entry.length + 13);
  out.writeBigInt64BE(BigInt(adler32(entry)), 0);
  out.writeInt32BE(entry.length, 8);
  entry.copy(out, 12);
  out[entry.length + 12] = 0x42;
  return out;
}

export class TxnLogWriter {
  private current: LogFile | undefined;
  private pending: Segment[] = [];
  private pendingZxid = -1n;
  private committing = false;
  private kicked = false;
  private failed: Error | undefined;
  private idle: Array<() => void> = [];
  /** Files finished (rolled) whose last bytes are being synced; closed after that. */
  private toClose: LogFile[] = [];
  /** Syncs done (or commits, without forceSync), and txns they covered: group commit at work. */
  /** `syncMs`: the last commit's synced writes' time (0 without forceSync). */
  readonly stats = { commits: 0, txns: 0, bytes: 0, syncMs: 0 };

  constructor(private readonly o: TxnLogOptions) {}

  /** Buffers one txn; it is written and synced with the next commit. */
  append(zxid: bigint, entry: Buffer): void {
    if (this.failed !== undefined) return;
    if (this.current === undefined) this.current = this.open(zxid);
    const rec = frameRecord(entry);
    let seg = this.pending[this.pending.length - 1];
    if (seg === undefined || seg.file !== this.current) {
      seg = { file: this.current, chunks: [], bytes: 0 };
      this.pending.push(seg);
    }
    seg.chunks.push(rec);
    seg.bytes += rec.length;
    this.pendingZxid = zxid;
    this.stats.txns++;
    if (!this.kicked && !this.committing) {
      this.kicked = true;
      queueMicrotask(() => {
        this.kicked = false;
        // eslint-disable-next-line @typescript-eslint/no-floating-promises -- never rejects: a failure goes to onFailure
        void this.commitLoop();
      });
    }
  }

  /** The next append starts a new file (at a snapshot, as ZooKeeper's rollLog). */
  roll(): void {
    if (this.current === undefined) return;
    this.toClose.push(this.current);
    this.current = undefined;
  }

  private open(zxid: bigint): LogFile {
    const name = logName(zxid);
    // 'wx': a log file is never reused; a name that exists means zxids went back. With forceSync
    // the file is O_DSYNC: each write returns once its bytes are as durable as fdatasync makes
    // them, in one trip to the thread pool where a write and then an fdatasync took two (~50 µs
    // each here, a tenth of a commit with one request in flight).
    const flags = this.o.forceSync ? constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DSYNC : 'wx';
    const fd = openSync(join(this.o.dir, name), flags);
    // The new name must survive a crash too, not only the bytes written under it.
    if (this.o.forceSync) syncDir(this.o.dir);
    const file: LogFile = { name, fd, position: 0, size: 0 };
    const header = fileHeader();
    this.pending.push({ file, chunks: [header], bytes: header.length });
    return file;
  }

  private async commitLoop(): Promise<void> {
    if (this.committing) return;
    this.committing = true;
    try {
      while (this.pending.length > 0 && this.failed === undefined) {
        const batch = this.pending;
        const zxid = this.pendingZxid;
        this.pending = [];
        const closing = this.toClose;
        this.toClose = [];
        const t = performance.now();
        for (const seg of batch) await this.writeSegment(seg);
        // With forceSync the writes were the syncs (O_DSYNC: see open).
        if (this.o.forceSync) this.stats.syncMs = performance.now() - t;
        for (const f of closing) {
          if (f !== this.current) closeSync(f.fd);
        }
        this.stats.commits++;
        this.o.onDurable(zxid);
      }
    } catch (err) {
      this.failed = err instanceof Error ? err : new StorageFailedError(err);
      this.pending = [];
      this.o.onFailure(this.failed);
    } finally {
      this.committing = false;
      const idle = this.idle;
      this.idle = [];
      for (const f of idle) f();
    }
  }

  private async writeSegment(seg: Segment): Promise<void> {
    const f = seg.file;
    // Preallocate as FilePadding does: grow by whole steps before the write would reach the end.
    if (f.position + seg.bytes + 4096 >= f.size) {
      let size = f.size === 0 ? this.o.preAllocBytes : f.size;
      while (f.position + seg.bytes + 4096 >= size) size += this.o.preAllocBytes;
      await truncateAsync(f.fd, size);
      f.size = size;
    }
    const buf = seg.chunks.length === 1 ? seg.chunks[0]! : Buffer.concat(seg.chunks, seg.bytes);
    let off = 0;
    while (off < buf.length) {
      const { bytesWritten } = await writeAsync(f.fd, buf, off, buf.length - off, f.position);
      off += bytesWritten;
      f.position += bytesWritten;
    }
    this.stats.bytes += buf.length;
  }

  /** Resolves when everything appended so far is written (and synced with forceSync). */
  async drain(): Promise<void> {
    while ((this.pending.length > 0 || this.committing || this.kicked) && this.failed === undefined) {
      if (!this.committing) await this.commitLoop();
      else await new Promise<void>((resolve) => this.idle.push(resolve));
    }
    if (this.failed !== undefined) throw this.failed;
  }

  /** Drains, syncs and closes the files. */
  async close(): Promise<void> {
    try {
      await this.drain();
    } finally {
      for (const f of [...this.toClose, ...(this.current ? [this.current] : [])]) {
        try {
          if (this.failed === undefined) fsyncSync(f.fd);
          closeSync(f.fd);
        } catch {
          // closing after a failure: nothing more to save
        }
      }
      this.toClose = [];
      this.current = undefined;
    }
  }
}
