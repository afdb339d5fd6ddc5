/** Durable file operations: a file is synced before its rename, and a directory after a new entry. */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

async function syncDirAsync(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * A file written front to back to `dir/tmpName`, then (`commit`) synced, renamed to `dir/name` and
 * the dir synced, all off the event loop; or `abort`ed (closed and removed). For a file too big to
 * hold whole (a snapshot streamed as it is encoded).
 */
export class DurableFileWriter {
  private constructor(
    private readonly fh: FileHandle,
    private readonly dir: string,
    private readonly tmp: string,
  ) {}

  static async open(dir: string, tmpName: string): Promise<DurableFileWriter> {
    const tmp = join(dir, tmpName);
    return new DurableFileWriter(await open(tmp, 'w'), dir, tmp);
  }

  bytes = 0;

  /** Appends `parts`; resolves once they are written (the caller may then reuse their memory). */
  async write(parts: readonly Buffer[]): Promise<void> {
    for (const b of parts) {
      let off = 0;
      while (off < b.length) off += (await this.fh.write(b, off, b.length - off)).bytesWritten;
      this.bytes += b.length;
    }
  }

  /** Syncs (when `sync`), closes, renames to `name`, syncs the dir; resolves with the syncs' time (ms). */
  async commit(name: string, sync: boolean): Promise<number> {
    let syncMs = 0;
    try {
      if (sync) {
        const t = performance.now();
        await this.fh.sync();
        syncMs += performance.now() - t;
      }
    } finally {
      await this.fh.close();
    }
    await rename(this.tmp, join(this.dir, name));
    if (sync) {
      const t = performance.now();
      await syncDirAsync(this.dir);
      syncMs += performance.now() - t;
    }
    return syncMs;
  }

  /** Closes and removes the temp file (a failed write; errors here are not the caller's). */
  async abort(): Promise<void> {
    await this.fh.close().catch(() => undefined);
    await unlink(this.tmp).catch(() => undefined);
  }
}

export function writeFileDurablySync(dir: string, tmpName: string, name: string, bytes: Buffer): void {
  const tmp = join(dir, tmpName);
  const fd = openSync(tmp, 'w');
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(dir, name));
  syncDir(dir);
}
