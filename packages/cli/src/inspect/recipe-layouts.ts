/**
 * Recipe nodes recognised by their names, as Curator 5.4 and Tenure lay them out (see
 * docs/curator-layouts.md): the name patterns and each queue's order.
 *
 * | recipe | nodes |
 * |---|---|
 * | Mutex / InterProcessMutex, LeaderSelector | `<path>/_c_<uuid>-lock-<seq>` |
 * | ReadWriteLock | `<path>/_c_<uuid>-__READ__<seq>`, `<path>/_c_<uuid>-__WRIT__<seq>` |
 * | Semaphore / InterProcessSemaphoreV2 | `<path>/leases/_c_<uuid>-lease-<seq>`, `<path>/locks/_c_<uuid>-lock-<seq>` |
 * | LeaderLatch | `<path>/_c_<uuid>-latch-<seq>` |
 * | GroupMember | `<path>/<memberId>`, EPHEMERAL |
 * | DistributedQueue (+ priority, delay, id) | `<path>/queue-…<seq>`; SimpleDistributedQueue `<path>/qn-<seq>` |
 * | service discovery | `<base>/<name>/<id>`, JSON with `name`, `id`, `registrationTimeUTC` / `serviceType` |
 */
import { sequenceAfter } from '@tenure/client';
import { LATCH_NAME } from '@tenure/leader';
import { isQueueItem } from './tree-walk.js';

export const LOCK_NAME = 'lock-';
export { LATCH_NAME };
export const LEASE_NAME = 'lease-';
export const READ_NAME = '__READ__';
export const WRITE_NAME = '__WRIT__';
/** InterProcessSemaphoreV2's child folders. */
export const LEASE_PARENT = 'leases';
export const LOCK_PARENT = 'locks';

const SEQ = String.raw`\d{10}$`;
const LOCK_NODE = new RegExp(`${LOCK_NAME}${SEQ}`);
const LATCH_NODE = new RegExp(`${LATCH_NAME}${SEQ}`);
const LEASE_NODE = new RegExp(`${LEASE_NAME}${SEQ}`);
const READ_WRITE_NODE = new RegExp(`(?:${READ_NAME}|${WRITE_NAME})${SEQ}`);

export type NodeRole = 'lock' | 'latch' | 'lease' | 'read' | 'write' | 'queue-item';

/** What a child's name says it is, or null for a name no recipe gives. */
export function roleOf(name: string): NodeRole | null {
  if (READ_WRITE_NODE.test(name)) return name.lastIndexOf(WRITE_NAME) > name.lastIndexOf(READ_NAME) ? 'write' : 'read';
  if (LATCH_NODE.test(name)) return 'latch';
  if (LEASE_NODE.test(name)) return 'lease';
  if (LOCK_NODE.test(name)) return 'lock';
  if (isQueueItem(name)) return 'queue-item';
  return null;
}

/** The sort key of a read-write lock's node: the sequence after `__READ__` or `__WRIT__` (the names have one length). */
export function readWriteKey(name: string): string {
  return sequenceAfter(sequenceAfter(name, READ_NAME), WRITE_NAME);
}

/** The fields of a curator-x-discovery instance that we read. */
export interface ServiceInstanceJson {
  name: string;
  id: string;
  address?: unknown;
  port?: unknown;
  sslPort?: unknown;
  payload?: unknown;
  registrationTimeUTC?: unknown;
  serviceType?: unknown;
  enabled?: unknown;
}

const MAX_SERVICE_JSON = 256 * 1024;

/** The node's data as a service instance (JsonInstanceSerializer's JSON), or null when it is not one. */
export function parseServiceInstance(data: Buffer): ServiceInstanceJson | null {
  if (data.length < 2 || data.length > MAX_SERVICE_JSON || data[0] !== 0x7b /* { */) return null;
  let v: unknown;
  try {
    v = JSON.parse(data.toString('utf8'));
  } catch {
    return null;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if (typeof o.name !== 'string' || typeof o.id !== 'string') return null;
  if (typeof o.registrationTimeUTC !== 'number' && typeof o.serviceType !== 'string') return null;
  return o as unknown as ServiceInstanceJson;
}
