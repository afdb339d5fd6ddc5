import { TenureError } from '@tenure/protocol';

/** Why a data dir cannot be opened: the file and the byte offset where it went wrong. */
export class DataDirCorruptError extends TenureError {
  override name = 'DataDirCorruptError';
  constructor(
    readonly file = 'the data dir',
    readonly offset = 0,
    reason = 'unreadable',
  ) {
    super('DATA_DIR_CORRUPT', `${file} is corrupt at offset ${offset}: ${reason}`);
  }
}

/** The txn log could not be written or synced (the cause is what the file system threw). */
export class StorageFailedError extends TenureError {
  override name = 'StorageFailedError';
  constructor(cause: unknown) {
    super('STORAGE_FAILED', cause instanceof Error ? cause.message : String(cause), { cause });
  }
}
