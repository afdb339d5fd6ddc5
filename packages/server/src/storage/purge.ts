/**
 * Autopurge (PurgeTxnLog.purge): keep the newest `snapRetainCount` snapshots (at least 3, as
 * ZooKeeper insists), and the logs they may need: every log from the newest one that starts at or
 * before the oldest kept snapshot. Everything older goes.
 */
import { unlinkSync } from 'node:fs';
import { listFiles } from './file-names.js';
import { logsAfter, type DirPaths } from './recovery.js';

export interface PurgeResult {
  snapshots: string[];
  logs: string[];
}

export function purge(paths: DirPaths, snapRetainCount: number): PurgeResult {
  const keep = Math.max(3, Math.trunc(snapRetainCount));
  const snaps = listFiles(paths.snapDir, 'snapshot');
  if (snaps.length <= keep) return { snapshots: [], logs: [] };
  const kept = snaps.slice(snaps.length - keep);
  const oldestKept = kept[0]!.zxid;
  const logs = listFiles(paths.logDir, 'log');
  const neededLogs = new Set(logsAfter(logs, oldestKept).map((l) => l.path));
  const out: PurgeResult = { snapshots: [], logs: [] };
  for (const s of snaps.slice(0, snaps.length - keep)) {
    unlinkSync(s.path);
    out.snapshots.push(s.name);
  }
  for (const l of logs) {
    if (neededLogs.has(l.path) || l.zxid > oldestKept) continue;
    unlinkSync(l.path);
    out.logs.push(l.name);
  }
  return out;
}
