/**
 * The data tree's nodes by full path, with no entry per path: a lookup walks the children maps
 * from the root, and a walk builds each path from its parent's. A million-node tree so holds no
 * full-path string and no path-table entry per node (~40 bytes each), only the name in its
 * parent's map.
 */
import type { ZNode } from './znode.js';

const SLASH = 47;

/** The node at an absolute path ('/a/b'); undefined for a missing node or a malformed path. */
export function findNode(root: ZNode | undefined, path: string): ZNode | undefined {
  if (root === undefined || path.charCodeAt(0) !== SLASH) return undefined;
  if (path.length === 1) return root;
  let node: ZNode | undefined = root;
  let from = 1;
  for (;;) {
    const slash = path.indexOf('/', from);
    node = node.child(slash < 0 ? path.slice(from) : path.slice(from, slash));
    if (node === undefined || slash < 0) return node;
    from = slash + 1;
  }
}

/**
 * Every node depth-first, parents before children, children in creation order (ZooKeeper's
 * snapshot order). Live, like a Map's iterator: a walk paused between calls (a fuzzy snapshot's
 * slices) sees later creates under nodes it has not finished and skips deleted nodes.
 */
class TreeWalk<T> implements IterableIterator<T> {
  private root: ZNode | undefined;
  private readonly stack: Array<{ prefix: string; it: Iterator<[string, ZNode]> }> = [];

  constructor(
    root: ZNode | undefined,
    private readonly make: (path: string, node: ZNode) => T,
  ) {
    this.root = root;
  }

  [Symbol.iterator](): this {
    return this;
  }

  next(): IteratorResult<T> {
    const root = this.root;
    if (root !== undefined) {
      this.root = undefined;
      this.stack.push({ prefix: '', it: root.childEntries() });
      return { done: false, value: this.make('/', root) };
    }
    const stack = this.stack;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const step = top.it.next();
      if (step.done === true) {
        stack.pop();
        continue;
      }
      const [name, node] = step.value;
      const path = top.prefix + '/' + name;
      // A leaf gets no iterator: its children, if any come later, are newer than the walk.
      if (node.childCount > 0) stack.push({ prefix: path, it: node.childEntries() });
      return { done: false, value: this.make(path, node) };
    }
    return { done: true, value: undefined };
  }
}

/** The read side of a Map<path, ZNode>, over the tree (what `DataTree.nodes` hands out). */
export class TreePaths implements Iterable<[string, ZNode]> {
  constructor(
    private readonly root: () => ZNode | undefined,
    private readonly count: () => number,
  ) {}

  get size(): number {
    return this.count();
  }

  get(path: string): ZNode | undefined {
    return findNode(this.root(), path);
  }

  has(path: string): boolean {
    return findNode(this.root(), path) !== undefined;
  }

  entries(): IterableIterator<[string, ZNode]> {
    return new TreeWalk(this.root(), (path, node): [string, ZNode] => [path, node]);
  }

  keys(): IterableIterator<string> {
    return new TreeWalk(this.root(), (path) => path);
  }

  values(): IterableIterator<ZNode> {
    return new TreeWalk(this.root(), (_path, node) => node);
  }

  [Symbol.iterator](): IterableIterator<[string, ZNode]> {
    return this.entries();
  }
}
