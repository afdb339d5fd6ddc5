/** ZooKeeper's file names in `<dir>/version-2`: `log.<hex zxid>`, `snapshot.<hex zxid>`. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export const VERSION_DIR = 'version-2';
/** ZooKeeper's FileHeader magics: the ASCII of "ZKLG" and "ZKSN" as big-endian ints; version 2; dbId 0. */
export const LOG_MAGIC = 0x5a4b4c47;
export const SNAP_MAGIC = 0x5a4b534e;
export const FORMAT_VERSION = 2;
export const FILE_HEADER_BYTES = 16;

export const logName = (zxid: bigint): string => `log.${zxid.toString(16)}`;
export const snapshotName = (zxid: bigint): string => `snapshot.${zxid.toString(16)}`;

/** The zxid a name carries (ZooKeeper's Util.getZxidFromName), or undefined for other files. */
export function zxidOf(name: string, prefix: 'log' | 'snapshot'): bigint | undefined {
  const parts = name.split('.');
  if (parts.length < 2 || parts[0] !== prefix || !/^[0-9a-f]{1,16}$/i.test(parts[1]!)) return undefined;
  return BigInt.asIntN(64, BigInt('0x' + parts[1]));
}

export interface DataFile {
  name: string;
  path: string;
  zxid: bigint;
}

/** The files of one kind in a version-2 dir, by zxid ascending. */
export function listFiles(dir: string, prefix: 'log' | 'snapshot'): DataFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: DataFile[] = [];
  for (const name of names) {
    const zxid = zxidOf(name, prefix);
    if (zxid !== undefined) out.push({ name, path: join(dir, name), zxid });
  }
  return out.sort((a, b) => (a.zxid < b.zxid ? -1 : a.zxid > b.zxid ? 1 : 0));
}
