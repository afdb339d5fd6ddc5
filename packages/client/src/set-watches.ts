/**
 * Re-registration of watches after a (re)connect, in batches whose path lengths sum to at most
 * 128 KiB (ZooKeeper's SET_WATCHES_MAX_LENGTH), far below the server's 1 MB frame limit. Java lets the
 * path that crosses the limit into the batch; we start a new batch instead, so a batch stays below.
 * A batch without persistent watches uses SetWatches (101), which pre-3.6 servers understand;
 * otherwise SetWatches2 (105).
 */
import { OpCode, SET_WATCHES_MAX_LENGTH, type SetWatches2Request, type SetWatchesRequest } from '@tenure/protocol';
import type { WatchLists } from './watch-registry.js';

const ORDER = ['dataWatches', 'existWatches', 'childWatches', 'persistentWatches', 'persistentRecursiveWatches'] as const;

export function setWatchesBatches(
  lists: WatchLists,
  relativeZxid: bigint,
  limit: number = SET_WATCHES_MAX_LENGTH,
): Array<SetWatchesRequest | SetWatches2Request> {
  const out: Array<SetWatchesRequest | SetWatches2Request> = [];
  let batch: WatchLists | null = null;
  let total = 0;
  const flush = (): void => {
    if (!batch) return;
    const b: WatchLists = batch;
    if (b.persistentWatches.length === 0 && b.persistentRecursiveWatches.length === 0) {
      out.push({
        type: OpCode.setWatches,
        relativeZxid,
        dataWatches: b.dataWatches,
        existWatches: b.existWatches,
        childWatches: b.childWatches,
      });
    } else {
      out.push({ type: OpCode.setWatches2, relativeZxid, ...b });
    }
    batch = null;
    total = 0;
  };
  for (const kind of ORDER) {
    for (const path of lists[kind]) {
      if (batch !== null && total + path.length > limit) flush();
      if (batch === null) {
        batch = { dataWatches: [], existWatches: [], childWatches: [], persistentWatches: [], persistentRecursiveWatches: [] };
      }
      batch[kind].push(path);
      total += path.length;
    }
  }
  flush();
  return out;
}
