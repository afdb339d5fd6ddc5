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
