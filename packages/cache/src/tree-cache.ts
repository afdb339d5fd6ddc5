/**
 * TreeCache: a local mirror of a subtree (each node's data and Stat), kept by watches, in the
 * manner of Curator's CuratorCache (persistent recursive watch) and TreeCache (one-shot watches).
 * It creates no nodes.
 *
 * Protocol:
 * 1. Watch. Where the server has persistent watches (ZooKeeper 3.6+, the embedded server) one
 *    `addWatch(root, recursive)`; a server that answers UNIMPLEMENTED (3.5), or
 *    `persistentWatches: false`, selects one-shot watches: getData/getChildren with a watch on
 *    every cached node, and exists on a missing root.
 * 2. Load: read the root (getData, getChildren) and, recursively, every child not yet cached.
 * 3. Each event re-reads its node; it never trusts the event alone. Reads of one path run one at a
 *    time, and an event that arrives meanwhile asks for one more read, so a path's reads land in
 *    the server's order and the last one is never older than the last event. A node leaves the
 *    cache only when a read of that node answers NoNode (its subtree goes with it).
 * 4. After LOST (a new session) and whenever the client says events may have been missed (the
 *    persistent watch's `reset`), re-sync: re-read the root and every cached node with its
 *    children. Only real differences are emitted: `changed` when czxid or mzxid differ.
 * 5. close() removes every watch it set, on the server too.
 */
import { EventEmitter } from 'eventemitter3';
import {
  ConnectionState,
  ErrorCode,
  KeeperError,
  NoAuthError,
  NoNodeError,
  SessionExpiredError,
  WatcherType,
  isRetryableError,
  type Client,
  type PersistentWatch,
  type PersistentWatchEvent,
  type Stat,
  type TimerHandle,
  type WatchEvent,
} from '@tenure/client';
import { AbortError, ClosedError, TimeoutError, joinPath, validatePath } from '@tenure/protocol';
import { EventStream } from './event-stream.js';

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

export interface TreeCacheEvents {
  /** The first full load is done (once). */
  initialized: () => void;
  created: (node: CachedNode) => void;
  changed: (node: CachedNode, previous: CachedNode) => void;
  deleted: (previous: CachedNode) => void;
  /** A read failed for a reason retrying will not cure (e.g. NoAuth), or is being retried. */
  error: (error: Error) => void;
}

export interface TreeCacheOptions {
  /** One persistent recursive watch (true, the default) or one-shot watches per node (false). */
  persistentWatches?: boolean;
  /** How deep below the root to cache: 0 the root only, 1 the root and its children. Default unlimited. */
  maxDepth?: number;
  /** First delay before retrying a failed read; doubles up to 5 s. Default 100. */
  retryMs?: number;
}

export interface WaitOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Reads of one path: one at a time, with one more queued when asked meanwhile. */
interface Pump {
  again: boolean;
  children: boolean;
}

export class TreeCache extends EventEmitter<TreeCacheEvents> implements AsyncIterable<CacheEvent> {
  readonly path: string;
  readonly maxDepth: number;
  private readonly retryMs: number;
  private oneShot: boolean;
  private state: 'latent' | 'started' | 'closed' = 'latent';
  private readonly nodes = new Map<string, CachedNode>();
  /** Cached children's names by parent path. */
  private readonly kids = new Map<string, Set<string>>();
  private readonly pumps = new Map<string, Pump>();
  private readonly inflight = new Set<Promise<void>>();
  /** Pumps running plus retries scheduled: the first load is done when this reaches 0. */
  private outstanding = 0;
  private isInitialized = false;
  private readonly initWaiters = new Set<(error: Error | null) => void>();
  private watch: PersistentWatch | null = null;
  private arming: Promise<void> | null = null;
  /** Paths that may hold one of our one-shot watches. */
  private readonly watched = new Set<string>();
  private readonly timers = new Set<TimerHandle>();
  private failures = 0;
  private sessionLost = false;
  private readonly stream = new EventStream<CacheEvent>();

  constructor(
    private readonly client: Client,
    path: string,
    options: TreeCacheOptions = {},
  ) {
    super();
    if (!client || typeof client.getData !== 'function') throw new TypeError('TreeCache: a client is required');
    validatePath(path);
    this.path = path;
    const maxDepth = options.maxDepth ?? Infinity;
    if (!(maxDepth >= 0)) throw new RangeError(`TreeCache: maxDepth must be >= 0, got ${String(maxDepth)}`);
    this.maxDepth = maxDepth;
    this.oneShot = options.persistentWatches === false;
    this.retryMs = options.retryMs ?? 100;
  }

  /** 'persistent' (one recursive watch) or 'one-shot' (a watch per node); may change at start on a 3.5 server. */
  get watchMode(): 'persistent' | 'one-shot' {
    return this.oneShot ? 'one-shot' : 'persistent';
  }

  get initialized(): boolean {
    return this.isInitialized;
  }

  /**
   * Starts watching and loading. Resolves once the first load is done (`initialized`); the cache
   * keeps working in the background if the wait is aborted or times out.
   */
  async start(options: WaitOptions = {}): Promise<void> {
    if (this.state !== 'latent') throw new Error(`TreeCache ${this.path}: already ${this.state === 'started' ? 'started' : 'closed'}`);
    if (this.client.closed) throw new ClosedError('client');
    this.state = 'started';
    this.client.on('stateChanged', this.onState);
    this.outstanding++; // held until the watch is set and the root read begins
    void this.arm().finally(() => this.arrive());
    await this.waitForInitialized(options);
  }

  /** Resolves once the first load is done; TimeoutError, AbortError, or ClosedError if closed first. */
  waitForInitialized(options: WaitOptions = {}): Promise<void> {
    if (this.isInitialized) return Promise.resolve();
    if (this.state === 'closed') return Promise.reject(new ClosedError(`TreeCache ${this.path}`));
    const { timeoutMs, signal } = options;
    const what = `TreeCache ${this.path}: initial load`;
    if (signal?.aborted) return Promise.reject(new AbortError(`${what} was aborted`, { cause: signal.reason }));
    const clock = this.client.clock;
    return new Promise((resolve, reject) => {
      let timer: TimerHandle | null = null;
      const finish = (error: Error | null): void => {
        this.initWaiters.delete(finish);
        if (timer !== null) clock.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve();
      };
      const onAbort = (): void => finish(new AbortError(`${what} was aborted`, { cause: signal!.reason }));
      this.initWaiters.add(finish);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) timer = clock.setTimeout(() => finish(new TimeoutError(`${what}: not within ${timeoutMs} ms`, timeoutMs)), timeoutMs);
    });
  }

  /** The cached node at `path`, or undefined. */
  get(path: string): CachedNode | undefined {
    return this.nodes.get(path);
  }

  has(path: string): boolean {
    return this.nodes.has(path);
  }

  /** The cached children's names of `path`, sorted; undefined when `path` is not cached. */
  children(path: string): string[] | undefined {
    if (!this.nodes.has(path)) return undefined;
    return [...(this.kids.get(path) ?? [])].sort();
  }

  /** How many nodes are cached. */
  get size(): number {
    return this.nodes.size;
  }

  /** Every cached node, by path. */
  entries(): IterableIterator<[string, CachedNode]> {
    return this.nodes.entries();
  }

  /** The events from now on, until close, `signal`, or leaving the loop. */
  events(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<CacheEvent> {
    return this.stream.subscribe(options.signal);
  }

  [Symbol.asyncIterator](): AsyncIterator<CacheEvent> {
    return this.events();
  }

  /** Stops watching: every watch we set is removed (on the server too); iterators end; the cache empties. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasStarted = this.state === 'started';
    this.state = 'closed';
    this.client.off('stateChanged', this.onState);
    for (const t of this.timers) this.client.clock.clearTimeout(t);
    this.timers.clear();
    for (const w of [...this.initWaiters]) w(new ClosedError(`TreeCache ${this.path}`));
    if (wasStarted) {
      // Reads in flight finish first, so that the watches they set are known and removed.
      while (this.inflight.size > 0 || this.arming) await Promise.allSettled([...this.inflight, this.arming]);
      if (this.watch) await this.watch.close().catch(() => {});
      this.watch = null;
      if (!this.client.closed) {
        await Promise.all(
          [...this.watched].map((p) => this.client.removeWatches(p, WatcherType.Any, { watcher: this.onOneShot, quietly: true }).catch(() => {})),
        );
      }
      this.watched.clear();
    }
    this.nodes.clear();
    this.kids.clear();
    this.stream.end();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- watching ----

  /** Adds the persistent watch (unless one-shot), then loads from the root. */
  private async arm(): Promise<void> {
    if (this.state !== 'started') return;
    if (!this.oneShot && this.watch === null) {
      const p = this.client.addWatch(this.path, { recursive: this.maxDepth > 0, listener: this.onPersistent });
      this.arming = p.then(() => {}, () => {});
      try {
        const w = await p;
        if (this.state !== 'started') {
          await w.close().catch(() => {});
          return;
        }
        this.watch = w;
      } catch (err) {
        if (this.state !== 'started') return;
        if (err instanceof KeeperError && err.code === ErrorCode.UNIMPLEMENTED) {
          this.oneShot = true; // a 3.5 server: fall back to one-shot watches
        } else {
          this.retryLater(() => {
            this.outstanding++;
            void this.arm().finally(() => this.arrive());
          }, err);
          return;
        }
      } finally {
        this.arming = null;
      }
    }
    this.refresh(this.path, true);
  }

  private readonly onPersistent = (event: PersistentWatchEvent): void => {
    if (this.state !== 'started') return;
    if (event.type === 'reset') return this.resync();
    if (!this.inScope(event.path)) return;
    // Recursive watches carry no NodeChildrenChanged: creations and deletions arrive per node.
    if (event.type === 'NodeCreated' || event.type === 'NodeDataChanged' || event.type === 'NodeDeleted') this.refresh(event.path, false);
  };

  private readonly onOneShot = (event: WatchEvent): void => {
    if (this.state !== 'started') return;
    switch (event.type) {
      case 'NodeCreated': // the root's exists watch
        return this.refresh(event.path, true);
      case 'NodeDataChanged':
        return this.refresh(event.path, false);
      case 'NodeChildrenChanged':
        return this.refresh(event.path, true);
      case 'NodeDeleted':
        this.watched.delete(event.path); // every watch on it fired
        return this.refresh(event.path, false);
    }
  };

  private readonly onState = (state: ConnectionState): void => {
    if (this.state !== 'started') return;
    if (state === ConnectionState.LOST) this.sessionLost = true;
    else if (state === ConnectionState.RECONNECTED && this.sessionLost) {
      this.sessionLost = false;
      // A persistent watch says so itself (reset); one-shot watches were re-registered with
      // SetWatches, but a new session may have missed more than they cover.
      if (this.oneShot || this.watch === null) this.resync();
    }
  };

  /** Re-reads the root and every cached node with its children. */
  private resync(): void {
    if (this.state !== 'started') return;
    if (!this.oneShot && this.watch === null && !this.arming) {
      this.outstanding++;
      void this.arm().finally(() => this.arrive());
      return;
    }
    this.refresh(this.path, true);
    for (const path of [...this.nodes.keys()]) if (path !== this.path) this.refresh(path, true);
  }

  // ---- reads ----

  /** Reads `path` now, or once more after the read in flight. */
  private refresh(path: string, children: boolean): void {
    if (this.state !== 'started') return;
    const pump = this.pumps.get(path);
    if (pump) {
      pump.again = true;
      pump.children ||= children;
      return;
    }
    const p: Pump = { again: false, children };
    this.pumps.set(path, p);
    this.outstanding++;
    const run = this.runPump(path, p);
    this.inflight.add(run);
    void run.finally(() => this.inflight.delete(run));
  }

  private async runPump(path: string, pump: Pump): Promise<void> {
    try {
      do {
        const children = pump.children;
        pump.again = false;
        pump.children = false;
        try {
          await this.read(path, children);
          this.failures = 0;
        } catch (err) {
          if (this.state !== 'started') return;
          this.retryLater(() => this.refresh(path, true), err);
          return;
        }
      } while (pump.again && this.state === 'started');
    } finally {
      this.pumps.delete(path);
      this.arrive();
    }
  }

  private async read(path: string, children: boolean): Promise<void> {
    const client = this.client;
    const watch = this.oneShot ? { watch: this.onOneShot } : undefined;
    if (watch) this.watched.add(path);
    let got: { data: Buffer; stat: Stat };
    try {
      got = await client.getData(path, watch);
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      if (this.state !== 'started') return;
      this.removeTree(path);
      if (watch && path === this.path) {
        // Only the root needs an exists watch: a parent's child watch covers everything below it.
        const stat = await client.exists(path, watch);
        if (stat !== null && this.state === 'started') this.refresh(path, true);
      }
      return;
    }
    if (this.state !== 'started') return;
    this.put(path, got.data, got.stat);
    if (!children || this.depthOf(path) >= this.maxDepth) return;
    let names: string[];
    try {
      names = (await client.getChildren(path, watch)).children;
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      if (this.state === 'started') this.removeTree(path);
      return;
    }
    if (this.state !== 'started') return;
    const listed = new Set(names);
    for (const name of names) {
      const child = joinPath(path, name);
      if (!this.nodes.has(child)) this.refresh(child, true);
    }
    // A cached child missing from the listing goes only when its own read says NoNode.
    for (const name of this.kids.get(path) ?? []) if (!listed.has(name)) this.refresh(joinPath(path, name), false);
  }

  private put(path: string, data: Buffer, stat: Stat): void {
    const previous = this.nodes.get(path);
    const node: CachedNode = { path, data, stat };
    this.nodes.set(path, node);
    if (previous === undefined) {
      if (path !== this.path) {
        const parent = parentOf(path);
        let set = this.kids.get(parent);
        if (!set) this.kids.set(parent, (set = new Set()));
        set.add(nameOf(path));
      }
      this.publish({ type: 'created', path, node });
    } else if (previous.stat.mzxid !== stat.mzxid || previous.stat.czxid !== stat.czxid) {
      this.publish({ type: 'changed', path, node, previous });
    }
    // Otherwise only the children-related Stat fields moved: kept, not an event.
  }

  /** `path` is gone: it and every cached node below it leave, deepest first. */
  private removeTree(path: string): void {
    const previous = this.nodes.get(path);
    if (previous === undefined) return;
    for (const name of [...(this.kids.get(path) ?? [])]) this.removeTree(joinPath(path, name));
    this.kids.delete(path);
    this.nodes.delete(path);
    if (path !== this.path) {
      const siblings = this.kids.get(parentOf(path));
      siblings?.delete(nameOf(path));
      if (siblings?.size === 0) this.kids.delete(parentOf(path));
    }
    this.publish({ type: 'deleted', path, previous });
  }

  private publish(event: CacheEvent): void {
    this.stream.push(event);
    try {
      if (event.type === 'created') this.emit('created', event.node);
      else if (event.type === 'changed') this.emit('changed', event.node, event.previous);
      else if (event.type === 'deleted') this.emit('deleted', event.previous);
      else this.emit('initialized');
    } catch (err) {
      // A throwing listener must not break the cache's bookkeeping: it is reported, not rethrown.
      try {
        this.emit('error', err instanceof Error ? err : new Error(String(err)));
      } catch {
        // an error listener that throws too: nothing more to do
      }
    }
  }

  /** One pump or retry finished: the first load is done when none is left. */
  private arrive(): void {
    if (--this.outstanding > 0 || this.isInitialized || this.state !== 'started') return;
    this.isInitialized = true;
    for (const w of [...this.initWaiters]) w(null);
    this.publish({ type: 'initialized' });
  }

  private retryLater(again: () => void, err: unknown): void {
    if (err instanceof ClosedError || this.client.closed) return;
    if (err instanceof NoAuthError) {
      this.emit('error', err);
      return; // retrying will not help; the rest of the tree is still cached
    }
    if (err instanceof Error && !isRetryableError(err) && !(err instanceof SessionExpiredError)) this.emit('error', err);
    const n = Math.min(this.failures++, 6);
    const ms = Math.min(5000, this.retryMs * 2 ** n);
    this.outstanding++;
    const clock = this.client.clock;
    const t = clock.setTimeout(() => {
      this.timers.delete(t);
      if (this.state === 'started') again();
      this.arrive();
    }, ms);
    this.timers.add(t);
  }

  private depthOf(path: string): number {
    if (path === this.path) return 0;
    const rest = this.path === '/' ? path.slice(1) : path.slice(this.path.length + 1);
    return rest.split('/').length;
  }

  private inScope(path: string): boolean {
    if (path === this.path) return true;
    const prefix = this.path === '/' ? '/' : this.path + '/';
    return path.startsWith(prefix) && this.depthOf(path) <= this.maxDepth;
  }
}

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
