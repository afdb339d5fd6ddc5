/**
 * Opens a data dir as ZooKeeper's FileTxnSnapLog.restore does: the newest valid snapshot (up to
 * 100 are tried, newest first), then every logged txn after it. A torn tail (a partial last
 * record, nothing valid after it) is cut off the file; damage with valid records after it refuses
 * to start (DataDirCorruptError naming the file and offset). Logs without any snapshot are refused,
 * as ZooKeeper 3.8 refuses them.
 */
import { closeSync, ftruncateSync, fsyncSync, mkdirSync, openSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { DataTree } from '../semantics/data-tree.js';
import { listFiles, VERSION_DIR, type DataFile } from './file-names.js';
import { replayLogFile, readLogPrefix, validRecordAfter, type LogContents } from './log-reader.js';
import { decodeSnapshotFile, SnapshotFormatError, UNKNOWN_ACL } from './snapshot.js';
import { DataDirCorruptError } from './storage-errors.js';
import { applyTxn } from './txn-apply.js';

export interface Recovered {
  tree: DataTree;
  sessions: Map<bigint, number>;
  /** The last zxid applied (0 on an empty dir). */
  lastZxid: bigint;
  /** The zxid of the snapshot loaded, or undefined when the dir was empty. */
  snapshotZxid: bigint | undefined;
  /** Txns replayed from the logs. */
  replayed: number;
  /** Files where a torn tail was cut, with the offset. */
  truncated: Array<{ file: string; offset: number }>;
}

export interface DirPaths {
  snapDir: string;
  logDir: string;
}

export function dirPaths(dataDir: string, dataLogDir = dataDir): DirPaths {
  return { snapDir: join(dataDir, VERSION_DIR), logDir: join(dataLogDir, VERSION_DIR) };
}

/** The logs that may hold txns after `zxid`: the newest starting at or before it, and all later ones (FileTxnLog.getLogFiles). */
export function logsAfter(logs: DataFile[], zxid: bigint): DataFile[] {
  let first = 0;
  for (let i = 0; i < logs.length; i++) if (logs[i]!.zxid <= zxid) first = i;
  return logs.slice(first);
}

function cutTail(file: string, offset: number): void {
  const fd = openSync(file, 'r+');
  try {
    ftruncateSync(fd, offset);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function recover(paths: DirPaths, options: { ttlEnabled: boolean; readOnly?: boolean }): Recovered {
  if (!options.readOnly) {
    mkdirSync(paths.snapDir, { recursive: true });
    mkdirSync(paths.logDir, { recursive: true });
  }
  const snaps = listFiles(paths.snapDir, 'snapshot').reverse().slice(0, 100);
  const logs = listFiles(paths.logDir, 'log');
  let loaded: ReturnType<typeof decodeSnapshotFile> | undefined;
  let snapZxid: bigint | undefined;
  let snapPath = '';
  let firstProblem: DataDirCorruptError | undefined;
  for (const s of snaps) {
    try {
      loaded = decodeSnapshotFile(s.path, options.ttlEnabled);
      snapZxid = s.zxid;
      snapPath = s.path;
      break;
    } catch (err) {
      if (!(err instanceof SnapshotFormatError)) throw err;
      firstProblem ??= new DataDirCorruptError(s.path, err.offset, err.message);
    }
  }
  if (loaded === undefined) {
    if (firstProblem !== undefined) throw firstProblem; // snapshots, none of them valid
    if (logs.length > 0) {
      throw new DataDirCorruptError(logs[0]!.path, 0, 'txn logs without any snapshot (ZooKeeper 3.8 refuses such a dir too)');
    }
    return {
      tree: new DataTree(options.ttlEnabled),
      sessions: new Map(),
      lastZxid: 0n,
      snapshotZxid: undefined,
      replayed: 0,
      truncated: [],
    };
  }
  const { tree, sessions } = loaded;
  let last = snapZxid!;
  let replayed = 0;
  const truncated: Recovered['truncated'] = [];
  const files = logsAfter(logs, last);
  for (let i = 0; i < files.length; i++) {
    const contents: LogContents = replayLogFile(files[i]!, (txn) => {
      if (txn.header.zxid <= last) return;
      applyTxn(tree, sessions, txn);
      last = txn.header.zxid;
      replayed++;
    });
    if (contents.tornAt !== undefined) {
      // The failure path reads the files whole: is anything valid after the bad record?
      const later = files.slice(i + 1).some((f) => {
        const b = readLogPrefix(f.path);
        return b.length > 16 && validRecordAfter(b, 16);
      });
      if (later || validRecordAfter(readLogPrefix(files[i]!.path), contents.tornAt + 1)) {
        throw new DataDirCorruptError(files[i]!.path, contents.tornAt, 'a damaged record with valid records after it');
      }
      if (!options.readOnly) {
        // A file left without records goes: the next txn's log takes its name (log.<next zxid>).
        if (contents.tornAt <= 16 || contents.count === 0) unlinkSync(files[i]!.path);
        else cutTail(files[i]!.path, contents.tornAt);
        for (const f of files.slice(i + 1)) unlinkSync(f.path);
      }
      truncated.push({ file: files[i]!.path, offset: contents.tornAt });
      break;
    }
  }
  // A fuzzy snapshot's node with an ACL id its cache lacks was created after the snapshot began, so
  // its create txn is in the log and replay has given it its ACL; one still without is damage.
  for (const [path, { id, offset }] of loaded.unknownAcls) {
    if (tree.get(path)?.acl === UNKNOWN_ACL) {
      throw new DataDirCorruptError(snapPath, offset, `node ${path} names ACL ${id}, which neither the snapshot's cache nor the log holds`);
    }
  }
  return { tree, sessions, lastZxid: last, snapshotZxid: snapZxid, replayed, truncated };
}
