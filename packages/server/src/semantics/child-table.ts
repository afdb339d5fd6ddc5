/**
 * A node's children by name, in creation order: what a Map<string, T> gave, faster where a tree
 * is large.
 *
 * A restart inserts every node into its parent's children, and a million children in one Map cost
 * ~0.6 µs an insert: the Map rehashes all its entries at each doubling, and each probe touches the
 * bucket, the entry and the key string, three cache misses in a table of tens of megabytes. Here
 * the entries are two arrays in creation order (holes where deleted), and an open-addressing
 * index (linear probing, at most half full) keeps each entry's hash beside its position, so a
 * probe touches one slot and the key only when the hashes agree, and growing copies slots without
 * hashing a key again. A node with few children has no index: its names are scanned.
 *
 * Iteration is live, as a Map's is (the fuzzy snapshot walks the tree between requests): entries
 * added later are seen, deleted ones are not. When holes outnumber the entries the arrays are
 * compacted into new ones, and the old ones keep where each position went, so an iterator that
 * was walking them continues at the same entry.
 */

/** Up to this many children are found by scanning the names; more build the index. */
const SCAN_MAX = 8;
/** Holes are compacted away once there are at least this many and more than entries. */
const MIN_HOLES = 8;

/** A name's hash (FNV-1a over its UTF-16 units, then mixed so the low bits spread). */
export function nameHash(name: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return h ^ (h >>> 12);
}

/** The entries' arrays; `next` and `moved` are set once they were compacted into `next`. */
interface Run<T> {
  readonly names: (string | undefined)[];
  readonly values: (T | undefined)[];
  next: Run<T> | undefined;
  /** For each old position, the new position of the first entry at or after it. */
  moved: Int32Array | undefined;
}

export class ChildTable<T> {
  private run: Run<T> = { names: [], values: [], next: undefined, moved: undefined };
  /** Pairs of [hash, position + 1] (0: an empty slot); undefined while the names are scanned. */
  private slots: Int32Array | undefined = undefined;
  private holes = 0;
  size = 0;

  get(name: string): T | undefined {
    const at = this.find(name);
    return at < 0 ? undefined : this.run.values[at];
  }

  /** Sets `name` to `value`; whether the name was new (an old entry keeps its place). */
  set(name: string, value: T): boolean {
    const run = this.run;
    const slots = this.slots;
    if (slots === undefined) {
      const at = this.scan(name);
      if (at >= 0) {
        run.values[at] = value;
        return false;
      }
      run.names.push(name);
      run.values.push(value);
      if (++this.size > SCAN_MAX) this.index();
      return true;
    }
    const hash = nameHash(name);
    const s = this.probe(slots, hash, name);
    const pos = slots[2 * s + 1]!;
    if (pos !== 0) {
      run.values[pos - 1] = value;
      return false;
    }
    slots[2 * s] = hash;
    slots[2 * s + 1] = run.names.push(name);
    run.values.push(value);
    if (++this.size * 2 > slots.length >> 1) this.growIndex();
    return true;
  }

  delete(name: string): boolean {
    const at = this.slots === undefined ? this.scan(name) : this.unindex(name);
    if (at < 0) return false;
    this.run.names[at] = undefined;
    this.run.values[at] = undefined;
    this.size--;
    if (++this.holes >= MIN_HOLES && this.holes > this.size) this.compact();
    return true;
  }

  keys(): IterableIterator<string> {
    return new RunIterator(this.run, (name) => name);
  }

  entries(): IterableIterator<[string, T]> {
    return new RunIterator<T, [string, T]>(this.run, (name, value) => [name, value]);
  }

  /** The names in creation order, as one array (getChildren's answer). */
  names(): string[] {
    const out: string[] = [];
    for (const name of this.run.names) if (name !== undefined) out.push(name);
    return out;
  }

  private find(name: string): number {
    const slots = this.slots;
    if (slots === undefined) return this.scan(name);
    return slots[2 * this.probe(slots, nameHash(name), name) + 1]! - 1;
  }

  /** The slot that holds `name`, or the empty slot where it would go. */
  private probe(slots: Int32Array, hash: number, name: string): number {
    const mask = (slots.length >> 1) - 1;
    const names = this.run.names;
    let s = hash & mask;
    for (let pos = slots[2 * s + 1]!; pos !== 0; s = (s + 1) & mask, pos = slots[2 * s + 1]!) {
      if (slots[2 * s] === hash && names[pos - 1] === name) return s;
    }
    return s;
  }

  private scan(name: string): number {
    const names = this.run.names;
    for (let i = 0; i < names.length; i++) if (names[i] === name) return i;
    return -1;
  }

  /** Removes `name` from the index (shifting back the probe run after it); its position or -1. */
  private unindex(name: string): number {
    const slots = this.slots!;
    const mask = (slots.length >> 1) - 1;
    const s = this.probe(slots, nameHash(name), name);
    const at = slots[2 * s + 1]! - 1;
    if (at < 0) return -1;
    // Backward-shift deletion: each later slot of the probe run moves into the hole when the hole
    // lies between its home slot and where it sits.
    let hole = s;
    for (let j = (s + 1) & mask; slots[2 * j + 1] !== 0; j = (j + 1) & mask) {
      const home = slots[2 * j]! & mask;
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        slots[2 * hole] = slots[2 * j]!;
        slots[2 * hole + 1] = slots[2 * j + 1]!;
        hole = j;
      }
    }
    slots[2 * hole + 1] = 0;
    return at;
  }

  /** Builds the index for every entry (positions hashed anew). */
  private index(): void {
    let cap = 16;
    while (cap < this.size * 2) cap *= 2;
    const slots = new Int32Array(cap * 2);
    const mask = cap - 1;
    const names = this.run.names;
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      if (name === undefined) continue;
      place(slots, mask, nameHash(name), i + 1);
    }
    this.slots = slots;
  }

  /** Doubles the index, moving slots by their kept hashes. */
  private growIndex(): void {
    const old = this.slots!;
    const cap = old.length; // twice the old capacity
    const slots = new Int32Array(cap * 2);
    const mask = cap - 1;
    for (let o = 0; o < old.length; o += 2) {
      const pos = old[o + 1]!;
      if (pos === 0) continue;
      place(slots, mask, old[o]!, pos);
    }
    this.slots = slots;
  }

  /** New arrays without the holes; the old ones say where each position went. */
  private compact(): void {
    const old = this.run;
    const next: Run<T> = { names: [], values: [], next: undefined, moved: undefined };
    const moved = new Int32Array(old.names.length + 1);
    for (let i = 0; i < old.names.length; i++) {
      moved[i] = next.names.length;
      const name = old.names[i];
      if (name === undefined) continue;
      next.names.push(name);
      next.values.push(old.values[i]);
    }
    moved[old.names.length] = next.names.length;
    old.moved = moved;
    old.next = next;
    this.run = next;
    this.holes = 0;
    if (this.slots !== undefined) this.index();
  }
}

/** Puts [hash, pos] in the first empty slot from the hash's home (a name known not to be there). */
function place(slots: Int32Array, mask: number, hash: number, pos: number): void {
  let s = hash & mask;
  while (slots[2 * s + 1] !== 0) s = (s + 1) & mask;
  slots[2 * s] = hash;
  slots[2 * s + 1] = pos;
}

/** A live walk of a table's entries in order; see ChildTable. */
class RunIterator<T, R> implements IterableIterator<R> {
  private at = 0;

  constructor(
    private run: Run<T>,
    private readonly pick: (name: string, value: T) => R,
  ) {}

  next(): IteratorResult<R> {
    let run = this.run;
    let i = this.at;
    while (run.next !== undefined) {
      i = run.moved![Math.min(i, run.names.length)]!;
      run = run.next;
    }
    this.run = run;
    const names = run.names;
    for (; i < names.length; i++) {
      const name = names[i];
      if (name !== undefined) {
        this.at = i + 1;
        return { value: this.pick(name, run.values[i]!), done: false };
      }
    }
    this.at = i;
    return { value: undefined, done: true };
  }

  [Symbol.iterator](): IterableIterator<R> {
    return this;
  }
}
