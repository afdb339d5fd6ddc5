/**
 * kazoo's recipe layouts, recognised from the walk with the names the recipe packages export
 * (@tenure/locks: KazooLock, the leases; @tenure/group: SetPartitioner):
 *
 * | recipe | nodes |
 * |---|---|
 * | Lock (kazoo's, KazooLock) | `<path>/<uuid hex>__lock__<seq>` |
 * | SetPartitioner | `<path>/party/<uuid hex>-<identifier>`, `<path>/locks/<item>/<uuid hex>__lock__<seq>` |
 * | NonBlockingLease (Multi: each `<path>/<n>`) | `<path>/lease_holder`, JSON `{"version", "holder", "end"}`, and kazoo's Lock on `<path>` |
 */
import { LOCKS_NODE, PARTY_NODE, partyMemberId } from '@tenure/group';
import { KAZOO_CONTENDER, LEASE_HOLDER_NODE, decodeLeaseRecord, kazooContenders } from '@tenure/locks';
import type { PartitionHolder, PartitionInfo, PartitionMember, TimedLeaseInfo } from './kazoo-report.js';
import { decodeData, sessionHex } from './node-data.js';
import type { LockInfo, LockNode } from './report.js';
import { queueNode } from './queue-node.js';
import { childPath, type WalkResult, type WalkedNode } from './tree-walk.js';

/** A kazoo lock contender's name (not a group member, whatever its parent). */
export function isKazooLockNode(name: string): boolean {
  return KAZOO_CONTENDER.test(name);
}

export interface KazooFindings {
  /** kazoo Locks (kind `kazoo`): plain ones, a partitioner's item locks and a lease's lock. */
  readonly locks: LockInfo[];
  readonly partitions: PartitionInfo[];
  readonly timedLeases: TimedLeaseInfo[];
}

const byPath = <T extends { path: string }>(a: T, b: T): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
const since = (at: number, ctime: number): number => Math.max(0, at - ctime);

export function classifyKazoo(walk: WalkResult, nodes: ReadonlyMap<string, WalkedNode>, at: number): KazooFindings {
  const locks: LockInfo[] = [];
  const partitions: PartitionInfo[] = [];
  const timedLeases: TimedLeaseInfo[] = [];

  const contendersOf = (dir: WalkedNode): WalkedNode[] =>
    kazooContenders(dir.children).flatMap((name) => nodes.get(childPath(dir.path, name)) ?? []);
  const lockNode = (n: WalkedNode): LockNode => ({ ...queueNode(n), kind: 'lock' });

  for (const dir of walk.nodes) {
    const queue = contendersOf(dir);
    if (queue.length > 0) {
      const [first, ...rest] = queue.map(lockNode);
      // Held since its node's creation when nothing was created or deleted under the lock after it (as classify.ts).
      const heldForExact = dir.stat.pzxid <= queue[0]!.stat.czxid;
      locks.push({
        path: dir.path,
        kind: 'kazoo',
        holder: first!,
        holders: [first!],
        waiters: rest,
        heldForMs: since(at, first!.ctime),
        heldForExact,
      });
    }

    if (dir.children.includes(LEASE_HOLDER_NODE)) {
      const record = nodes.get(childPath(dir.path, LEASE_HOLDER_NODE));
      if (record !== undefined) {
        try {
          const r = decodeLeaseRecord(record.data, record.path);
          const end = r.endsAt.getTime();
          const endsAt = Number.isNaN(end) ? null : end;
          timedLeases.push({
            path: dir.path,
            holder: r.holder,
            version: r.version,
            endsAt,
            timeLeftMs: endsAt === null ? null : Math.max(0, endsAt - at),
            running: endsAt !== null && at < endsAt,
          });
        } catch {
          // Not kazoo's record: some other node of that name.
        }
      }
    }

    if (dir.children.includes(PARTY_NODE) && dir.children.includes(LOCKS_NODE)) {
      const party = nodes.get(childPath(dir.path, PARTY_NODE));
      const lockDir = nodes.get(childPath(dir.path, LOCKS_NODE));
      if (party === undefined || lockDir === undefined) continue;
      const members: PartitionMember[] = party.children
        .flatMap((name) => nodes.get(childPath(party.path, name)) ?? [])
        .filter((n) => n.stat.ephemeralOwner !== 0n)
        .map((n) => ({ id: partyMemberId(n.name), path: n.path, sessionId: sessionHex(n.stat.ephemeralOwner) }))
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const bySession = new Map(members.map((m) => [m.sessionId, m.id]));
      const items = [...lockDir.children].sort().map((item) => {
        const itemDir = nodes.get(childPath(lockDir.path, item));
        const queue = itemDir === undefined ? [] : contendersOf(itemDir);
        const first = queue[0];
        let holder: PartitionHolder | null = null;
        if (first !== undefined) {
          const sessionId = sessionHex(first.stat.ephemeralOwner);
          const data = decodeData(first.data);
          holder = {
            memberId: bySession.get(sessionId) ?? (data.encoding === 'utf8' && data.value !== '' ? data.value : null),
            sessionId,
            node: first.name,
            data,
            fencingToken: first.stat.czxid.toString(),
            heldForMs: since(at, first.stat.ctime),
          };
        }
        return { item, holder, waiting: Math.max(0, queue.length - 1) };
      });
      partitions.push({ path: dir.path, members, items });
    }
  }
  return { locks, partitions: partitions.sort(byPath), timedLeases: timedLeases.sort(byPath) };
}
