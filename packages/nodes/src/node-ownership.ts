/**
 * Who owns an existing node, judged from its Stat against this client's sessions: the ownership
 * rule PersistentNode applies before adopting a node it finds in its place.
 */
import { CONTAINER_EPHEMERAL_OWNER, ttlFromEphemeralOwner, type Stat } from '@tenure/protocol';

/**
 * - `ours`: an ephemeral of the current session, or a node with no session owner (persistent,
 *   container, TTL): adopt it, as Curator does;
 * - `stale`: an ephemeral of a previous session of this same client: delete it and create ours;
 * - `foreign`: an ephemeral of another live session: leave it alone.
 */
export type Ownership = 'ours' | 'stale' | 'foreign';

/** The session that owns `stat`'s node, or 0n when it is not an ephemeral. */
export function sessionOwner(stat: Stat): bigint {
  const owner = stat.ephemeralOwner;
  if (owner === 0n || owner === CONTAINER_EPHEMERAL_OWNER || ttlFromEphemeralOwner(owner) !== undefined) return 0n;
  return owner;
}

export function judgeOwnership(stat: Stat, sessionId: bigint, previousSessionIds: readonly bigint[]): Ownership {
  const owner = sessionOwner(stat);
  if (owner === 0n || owner === sessionId) return 'ours';
  return previousSessionIds.includes(owner) ? 'stale' : 'foreign';
}
