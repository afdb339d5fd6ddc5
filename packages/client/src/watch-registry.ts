/**
 * Every watch the client holds, keyed by server path (namespace included, chroot excluded), so
 * that events can be routed and all watches re-registered after a reconnect (SetWatches).
 *
 * Routing follows ZooKeeper's client: NodeCreated/NodeDataChanged fire the data and exist watchers
 * of the path; NodeChildrenChanged the child watchers; NodeDeleted all three. One-shot watchers are
 * removed as they fire. Persistent watchers on the exact path see every event; recursive watchers
 * on the path or an ancestor see all but NodeChildrenChanged.
 */
import { EventType, WatcherType, ancestors } from '@tenure/protocol';
import type { Logger } from './logger.js';
import type { Namespace } from './namespace.js';
import { eventTypeName, type WatchCallback, type WatchEvent } from './watch-events.js';

export type OneShotKind = 'data' | 'exist' | 'child';

/** The receiving end of a persistent watch. */
export interface PersistentSink {
  readonly ns: Namespace;
  deliver(event: WatchEvent): void;
  reset(reason: 'LOST' | 'RECONNECTED'): void;
  /** The watch was removed without the owner asking (client closed, removeWatches). */
  end(): void;
}

type Watchers = Map<WatchCallback, Namespace>;

export interface WatchLists {
  dataWatches: string[];
  existWatches: string[];
  childWatches: string[];
  persistentWatches: string[];
  persistentRecursiveWatches: string[];
}

export class WatchRegistry {
  private readonly data = new Map<string, Watchers>();
  private readonly exist = new Map<string, Watchers>();
  private readonly child = new Map<string, Watchers>();
  private readonly persistent = new Map<string, Set<PersistentSink>>();
  private readonly recursive = new Map<string, Set<PersistentSink>>();

  constructor(private readonly logger: Logger) {}

  addOneShot(kind: OneShotKind, path: string, callback: WatchCallback, ns: Namespace): void {
    const map = this[kind];
    let w = map.get(path);
    if (!w) map.set(path, (w = new Map() as Watchers));
    w.set(callback, ns);
  }

  addPersistent(path: string, recursive: boolean, sink: PersistentSink): void {
    const map = recursive ? this.recursive : this.persistent;
    let s = map.get(path);
    if (!s) map.set(path, (s = new Set()));
    s.add(sink);
  }

  /** Removes a persistent sink; true when no sink of that mode remains on the path. */
  removePersistent(path: string, recursive: boolean, sink: PersistentSink): boolean {
    const map = recursive ? this.recursive : this.persistent;
    const s = map.get(path);
    if (!s) return true;
    s.delete(sink);
    if (s.size > 0) return false;
    map.delete(path);
    return true;
  }

  /** Whether `callback` is still registered as a one-shot watch of `kind` on `path`. */
  holdsOneShot(kind: OneShotKind, path: string, callback: WatchCallback): boolean {
    return this[kind].get(path)?.has(callback) === true;
  }

  get isEmpty(): boolean {
    return this.data.size + this.exist.size + this.child.size + this.persistent.size + this.recursive.size === 0;
  }

  get hasPersistent(): boolean {
    return this.persistent.size + this.recursive.size > 0;
  }

  /** The number of (path, kind) registrations: what the server would hold for this client. */
  get size(): number {
    return this.data.size + this.exist.size + this.child.size + this.persistent.size + this.recursive.size;
  }

  /** Routes a server notification. */
  dispatch(type: number, path: string, zxid: bigint): void {
    const name = eventTypeName(type);
    if (name === undefined) {
      this.logger.warn({ type, path }, 'ignoring a watch event of unknown type');
      return;
    }
    let fire: Watchers | undefined;
    const take = (map: Map<string, Watchers>): void => {
      const w = map.get(path);
      if (!w) return;
      map.delete(path);
      if (!fire) fire = w;
      else for (const [cb, ns] of w) fire.set(cb, ns);
    };
    switch (type) {
      case EventType.NodeCreated:
      case EventType.NodeDataChanged:
        take(this.data);
        take(this.exist);
        break;
      case EventType.NodeChildrenChanged:
        take(this.child);
        break;
      case EventType.NodeDeleted:
        take(this.data);
        take(this.exist);
        take(this.child);
        break;
    }
    const withZxid = zxid >= 0n;
    if (fire) {
      for (const [cb, ns] of fire) {
        const ev: WatchEvent = { type: name, path: ns.fromServer(path) };
        if (withZxid) ev.zxid = zxid;
        this.call(cb, ev);
      }
    }
    if (this.persistent.size > 0) {
      const sinks = this.persistent.get(path);
      if (sinks) for (const s of [...sinks]) this.deliver(s, name, path, zxid);
    }
    if (this.recursive.size > 0 && type !== EventType.NodeChildrenChanged) {
      const hit = (p: string): void => {
        const sinks = this.recursive.get(p);
        if (sinks) for (const s of [...sinks]) this.deliver(s, name, path, zxid);
      };
      hit(path);
      for (const a of ancestors(path)) hit(a);
    }
  }

  /**
   * Removes one-shot watchers of `type` (Data covers data and exist watches, Children child
   * watches, Any both) on `path`: all of them, or only `callback`. Each removed watcher receives
   * DataWatchRemoved / ChildWatchRemoved. Returns how many were removed.
   */
  removeOneShot(path: string, type: number, callback: WatchCallback | undefined): number {
    let removed = 0;
    const strip = (map: Map<string, Watchers>, evType: 'DataWatchRemoved' | 'ChildWatchRemoved'): void => {
      const w = map.get(path);
      if (!w) return;
      const victims = callback ? (w.has(callback) ? [[callback, w.get(callback)!] as const] : []) : [...w];
      for (const [cb, ns] of victims) {
        w.delete(cb);
        removed++;
        this.call(cb, { type: evType, path: ns.fromServer(path) });
      }
      if (w.size === 0) map.delete(path);
    };
    if (type === WatcherType.Data || type === WatcherType.Any) {
      strip(this.data, 'DataWatchRemoved');
      strip(this.exist, 'DataWatchRemoved');
    }
    if (type === WatcherType.Children || type === WatcherType.Any) strip(this.child, 'ChildWatchRemoved');
    return removed;
  }

  /** Removes one one-shot callback of `kind` on `path` (it receives its *WatchRemoved event); false if it was not there. */
  removeOneShotOf(kind: OneShotKind, path: string, callback: WatchCallback): boolean {
    const map = this[kind];
    const w = map.get(path);
    const ns = w?.get(callback);
    if (!w || ns === undefined) return false;
    w.delete(callback);
    if (w.size === 0) map.delete(path);
    this.call(callback, { type: kind === 'child' ? 'ChildWatchRemoved' : 'DataWatchRemoved', path: ns.fromServer(path) });
    return true;
  }

  /** Which kinds of watch we hold on `path`, as SetWatches lists (for re-syncing one path). */
  listsFor(path: string): WatchLists {
    const at = (has: boolean): string[] => (has ? [path] : []);
    return {
      dataWatches: at(this.data.has(path)),
      existWatches: at(this.exist.has(path)),
      childWatches: at(this.child.has(path)),
      persistentWatches: at(this.persistent.has(path)),
      persistentRecursiveWatches: at(this.recursive.has(path)),
    };
  }

  /** Persistent sinks of a mode on `path` (a copy). */
  persistentAt(path: string, recursive: boolean): PersistentSink[] {
    const sinks = (recursive ? this.recursive : this.persistent).get(path);
    return sinks ? [...sinks] : [];
  }

  /** Every path, by kind, for SetWatches / SetWatches2. */
  collect(): WatchLists {
    return {
      dataWatches: [...this.data.keys()],
      existWatches: [...this.exist.keys()],
      childWatches: [...this.child.keys()],
      persistentWatches: [...this.persistent.keys()],
      persistentRecursiveWatches: [...this.recursive.keys()],
    };
  }

  /** Tells every persistent watch that events may have been missed. */
  resetPersistent(reason: 'LOST' | 'RECONNECTED'): void {
    for (const map of [this.persistent, this.recursive]) {
      for (const sinks of map.values()) for (const s of [...sinks]) s.reset(reason);
    }
  }

  /** Drops everything (client closed); persistent iterators end. */
  clear(): void {
    const sinks = new Set<PersistentSink>();
    for (const map of [this.persistent, this.recursive]) for (const s of map.values()) for (const x of s) sinks.add(x);
    this.data.clear();
    this.exist.clear();
    this.child.clear();
    this.persistent.clear();
    this.recursive.clear();
    for (const s of sinks) s.end();
  }

  private deliver(sink: PersistentSink, type: WatchEvent['type'], path: string, zxid: bigint): void {
    const ev: WatchEvent = { type, path: sink.ns.fromServer(path) };
    if (zxid >= 0n) ev.zxid = zxid;
    try {
      sink.deliver(ev);
    } catch (err) {
      this.logger.error({ err, path }, 'a persistent watch listener threw');
    }
  }

  private call(cb: WatchCallback, ev: WatchEvent): void {
    try {
      cb(ev);
    } catch (err) {
      this.logger.error({ err, path: ev.path, type: ev.type }, 'a watch callback threw');
    }
  }
}
