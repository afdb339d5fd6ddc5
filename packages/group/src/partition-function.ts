/**
 * kazoo's partition function (`SetPartitioner._partitioner`) and ShallowParty's member names,
 * exactly: every member computes the same split from the same party.
 */

/** Which items are ours: `(identifier, members, items) => ours`, as kazoo's `partition_func`. */
export type PartitionFunction = (identifier: string, members: readonly string[], items: readonly string[]) => readonly string[];

/** Python's str order (by code point), which JavaScript's `<` (by UTF-16 unit) is not above U+FFFF. */
export function codePointOrder(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(j)!;
    if (x !== y) return x < y ? -1 : 1;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return i < a.length ? 1 : j < b.length ? -1 : 0;
}

/** `sorted(items)` as Python sorts strings. */
export function pythonSorted(items: Iterable<string>): string[] {
  return [...items].sort(codePointOrder);
}

/**
 * kazoo's default: the items and the members sorted, and the member at index i of the members
 * takes `sorted(items)[i::n]`. A member not in the party takes nothing (kazoo would raise).
 */
export function kazooPartition(identifier: string, members: readonly string[], items: readonly string[]): string[] {
  const all = pythonSorted(items);
  const workers = pythonSorted(members);
  const i = workers.indexOf(identifier);
  if (i < 0) return [];
  return all.filter((_, k) => k % workers.length === i);
}

/** A ShallowParty member's identifier: its node name after the first `-` (the name is `<uuid4 hex>-<identifier>`). */
export function partyMemberId(name: string): string {
  return name.slice(name.indexOf('-') + 1);
}
