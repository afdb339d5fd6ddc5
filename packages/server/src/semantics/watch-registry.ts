/**
 * Server-side watches, with ZooKeeper 3.8's rules (WatchManager and DataTree):
 * - two tables, data (getData/exists watches) and child (getChildren watches);
 * - a watcher (one connection) holds one mode per path per table: standard (one-shot), persistent
 *   or persistent-recursive. Registering again replaces the mode, so a one-shot getData watch set
 *   after addWatch(PERSISTENT) on the same path turns that data entry back into a one-shot watch;
 * - addWatch puts its mode in both tables;
 * - a trigger notifies the watchers of the path and, when recursive watches exist, the recursive
 *   watchers of every ancestor (never for NodeChildrenChanged); one-shot entries are removed.
 */
import type { ACL, WatcherEvent } from '@tenure/protocol';
import { EventType, KeeperState, WatcherType } from '@tenure/protocol';
import { parentPath } from '@tenure/protocol';

export const WatchMode = { Standard: 0, Persistent: 1, PersistentRecursive: 2 } as const;
export type WatchMode = (typeof WatchMode)[keyof typeof WatchMode];

export type WatchSide = 'data' | 'child';

/** A connection as the watch tables see it: its mode per path on each side, made on first use. */
export interface Watcher {
  watchModes(side: WatchSide, create: true): Map<string, WatchMode>;
  watchModes(side: WatchSide, create?: boolean): Map<string, WatchMode> | undefined;
  /**
   * Delivers an event about a node whose ACL is `acl`: ZooKeeper (3.8.4+, CVE-2024-23944, and
   * Debian's patched 3.8.0) drops it silently unless the connection may READ that node.
   * SetWatches catch-up events come without an ACL and are never filtered.
   */
  notify(event: WatcherEvent, zxid: bigint, acl?: readonly ACL[]): void;
}

type Side = WatchSide;

class WatchTable {
  private readonly byPath = new Map<string, Set<Watcher>>();
  private recursive = 0;

  constructor(private readonly side: Side) {}

  get pathCount(): number {
    return this.byPath.size;
  }

  add(path: string, w: Watcher, mode: WatchMode): void {
    let set = this.byPath.get(path);
    if (set === undefined) {
      set = new Set();
      this.byPath.set(path, set);
    }
    set.add(w);
    const modes = w.watchModes(this.side, true);
    if (modes.get(path) === WatchMode.PersistentRecursive) this.recursive--;
    modes.set(path, mode);
    if (mode === WatchMode.PersistentRecursive) this.recursive++;
  }

  has(path: string, w: Watcher, mode?: WatchMode): boolean {
    const m = w.watchModes(this.side)?.get(path);
    return m !== undefined && (mode === undefined || m === mode);
  }

  /** Removes w's entry for path (only when its mode is `mode`, if given). */
  remove(path: string, w: Watcher, mode?: WatchMode): boolean {
    const modes = w.watchModes(this.side);
    const m = modes?.get(path);
    if (modes === undefined || m === undefined || (mode !== undefined && m !== mode)) return false;
    modes.delete(path);
    if (m === WatchMode.PersistentRecursive) this.recursive--;
    const set = this.byPath.get(path);
    if (set !== undefined) {
      set.delete(w);
      if (set.size === 0) this.byPath.delete(path);
    }
    return true;
  }

  removeWatcher(w: Watcher): void {
    const modes = w.watchModes(this.side);
    if (modes === undefined) return;
    for (const [path, m] of modes) {
      if (m === WatchMode.PersistentRecursive) this.recursive--;
      const set = this.byPath.get(path);
      if (set !== undefined) {
        set.delete(w);
        if (set.size === 0) this.byPath.delete(path);
      }
    }
    modes.clear();
  }

  /** Whether an event on `path` could reach anyone (cheap, allocation-free). */
  mayNotify(path: string): boolean {
    return this.recursive > 0 || this.byPath.has(path);
  }

  /** The watchers to notify for an event on `path`; one-shot entries are consumed. */
  collect(path: string, type: number, into: Set<Watcher>): void {
    this.collectAt(path, path, type, into);
    if (this.recursive === 0) return;
    for (let p = parentPath(path); p !== ''; p = parentPath(p)) this.collectAt(p, path, type, into);
  }

  private collectAt(localPath: string, path: string, type: number, into: Set<Watcher>): void {
    const set = this.byPath.get(localPath);
    if (set === undefined) return;
    const atPath = localPath === path;
    for (const w of set) {
      const modes = w.watchModes(this.side, true);
      const mode = modes.get(localPath);
      if (mode === WatchMode.PersistentRecursive) {
        if (type !== EventType.NodeChildrenChanged) into.add(w);
      } else if (atPath) {
        into.add(w);
        if (mode === WatchMode.Standard) {
          set.delete(w);
          modes.delete(localPath);
        }
      }
    }
    if (set.size === 0) this.byPath.delete(localPath);
  }
}

export class WatchRegistry {
  private readonly data = new WatchTable('data');
  private readonly child = new WatchTable('child');

  /** getData / exists with watch. */
  addDataWatch(path: string, w: Watcher): void {
    this.data.add(path, w, WatchMode.Standard);
  }

  /** getChildren with watch. */
  addChildWatch(path: string, w: Watcher): void {
    this.child.add(path, w, WatchMode.Standard);
  }

  /** addWatch: the mode goes into both tables. */
  addPersistent(path: string, w: Watcher, recursive: boolean): void {
    const mode = recursive ? WatchMode.PersistentRecursive : WatchMode.Persistent;
    this.data.add(path, w, mode);
    this.child.add(path, w, mode);
  }

  removeAll(w: Watcher): void {
    this.data.removeWatcher(w);
    this.child.removeWatcher(w);
  }

  /**
   * removeWatches (remove = true) / checkWatches (remove = false) for one WatcherType.
   * Children, Data and Any match any mode in their tables (3.8). Persistent and
   * PersistentRecursive (3.9) match only that mode, in both tables; the request processor refuses
   * them as 3.8 does, they are kept for a 3.9 mode. Returns whether anything matched.
   */
  matchWatches(path: string, w: Watcher, type: number, remove: boolean): boolean {
    const op = remove ? (t: WatchTable, m?: WatchMode) => t.remove(path, w, m) : (t: WatchTable, m?: WatchMode) => t.has(path, w, m);
    switch (type) {
      case WatcherType.Children:
        return op(this.child);
      case WatcherType.Data:
        return op(this.data);
      case WatcherType.Any: {
        const c = op(this.child);
        const d = op(this.data);
        return c || d;
      }
      case WatcherType.Persistent: {
        const c = op(this.child, WatchMode.Persistent);
        const d = op(this.data, WatchMode.Persistent);
        return c || d;
      }
      case WatcherType.PersistentRecursive: {
        const c = op(this.child, WatchMode.PersistentRecursive);
        const d = op(this.data, WatchMode.PersistentRecursive);
        return c || d;
      }
      default:
        return false;
    }
  }

  /** A node was created: NodeCreated on it, NodeChildrenChanged on its parent. */
  created(path: string, zxid: bigint, acl: readonly ACL[], parentAcl: readonly ACL[]): void {
    this.fire(this.data, path, EventType.NodeCreated, zxid, acl);
    this.fire(this.child, parentOrRoot(path), EventType.NodeChildrenChanged, zxid, parentAcl);
  }

  /** A node was deleted: one NodeDeleted per watcher of it, NodeChildrenChanged on its parent. */
  deleted(path: string, zxid: bigint, acl: readonly ACL[], parentAcl: readonly ACL[]): void {
    const notified = this.fire(this.data, path, EventType.NodeDeleted, zxid, acl);
    this.fire(this.child, path, EventType.NodeDeleted, zxid, acl, notified);
    this.fire(this.child, parentOrRoot(path), EventType.NodeChildrenChanged, zxid, parentAcl);
  }

  /** A node's data was set. */
  changed(path: string, zxid: bigint, acl: readonly ACL[]): void {
    this.fire(this.data, path, EventType.NodeDataChanged, zxid, acl);
  }

  /** Watchers that match are consumed (one-shot) even when the ACL then hides the event from them. */
  private fire(
    table: WatchTable,
    path: string,
    type: number,
    zxid: bigint,
    acl: readonly ACL[],
    suppress?: Set<Watcher>,
  ): Set<Watcher> | undefined {
    if (!table.mayNotify(path)) return undefined;
    const targets = new Set<Watcher>();
    table.collect(path, type, targets);
    if (targets.size === 0) return undefined;
    const event: WatcherEvent = { type, state: KeeperState.SyncConnected, path };
    for (const w of targets) if (suppress === undefined || !suppress.has(w)) w.notify(event, zxid, acl);
    return targets;
  }
}

function parentOrRoot(path: string): string {
  const p = parentPath(path);
  return p === '' ? '/' : p;
}

/** The number of watch entries a watcher holds (a persistent watch counts once per table). */
export function watchCount(w: Watcher): number {
  return (w.watchModes('data')?.size ?? 0) + (w.watchModes('child')?.size ?? 0);
}
