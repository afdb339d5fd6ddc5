/**
 * The data tree: nodes linked under their parents by name (tree-paths.ts finds them by path), the ephemerals of each session, and the container and TTL
 * nodes the reaper looks at. Mutations here are unconditional (the request processor validated
 * them) and can hand back an undo step so that a failing multi rolls back.
 */
import type { ACL } from '@tenure/protocol';
import { OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, nodeName, parentPath } from '@tenure/protocol';
import { TreePaths, findNode } from './tree-paths.js';
import { ZNode, ownerKind } from './znode.js';

export type Undo = () => void;

/**
 * A write evaluated on the tree and then rolled back (replicated/write-trial.ts): the paths it
 * read, the nodes and children lists it changed, and the undo steps of every mutation.
 */
export interface TreeRecorder {
  readonly reads: Set<string>;
  /** The path each node read was found at (setData and setAcl are handed the node). */
  readonly found: Map<ZNode, string>;
  readonly nodes: Set<string>;
  readonly children: Set<string>;
  readonly undo: Undo[];
}

/** Paths ZooKeeper refuses to delete. */
export const SPECIAL_PATHS: ReadonlySet<string> = new Set(['/', '/zookeeper', '/zookeeper/quota', '/zookeeper/config']);

export class DataTree {
  private root: ZNode | undefined;
  private count = 0;
  /** The nodes by full path (looked up and walked from the root: no table of paths is kept). */
  readonly nodes = new TreePaths(
    () => this.root,
    () => this.count,
  );
  /** Session id → paths of its ephemerals, in creation order. */
  readonly ephemerals = new Map<bigint, Set<string>>();
  readonly containers = new Set<string>();
  readonly ttls = new Set<string>();
  /** Set while a write is being evaluated for a replicated store: reads and changes are recorded. */
  recorder: TreeRecorder | undefined = undefined;

  constructor(readonly ttlEnabled: boolean) {
    this.root = new ZNode(Buffer.alloc(0), OPEN_ACL_UNSAFE, 0n, 0, 0n);
    this.count = 1;
    this.attach('/zookeeper', new ZNode(Buffer.alloc(0), OPEN_ACL_UNSAFE, 0n, 0, 0n));
    this.attach('/zookeeper/quota', new ZNode(Buffer.alloc(0), OPEN_ACL_UNSAFE, 0n, 0, 0n));
    const config = new ZNode(Buffer.alloc(0), READ_ACL_UNSAFE, 0n, 0, 0n);
    config.aversion = -1; // ZooKeeper sets its ACL with "version" -1, which lands in aversion
    this.attach('/zookeeper/config', config);
  }

  /** System nodes are linked without touching the parent's cversion, as in ZooKeeper. */
  private attach(path: string, node: ZNode): void {
    findNode(this.root, parentOrRoot(path))!.addChild(nodeName(path), node);
    this.count++;
  }

  /**
   * Empties the tree, root and system nodes included, for a load from a snapshot (storage/):
   * the loader then `restore`s every node, parents first.
   */
  reset(): void {
    this.root = undefined;
    this.count = 0;
    this.ephemerals.clear();
    this.containers.clear();
    this.ttls.clear();
  }

  /** Puts a loaded node in place: the root, or a child linked under its (loaded) parent, stats untouched. */
  restore(path: string, node: ZNode): void {
    if (path === '/') {
      if (this.root === undefined) this.count++;
      this.root = node;
      return;
    }
    this.attach(path, node);
    this.index(path, node.ephemeralOwner, true);
  }

  /**
   * `restore` of a child whose loaded parent the caller holds, with its name (no lookup of the
   * parent); `parentPath` is '' for the root, and only an owned node's path is built from it.
   * False when the path was there already (the loader's damage check); the tree is then not to be used.
   */
  restoreChild(parent: ZNode, parentPath: string, name: string, node: ZNode): boolean {
    if (!parent.addChild(name, node)) return false;
    this.count++;
    const owner = node.ephemeralOwner;
    if (owner !== 0n) this.index(`${parentPath}/${name}`, owner, true);
    return true;
  }

  /** The node at `path`; '' is the root too, as in ZooKeeper (whose tree keeps the root under both). */
  get(path: string): ZNode | undefined {
    const key = path === '' ? '/' : path;
    const node = findNode(this.root, key);
    if (this.recorder !== undefined) {
      this.recorder.reads.add(key);
      if (node !== undefined) this.recorder.found.set(node, key);
    }
    return node;
  }

  /** The ACL of a path's parent (the root's for top-level nodes). */
  parentAcl(path: string): readonly ACL[] {
    return findNode(this.root, parentOrRoot(path))?.acl ?? [];
  }

  /**
   * Links a new node under its (existing) parent and bumps the parent's cversion. A caller that
   * has just looked the parent up hands it in (`parent`), so it is not looked up again.
   */
  create(
    path: string,
    data: Buffer | null,
    acl: readonly ACL[],
    owner: bigint,
    zxid: bigint,
    time: number,
    undo?: Undo[],
    parent: ZNode = findNode(this.root, parentOrRoot(path))!,
  ): ZNode {
    const name = nodeName(path);
    const node = new ZNode(data, acl, zxid, time, owner);
    if (this.recorder !== undefined) this.record(path, parentOrRoot(path));
    const prevCversion = parent.cversion;
    const prevPzxid = parent.pzxid;
    parent.addChild(name, node);
    this.count++;
    parent.cversion = prevCversion + 1;
    parent.pzxid = zxid;
    this.index(path, owner, true);
    this.undoable(undo, () => {
      parent.removeChild(name);
      parent.cversion = prevCversion;
      parent.pzxid = prevPzxid;
      this.count--;
      this.index(path, owner, false);
    });
    return node;
  }

  /** Unlinks a node (which has no children). The parent's cversion does not change, as in 3.8. */
  delete(path: string, zxid: bigint, undo?: Undo[]): void {
    const parent = findNode(this.root, parentOrRoot(path));
    const name = nodeName(path);
    const node = parent?.child(name);
    if (parent === undefined || node === undefined) return;
    const prevPzxid = parent.pzxid;
    this.record(path, parentOrRoot(path));
    parent.removeChild(name);
    if (zxid > parent.pzxid) parent.pzxid = zxid;
    this.count--;
    this.index(path, node.ephemeralOwner, false);
    this.undoable(undo, () => {
      parent.addChild(name, node);
      parent.pzxid = prevPzxid;
      this.count++;
      this.index(path, node.ephemeralOwner, true);
    });
  }

  setData(node: ZNode, data: Buffer | null, version: number, zxid: bigint, time: number, undo?: Undo[]): void {
    if (undo !== undefined || this.recorder !== undefined) {
      // Only a multi or a recorded write can be rolled back: a plain setData keeps no copy of the old data.
      const prev = { data: node.data, version: node.version, mzxid: node.mzxid, mtime: node.mtime };
      this.recordNode(node);
      this.undoable(undo, () => {
        node.data = prev.data;
        node.version = prev.version;
        node.mzxid = prev.mzxid;
        node.mtime = prev.mtime;
      });
    }
    node.data = data;
    node.version = version;
    node.mzxid = zxid;
    node.mtime = time;
  }

  setAcl(node: ZNode, acl: readonly ACL[], aversion: number, undo?: Undo[]): void {
    const prevAcl = node.acl;
    const prevAversion = node.aversion;
    this.recordNode(node);
    node.acl = acl;
    node.aversion = aversion;
    this.undoable(undo, () => {
      node.acl = prevAcl;
      node.aversion = prevAversion;
    });
  }

  /** Descendants of a node, not counting the node itself. */
  countDescendants(path: string): number {
    if (path === '/') return this.count - 1;
    const node = findNode(this.root, path);
    if (node === undefined) return 0;
    let n = 0;
    const stack: ZNode[] = [node];
    while (stack.length > 0) {
      for (const [, c] of stack.pop()!.childEntries()) {
        n++;
        if (c.childCount > 0) stack.push(c);
      }
    }
    return n;
  }

  /** An undo step goes to the caller's list and, while recording, to the recorder's. */
  private undoable(undo: Undo[] | undefined, step: Undo): void {
    undo?.push(step);
    this.recorder?.undo.push(step);
  }

  private record(path: string, parent: string): void {
    const r = this.recorder;
    if (r === undefined) return;
    r.nodes.add(path);
    r.children.add(parent);
  }

  private recordNode(node: ZNode): void {
    const r = this.recorder;
    if (r === undefined) return;
    const path = r.found.get(node);
    if (path !== undefined) r.nodes.add(path);
  }

  private index(path: string, owner: bigint, add: boolean): void {
    switch (ownerKind(owner, this.ttlEnabled)) {
      case 'void':
        return;
      case 'container':
        if (add) this.containers.add(path);
        else this.containers.delete(path);
        return;
      case 'ttl':
        if (add) this.ttls.add(path);
        else this.ttls.delete(path);
        return;
      case 'session': {
        let set = this.ephemerals.get(owner);
        if (add) {
          if (set === undefined) {
            set = new Set();
            this.ephemerals.set(owner, set);
          }
          set.add(path);
        } else if (set !== undefined) {
          set.delete(path);
          if (set.size === 0) this.ephemerals.delete(owner);
        }
      }
    }
  }
}

export function parentOrRoot(path: string): string {
  const p = parentPath(path);
  return p === '' ? '/' : p;
}
