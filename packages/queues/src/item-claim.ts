/**
 * Taking one item node, Curator's two ways (DistributedQueue.processNormally / processWithLockSafety):
 *
 * - At most once (no lockPath): getData, then delete with the version read; the item is gone
 *   before anyone sees it. NoNode or BadVersion: another consumer has it, skip.
 * - At least once (lockPath): create `<lockPath>/<item name>` EPHEMERAL (NodeExists: another
 *   consumer has it, skip; the queue watches that lock, see queue-base.ts), getData, hand the items out, and only then settle the node:
 *   done → delete it; failed under 'requeue' → one transaction deletes it and creates a new
 *   `queue-` item with the whole original frame; stopped (close, a crash) → leave it. The lock
 *   node goes last (a guaranteed delete); a consumer that dies holding it loses it with its session.
 *
 * A frame that does not decode is logged and deleted, as Curator does.
 */
import { CreateMode, NoNodeError, BadVersionError, NodeExistsError, type Client, type Logger } from '@tenure/client';
import { decodeFrame } from './item-frame.js';

/** How a consumer finished with a claimed node: 'failed' re-queues it, 'stopped' leaves it. */
export type Outcome = 'done' | 'failed' | 'stopped';

export interface Claim {
  /** The frame's records, as the user serializer's bytes. */
  records: Buffer[];
  /** Settles the node (at least once only; at most once it is already gone). Idempotent. */
  settle(outcome: Outcome): Promise<void>;
}

export interface ClaimContext {
  client: Client;
  logger: Logger;
  /** For 'failed' (errorMode 'requeue'): the path to re-create the item under (sequential). */
  requeuePath(itemName: string): string;
  /** The item's lock node exists: another consumer holds it (it may have died; its lock goes with its session). */
  heldElsewhere(lockNodePath: string): void;
}

const nothingToSettle = (): Promise<void> => Promise.resolve();

/** At most once: the node is deleted before its records are returned; null if another consumer won. */
export async function claimAtMostOnce(cx: ClaimContext, itemPath: string): Promise<Claim | null> {
  let got: { data: Buffer; stat: { version: number } };
  try {
    got = await cx.client.getData(itemPath);
    await cx.client.delete(itemPath, { version: got.stat.version });
  } catch (err) {
    if (err instanceof NoNodeError || err instanceof BadVersionError) return null;
    throw err;
  }
  return { records: decodeOrLog(cx, got.data, itemPath) ?? [], settle: nothingToSettle };
}

/** At least once: the node is held through `<lockPath>/<name>` until `settle`; null if another consumer holds it. */
export async function claimLocked(cx: ClaimContext, itemPath: string, lockNodePath: string): Promise<Claim | null> {
  const { client } = cx;
  try {
    await client.create(lockNodePath, null, { mode: CreateMode.EPHEMERAL });
  } catch (err) {
    if (err instanceof NodeExistsError) {
      cx.heldElsewhere(lockNodePath);
      return null;
    }
    throw err;
  }
  const unlock = async (): Promise<void> => {
    await client
      .delete(lockNodePath, { guaranteed: true })
      .catch((err: unknown) => cx.logger.warn({ err, path: lockNodePath }, 'could not delete the item lock'));
  };
  let data: Buffer;
  try {
    data = (await client.getData(itemPath)).data;
  } catch (err) {
    await unlock();
    if (err instanceof NoNodeError) return null;
    throw err;
  }
  const records = decodeOrLog(cx, data, itemPath);
  if (records === null) {
    await client.delete(itemPath).catch(() => {});
    await unlock();
    return { records: [], settle: nothingToSettle };
  }
  let settled: Promise<void> | null = null;
  const settle = async (outcome: Outcome): Promise<void> => {
    try {
      // Done: the item must be gone, and a lost reply's NoNode says it is.
      if (outcome === 'done') await client.delete(itemPath, { retryAmbiguousWrites: 'raw' }).catch(ignoreNoNode);
      else if (outcome === 'failed') {
        const name = itemPath.slice(itemPath.lastIndexOf('/') + 1);
        await client.transaction().delete(itemPath).create(cx.requeuePath(name), data, { mode: CreateMode.PERSISTENT_SEQUENTIAL }).commit();
      }
    } finally {
      await unlock();
    }
  };
  return { records, settle: (outcome) => (settled ??= settle(outcome)) };
}

function ignoreNoNode(err: unknown): void {
  if (!(err instanceof NoNodeError)) throw err;
}

function decodeOrLog(cx: ClaimContext, data: Buffer, itemPath: string): Buffer[] | null {
  try {
    return decodeFrame(data, itemPath);
  } catch (err) {
    cx.logger.error({ err, path: itemPath }, 'Corrupted queue item');
    return null;
  }
}
