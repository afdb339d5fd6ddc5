/**
 * TreeCache's local mirror of a subtree: each node's data and Stat as last read, and the names of
 * its cached children. It decides what a read means (created, changed, nothing) and what a NoNode
 * takes away; it does no I/O.
 */
import type { Stat } from '@tenure/client';
import { joinPath, nodeName, parentPath } from '@tenure/protocol';

/** One cached node. `data` and `stat` are as the last read returned them. */
export interface CachedNode {
  readonly path: string;
  readonly data: Buffer;
  readonly stat: Stat;
}

export type CacheEvent =
  | { type: 'initialized' }
  | { type: 'created'; path: string; node: CachedNode }
  | { type: 'changed'; path: string; node: CachedNode; previous: CachedNode }
  | { type: 'deleted'; path: string; previous: CachedNode };

export class CachedTree {
  private readonly nodes = new Map<string, CachedNode>();
  /** Cached children's names by parent path. */
  private readonly kids = new Map<string, Set<string>>();

  /** `maxDepth`: 0 the root only, 1 the root and its children, ... */
  constructor(
    readonly root: string,
    readonly maxDepth: number,
  ) {}

  get(path: string): CachedNode | undefined {
    return this.nodes.get(path);
  }

  has(path: string): boolean {
    return this.nodes.has(path);
  }

  get size(): number {
    return this.nodes.size;
  }

  entries(): IterableIterator<[string, CachedNode]> {
    return this.nodes.entries();
  }

  paths(): IterableIterator<string> {
    return this.nodes.keys();
  }

  /** The cached children's names of `path` (empty when none, or when `path` is not cached). */
  childNames(path: string): ReadonlySet<string> {
    return this.kids.get(path) ?? NONE;
  }

  /** Whether `path` is the root or a node at most maxDepth below it. */
  inScope(path: string): boolean {
    if (path === this.root) return true;
    const prefix = this.root === '/' ? '/' : this.root + '/';
    return path.startsWith(prefix) && this.depthOf(path) <= this.maxDepth;
  }

  /** Whether the children of `path` are cached too (it is above maxDepth). */
  holdsChildrenOf(path: string): boolean {
    return this.depthOf(path) < this.maxDepth;
  }

  /** Stores what a read of `path` returned: `created`, `changed` (czxid or mzxid moved) or no event. */
  put(path: string, data: Buffer, stat: Stat): CacheEvent | null {
    const previous = this.nodes.get(path);
    const node: CachedNode = { path, data, stat };
    this.nodes.set(path, node);
    if (previous === undefined) {
      if (path !== this.root) {
        const parent = parentPath(path);
        let set = this.kids.get(parent);
        if (!set) this.kids.set(parent, (set = new Set()));
        set.add(nodeName(path));
      }
      return { type: 'created', path, node };
    }
    if (previous.stat.mzxid !== stat.mzxid || previous.stat.czxid !== stat.czxid) return { type: 'changed', path, node, previous };
    return null; // only the children-related Stat fields moved: kept, not an event
  }

  /** `path` is gone: it and every cached node below it leave; their `deleted` events, deepest first. */
  remove(path: string, out: CacheEvent[] = []): CacheEvent[] {
    const previous = this.nodes.get(path);
    if (previous === undefined) return out;
    for (const name of [...this.childNames(path)]) this.remove(joinPath(path, name), out);
    this.kids.delete(path);
    this.nodes.delete(path);
    if (path !== this.root) {
      const siblings = this.kids.get(parentPath(path));
      siblings?.delete(nodeName(path));
      if (siblings?.size === 0) this.kids.delete(parentPath(path));
    }
    out.push({ type: 'deleted', path, previous });
    return out;
  }

  clear(): void {
    this.nodes.clear();
    this.kids.clear();
  }

  private depthOf(path: string): number {
    if (path === this.root) return 0;
    const rest = this.root === '/' ? path.slice(1) : path.slice(this.root.length + 1);
    return rest.split('/').length;
  }
}

const NONE: ReadonlySet<string> = new Set();
