/**
 * From the walk's nodes to recipes: a pure function, so that the page can re-run it on what it
 * already holds. Each directory is looked at through its children's names (recipe-layouts.ts).
 */
import { sortBySequence } from '@tenure/client';
import { decodeData, sessionHex } from './node-data.js';
import { frameItems } from './queue-frame.js';
import { classifyKazoo, isKazooLockNode } from './kazoo-layouts.js';
import {
  LATCH_NAME,
  LEASE_NAME,
  LEASE_PARENT,
  LOCK_NAME,
  LOCK_PARENT,
  parseServiceInstance,
  readWriteKey,
  roleOf,
  type NodeRole,
} from './recipe-layouts.js';
import type {
  ElectionInfo,
  GroupInfo,
  LockInfo,
  LockNode,
  Participant,
  QueueInfo,
  RecipeReport,
  ServiceInfo,
  ServiceInstanceInfo,
} from './report.js';
import { childPath, type WalkResult, type WalkedNode } from './tree-walk.js';
import { queueNode } from './queue-node.js';

const since = (at: number, ctime: number): number => Math.max(0, at - ctime);

/**
 * Whether `first`, now the first of `dir`'s queue, has been first since its node was created, so
 * that it holds (leads) since its ctime: provable when no child of `dir` was created or deleted
 * after it (the parent's pzxid, the zxid of its last child change, is our create's). Anything
 * ahead of it at its creation would have had to leave since. When children changed after it, a
 * node ahead of it may have left at a time the tree does not record (a sequence number counts
 * creates, not deletes, on ZooKeeper as on the embedded server), so the ctime is only a bound.
 */
function firstSinceCreation(dir: WalkedNode, first: WalkedNode): boolean {
  return dir.stat.pzxid <= first.stat.czxid;
}

function byPath<T extends { path: string }>(a: T, b: T): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/** Recipes in what `walkTree` read. `at` (default now) is the time held-for and ages are measured at. */
export function classifyNodes(walk: WalkResult, at: number = Date.now()): RecipeReport {
  const byPathMap = new Map<string, WalkedNode>();
  for (const n of walk.nodes) byPathMap.set(n.path, n);

  /** The read children of `dir` with `role`, in the order of `order` (a name → key, or a lock name). */
  function contenders(dir: WalkedNode, roles: readonly NodeRole[], order: string | ((name: string) => string)): WalkedNode[] {
    const names = dir.children.filter((c) => {
      const r = roleOf(c);
      return r !== null && roles.includes(r);
    });
    const out: WalkedNode[] = [];
    for (const name of sortBySequence(names, order)) {
      const n = byPathMap.get(childPath(dir.path, name));
      if (n !== undefined) out.push(n);
    }
    return out;
  }

  const lockNode = (n: WalkedNode, kind: LockNode['kind']): LockNode => ({ ...queueNode(n), kind });
  const locks: LockInfo[] = [];
  const elections: ElectionInfo[] = [];
  const groups: GroupInfo[] = [];
  const queues: QueueInfo[] = [];
  const services = new Map<string, { basePath: string; instances: ServiceInstanceInfo[] }>();
  /** `locks/` folders that belong to a semaphore (not reported as mutexes of their own). */
  const semaphoreLockDirs = new Set<string>();

  /** `dir`: the lock's directory of contenders, whose first is the holder (none for a semaphore: its leases are not a queue). */
  function lock(
    path: string,
    kind: LockInfo['kind'],
    holders: LockNode[],
    waiters: LockNode[],
    dir?: WalkedNode,
    first?: WalkedNode,
  ): LockInfo {
    const holder = holders[0] ?? null;
    const heldForExact = holder !== null && dir !== undefined && first !== undefined && firstSinceCreation(dir, first);
    return { path, kind, holder, holders, waiters, heldForMs: holder === null ? null : since(at, holder.ctime), heldForExact };
  }

  function election(dir: WalkedNode, kind: ElectionInfo['kind'], nodes: WalkedNode[]): ElectionInfo {
    const participants: Participant[] = nodes.map((n, i) => ({ ...queueNode(n), id: n.data.toString('utf8'), isLeader: i === 0 }));
    const leader = participants[0] ?? null;
    const leaderForExact = leader !== null && firstSinceCreation(dir, nodes[0]!);
    return { path: dir.path, kind, leader, participants, leaderForMs: leader === null ? null : since(at, leader.ctime), leaderForExact };
  }

  // Semaphores first: their `locks/` mutex is part of them.
  for (const dir of walk.nodes) {
    if (!dir.children.includes(LEASE_PARENT)) continue;
    const leasesDir = byPathMap.get(childPath(dir.path, LEASE_PARENT));
    const locksDir = dir.children.includes(LOCK_PARENT) ? byPathMap.get(childPath(dir.path, LOCK_PARENT)) : undefined;
    const leases = leasesDir === undefined ? [] : contenders(leasesDir, ['lease'], LEASE_NAME);
    const queued = locksDir === undefined ? [] : contenders(locksDir, ['lock'], LOCK_NAME);
    if (leases.length === 0 && queued.length === 0) continue;
    if (locksDir !== undefined) semaphoreLockDirs.add(locksDir.path);
    locks.push(
      lock(
        dir.path,
        'semaphore',
        leases.map((n) => lockNode(n, 'lease')),
        queued.map((n) => lockNode(n, 'lock')),
      ),
    );
  }

  for (const dir of walk.nodes) {
    if (dir.children.length === 0) continue;
    const roles = new Set<NodeRole | null>(dir.children.map(roleOf));

    if (roles.has('lock') && !semaphoreLockDirs.has(dir.path)) {
      const queue = contenders(dir, ['lock'], LOCK_NAME);
      if (queue.length > 0) {
        const [first, ...rest] = queue;
        locks.push(
          lock(
            dir.path,
            'mutex',
            [lockNode(first!, 'lock')],
            rest.map((n) => lockNode(n, 'lock')),
            dir,
            first,
          ),
        );
        elections.push(election(dir, 'leader-selector', queue));
      }
    }
    if (roles.has('read') || roles.has('write')) {
      const queue = contenders(dir, ['read', 'write'], readWriteKey);
      if (queue.length > 0) {
        const kindOf = (n: WalkedNode): 'read' | 'write' => (roleOf(n.name) === 'write' ? 'write' : 'read');
        const firstWriter = queue.findIndex((n) => kindOf(n) === 'write');
        const held = firstWriter === 0 ? 1 : firstWriter < 0 ? queue.length : firstWriter;
        locks.push(
          lock(
            dir.path,
            'read-write',
            queue.slice(0, held).map((n) => lockNode(n, kindOf(n))),
            queue.slice(held).map((n) => lockNode(n, kindOf(n))),
            dir,
            queue[0],
          ),
        );
      }
    }
    if (roles.has('latch')) {
      const queue = contenders(dir, ['latch'], LATCH_NAME);
      if (queue.length > 0) elections.push(election(dir, 'leader-latch', queue));
    }
    if (dir.queueItems.length > 0) {
      const oldest = dir.oldestItem;
      const simple = dir.queueItems.filter((n) => n.startsWith('qn-')).length * 2 > dir.queueItems.length;
      queues.push({
        path: dir.path,
        kind: simple ? 'simple' : 'distributed',
        depth: dir.queueItems.length,
        oldest:
          oldest === null
            ? null
            : {
                name: oldest.name,
                path: oldest.path,
                ctime: oldest.stat.ctime,
                data: decodeData(oldest.data),
                items: frameItems(oldest.data)?.map(decodeData) ?? null,
              },
        oldestAgeMs: oldest === null ? null : since(at, oldest.stat.ctime),
      });
    }

    // Service instances and plain ephemeral members, among the children that were read.
    const members: GroupInfo['members'][number][] = [];
    for (const name of dir.children) {
      if (roleOf(name) !== null || isKazooLockNode(name)) continue;
      const child = byPathMap.get(childPath(dir.path, name));
      if (child === undefined) continue;
      const json = parseServiceInstance(child.data);
      if (json !== null) {
        const entry = services.get(dir.path) ?? { basePath: parentOf(dir.path), instances: [] };
        services.set(dir.path, entry);
        entry.instances.push(serviceInstance(child, json));
      } else if (child.stat.ephemeralOwner !== 0n) {
        members.push({
          id: name,
          path: child.path,
          sessionId: sessionHex(child.stat.ephemeralOwner),
          data: decodeData(child.data),
          ctime: child.stat.ctime,
        });
      }
    }
    if (members.length > 0) groups.push({ path: dir.path, members: members.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) });
  }

  const serviceList: ServiceInfo[] = [...services].map(([path, s]) => ({
    name: path.slice(path.lastIndexOf('/') + 1),
    path,
    basePath: s.basePath,
    instances: s.instances.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
  }));

  const kazoo = classifyKazoo(walk, byPathMap, at);
  locks.push(...kazoo.locks);

  return {
    walk: { root: walk.root, visited: walk.visited, limit: walk.limit, truncated: walk.truncated, errors: walk.errors },
    at,
    locks: locks.sort(byPath),
    elections: elections.sort((a, b) => byPath(a, b) || (a.kind < b.kind ? -1 : 1)),
    groups: groups.sort(byPath),
    services: serviceList.sort(byPath),
    queues: queues.sort(byPath),
    partitions: kazoo.partitions,
    timedLeases: kazoo.timedLeases,
  };
}

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

const numOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function serviceInstance(n: WalkedNode, j: ReturnType<typeof parseServiceInstance> & object): ServiceInstanceInfo {
  return {
    id: j.id,
    node: n.name,
    path: n.path,
    address: typeof j.address === 'string' ? j.address : null,
    port: numOrNull(j.port),
    sslPort: numOrNull(j.sslPort),
    serviceType: typeof j.serviceType === 'string' ? j.serviceType : 'DYNAMIC',
    registrationTimeUTC: numOrNull(j.registrationTimeUTC),
    enabled: j.enabled !== false,
    payload: j.payload ?? null,
    sessionId: sessionHex(n.stat.ephemeralOwner),
    data: decodeData(n.data),
  };
}
