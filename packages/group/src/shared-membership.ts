/**
 * A membership snapshot, shared read-only by this process's GroupMembers of one group and client
 * (as Curator's ImmutableMap): one Map per change for all of them, not one per member.
 */
import { IllegalStateError } from '@tenure/client';

const readOnly = (): never => {
  throw new IllegalStateError('GroupMember: a membership snapshot is shared and read-only; copy it (new Map(members)) to change it');
};

export class SharedMembership extends Map<string, Buffer> {
  /**
   * @param generation the mirror's count of published snapshots (0 for an empty one)
   * @param replacedAt the latest generation in which a member's node was replaced by a new one
   *   (a leave and a return folded into one read: same id, maybe the same payload, a new node)
   */
  private constructor(
    readonly generation: number,
    readonly replacedAt: number,
  ) {
    super();
  }

  static of(entries: Iterable<readonly [string, Buffer]>, generation = 0, replacedAt = 0): SharedMembership {
    const m = new SharedMembership(generation, replacedAt);
    for (const [k, v] of entries) Map.prototype.set.call(m, k, v);
    return m;
  }

  override set(): this {
    return readOnly();
  }

  override delete(): boolean {
    return readOnly();
  }

  override clear(): void {
    readOnly();
  }
}

/** Same ids with the same payload bytes (node identity aside). */
export function sameMembership(a: ReadonlyMap<string, Buffer>, b: ReadonlyMap<string, Buffer>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, payload] of a) {
    const other = b.get(id);
    if (other === undefined || (other !== payload && !other.equals(payload))) return false;
  }
  return true;
}
