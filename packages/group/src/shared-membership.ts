/**
 * A membership snapshot, shared read-only by this process's GroupMembers of one group and client
 * (as Curator's ImmutableMap): one Map per change for all of them, not one per member.
 */
import { IllegalStateError } from '@tenure/client';

const readOnly = (): never => {
  throw new IllegalStateError('GroupMember: a membership snapshot is shared and read-only; copy it (new Map(members)) to change it');
};

export class SharedMembership extends Map<string, Buffer> {
  static of(entries: Iterable<readonly [string, Buffer]>): SharedMembership {
    const m = new SharedMembership();
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
