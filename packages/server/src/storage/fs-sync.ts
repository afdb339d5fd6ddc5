/** Durable file operations: a file is synced before its rename, and a directory after a new entry. */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
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
 * Writes `parts` to `dir/tmpName`, syncs it, renames it to `dir/name`, syncs the dir; all off the
 * event loop. Resolves with the time the two syncs took (ms).
 */
export async function writeFileDurably(
  dir: string,
  tmpName: string,
  name: string,
  parts: Buffer | readonly Buffer[],
  sync: boolean,
): Promise<number> {
  const tmp = join(dir, tmpName);
  const fh = await open(tmp, 'w');
  let syncMs = 0;
  try {
    for (const bytes of Buffer.isBuffer(parts) ? [parts] : parts) {
      let off = 0;
      while (off < bytes.length) off += (await fh.write(bytes, off, bytes.length - off)).bytesWritten;
    }
    if (sync) {
      const t = performance.now();
      await fh.sync();
      syncMs += performance.now() - t;
    }
  } finally {
    await fh.close();
  }
  await rename(tmp, join(dir, name));
  if (sync) {
    const t = performance.now();
    await syncDirAsync(dir);
    syncMs += performance.now() - t;
  }
  return syncMs;
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
