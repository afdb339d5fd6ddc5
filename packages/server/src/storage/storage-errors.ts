/** Why a data dir cannot be opened: the file and the byte offset where it went wrong. */
export class DataDirCorruptError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    reason: string,
  ) {
    super(`${file} is corrupt at offset ${offset}: ${reason}`);
    this.name = 'DataDirCorruptError';
  }
}
