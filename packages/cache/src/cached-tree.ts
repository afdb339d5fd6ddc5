/**
 * TreeCache's local mirror of a subtree: each node's data and Stat as last read, and the names of
 * its cached children. It decides what a read means (created, changed, nothing) and what a NoNode
 * takes away; it does no I/O.
 */
import type { Stat } from '@tenure/client';
import { joinPath, nodeName, parentPath } from '@tenure/protocol';

/** One cached node. `data` and `stat` are as the last read returned them (`data` empty where data is not kept). */
export interface CachedNode {
  readonly path: string;
  readonly data: Buffer;
  readonly stat: Stat;
}

/**
 * Which nodes a TreeCache holds (Curator's TreeCacheSelector), asked with full paths. Each method
 * is optional (default true) and must answer the same for a path every time.
 */
export interface TreeCacheSelector {
  /** Whether the children of `path` are read and watched (false: `path` is a leaf of the cache). */
  traverseChildren?(path: string): boolean;
  /** Whether the child `path` is cached at all, with its subtree (false: not read, not watched). */
  acceptChild?(path: string): boolean;
  /** Whether the data of `path` is kept (false: its Stat only, `data` empty). */
  keepData?(path: string): boolean;
}

/** What the tree holds besides its depth: the selector and whether any data is kept. */
export interface TreePolicy {
  selector?: TreeCacheSelector;
  /** false: Stats only, for every node (Curator's `withDataNotCached`). Default true. */
  cacheData?: boolean;
}

const EMPTY = Buffer.alloc(0);

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
  private readonly selector: TreeCacheSelector;
  private readonly cacheData: boolean;

  constructor(
    readonly root: string,
    readonly maxDepth: number,
    policy: TreePolicy = {},
  ) {
    this.selector = policy.selector ?? {};
    this.cacheData = policy.cacheData ?? true;
  }

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

  /**
   * Whether `path` is cached when it exists: the root, or a node at most maxDepth below it that the
   * selector accepts, each of its ancestors accepted and traversed. Pure: no I/O, no cached state.
   */
  inScope(path: string): boolean {
    if (path === this.root) return true;
    const prefix = this.root === '/' ? '/' : this.root + '/';
    if (!path.startsWith(prefix) || this.depthOf(path) > this.maxDepth) return false;
    const selector = this.selector;
    if (!selector.traverseChildren && !selector.acceptChild) return true;
    let parent = this.root;
    for (let at = prefix.length; ;) {
      if (selector.traverseChildren && !selector.traverseChildren(parent)) return false;
      const slash = path.indexOf('/', at);
      const node = slash < 0 ? path : path.slice(0, slash);
      if (selector.acceptChild && !selector.acceptChild(node)) return false;
      if (slash < 0) return true;
      parent = node;
      at = slash + 1;
    }
  }

  /** Whether the children of `path` are cached too (it is above maxDepth, and the selector traverses it). */
  holdsChildrenOf(path: string): boolean {
    if (this.depthOf(path) >= this.maxDepth) return false;
    return this.selector.traverseChildren?.(path) ?? true;
  }

  /** Whether a child of a node whose children are held is cached (the selector's acceptChild). */
  acceptsChild(path: string): boolean {
    return this.selector.acceptChild?.(path) ?? true;
  }

  /** Whether the data of `path` is kept, or only its Stat. */
  keepsData(path: string): boolean {
    return this.cacheData && (this.selector.keepData?.(path) ?? true);
  }

  /** Stores what a read of `path` returned: `created`, `changed` (czxid or mzxid moved) or no event. */
  put(path: string, data: Buffer, stat: Stat): CacheEvent | null {
    const previous = this.nodes.get(path);
    const node: CachedNode = { path, data: this.keepsData(path) ? data : EMPTY, stat };
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
