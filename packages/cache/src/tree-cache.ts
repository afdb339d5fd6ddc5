/**
 * TreeCache: a local mirror of a subtree (each node's data and Stat), kept by watches, in the
 * manner of Curator's CuratorCache (persistent recursive watch) and TreeCache (one-shot watches).
 * It creates no nodes.
 *
 * Protocol:
 * 1. Watch (tree-watches.ts). Where the server has persistent watches (ZooKeeper 3.6+, the
 *    embedded server) one `addWatch(root, recursive)`; a server that answers UNIMPLEMENTED (3.5),
 *    or `persistentWatches: false`, selects one-shot watches: getData/getChildren with a watch on
 *    every cached node, and exists on a missing root.
 * 2. Load: read the root (getData, getChildren) and, recursively, every child not yet cached.
 * 3. Each event re-reads its node; it never trusts the event alone. Reads of one path run one at a
 *    time, and an event that arrives meanwhile asks for one more read, so a path's reads land in
 *    the server's order and the last one is never older than the last event. A node leaves the
 *    cache only when a read of that node answers NoNode (its subtree goes with it).
 * 4. After LOST (a new session) and whenever the client says events may have been missed (the
 *    persistent watch's `reset`), re-sync: re-read the root and every cached node with its
 *    children. Only real differences are emitted: `changed` when czxid or mzxid differ.
 * 5. A failed read is retried with backoff from the retry policy; NoAuth is reported, not retried.
 * 6. close() removes every watch it set, on the server too.
 */
import { EventEmitter } from 'eventemitter3';
import {
  ClosedError,
  ConnectionState,
  DecompressionError,
  NoNodeError,
  PassRunner,
  RecipeLifecycle,
  RetryPacer,
  safeEmitter,
  triageFailure,
  type Client,
  type Logger,
  type RecipeState,
  type RetryPolicy,
  type SafeEmit,
  type Stat,
  type WaitOptions,
  InvalidArgumentError,
} from '@tenure/client';
import { joinPath, validatePath } from '@tenure/protocol';
import { CachedTree, type CacheEvent, type CachedNode, type TreeCacheSelector } from './cached-tree.js';
import { EventStream } from './event-stream.js';
import { OneShotTreeWatches, PersistentTreeWatch, type TreeReader, type TreeWatches } from './tree-watches.js';

export type { CachedNode, CacheEvent, TreeCacheSelector } from './cached-tree.js';

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
  /** Paces the retries of failed reads. Default: the client's retry policy. */
  retryPolicy?: RetryPolicy;
  /** Default: a child of the client's logger. */
  logger?: Logger;
  /**
   * Read the data with `getData({ decompressed })`: true for nodes written compressed (Curator's
   * `.compressed()`, TreeCache's `setDataIsCompressed`). Default: the client's `compression.byDefault`.
   */
  decompressed?: boolean;
  /** false: keep each node's Stat only, `data` empty (Curator's `withDataNotCached`). Default true. */
  cacheData?: boolean;
  /**
   * Which paths to descend into, which children to cache, whose data to keep (Curator's
   * TreeCacheSelector). With a selector the cache uses one-shot watches unless `persistentWatches`
   * is true, so that nothing is watched below a path it refuses (a recursive watch sees the whole
   * subtree; its events under refused paths are then dropped).
   */
  selector?: TreeCacheSelector;
}

/** Reads of one path: one at a time, with one more queued when asked meanwhile (the kit's PassRunner). */
interface Pump {
  readonly runner: PassRunner;
  /** The next read lists the children too. */
  children: boolean;
}

export class TreeCache extends EventEmitter<TreeCacheEvents> implements AsyncIterable<CacheEvent> {
  readonly path: string;
  readonly maxDepth: number;
  /** Our view of the client: every watch we set goes through it, and close takes them all back. */
  private readonly client: Client;
  private readonly log: Logger;
  private readonly life: RecipeLifecycle;
  private readonly pacer: RetryPacer;
  private readonly emitSafely: SafeEmit<TreeCacheEvents>;
  private readonly tree: CachedTree;
  private readonly reader: TreeReader;
  private watches: TreeWatches;
  private readonly pumps = new Map<string, Pump>();
  /** Pumps running plus retries scheduled: the first load is done when this reaches 0. */
  private outstanding = 0;
  private isInitialized = false;
  /** Settles with the first full load, or rejects when closed before it. */
  private readonly loaded: Promise<void>;
  private endLoad!: (error?: Error) => void;
  private sessionLost = false;
  private readonly stream = new EventStream<CacheEvent>();
  private readonly decompressed: boolean | undefined;

  constructor(client: Client, path: string, options: TreeCacheOptions = {}) {
    super();
    if (!client || typeof client.getData !== 'function') throw new InvalidArgumentError('TreeCache: a client is required');
    validatePath(path);
    this.path = path;
    const maxDepth = options.maxDepth ?? Infinity;
    if (!(maxDepth >= 0)) throw new InvalidArgumentError(`TreeCache: maxDepth must be >= 0, got ${String(maxDepth)}`);
    this.maxDepth = maxDepth;
    this.client = client.trackingWatches();
    this.log = options.logger ?? client.childLogger({ recipe: 'treeCache', path });
    this.life = new RecipeLifecycle(`TreeCache ${path}`);
    this.pacer = new RetryPacer(client, options.retryPolicy);
    this.emitSafely = safeEmitter<TreeCacheEvents>(this, this.log);
    this.tree = new CachedTree(path, maxDepth, { selector: options.selector, cacheData: options.cacheData });
    this.decompressed = options.decompressed;
    this.reader = {
      root: path,
      isOpen: () => this.life.isStarted,
      refresh: (p, children) => this.refresh(p, children),
      resync: () => this.resync(),
      inScope: (p) => this.tree.inScope(p),
    };
    const persistent = options.persistentWatches ?? options.selector === undefined;
    this.watches = !persistent ? new OneShotTreeWatches(this.reader) : new PersistentTreeWatch(this.client, maxDepth > 0, this.reader);
    this.loaded = new Promise((resolve, reject) => (this.endLoad = (error) => (error ? reject(error) : resolve())));
    this.loaded.catch(() => {}); // waiting for it is optional
  }

  /** 'persistent' (one recursive watch) or 'one-shot' (a watch per node); may change at start on a 3.5 server. */
  get watchMode(): 'persistent' | 'one-shot' {
    return this.watches.mode;
  }

  get initialized(): boolean {
    return this.isInitialized;
  }

  /** `'latent'` before start(), `'started'`, then `'closed'` (the recipe lifecycle). */
  get state(): RecipeState {
    return this.life.state;
  }

  /**
   * Starts watching and loading. Resolves once the first load is done (`initialized`); the cache
   * keeps working in the background if the wait is aborted or times out.
   */
  start(options: WaitOptions = {}): Promise<void> {
    return this.life.start(
      async () => {
        this.client.on('stateChanged', this.onState);
        this.client.closedSignal.addEventListener('abort', this.onClientClosed, { once: true });
        this.arm();
        await this.waitForInitialized(options);
      },
      () => {
        if (this.client.closedSignal.aborted) throw new ClosedError('client');
      },
    );
  }

  /** Resolves once the first load is done; TimeoutError, AbortError, or ClosedError if it or the client closed first. */
  waitForInitialized(options?: WaitOptions): Promise<void> {
    if (this.isInitialized) return Promise.resolve();
    if (this.life.isClosed) return Promise.reject(new ClosedError(`TreeCache ${this.path}`));
    return this.client.wait(this.loaded, options, `TreeCache ${this.path}: initial load`);
  }

  /** The cached node at `path`, or undefined. */
  get(path: string): CachedNode | undefined {
    return this.tree.get(path);
  }

  has(path: string): boolean {
    return this.tree.has(path);
  }

  /** The cached children's names of `path`, sorted; undefined when `path` is not cached. */
  children(path: string): string[] | undefined {
    return this.tree.has(path) ? [...this.tree.childNames(path)].sort() : undefined;
  }

  /** How many nodes are cached. */
  get size(): number {
    return this.tree.size;
  }

  /** Every cached node, by path. */
  entries(): IterableIterator<[string, CachedNode]> {
    return this.tree.entries();
  }

  /** The events from now on, until close, `signal`, or leaving the loop. */
  events(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<CacheEvent> {
    return this.stream.subscribe(options.signal);
  }

  [Symbol.asyncIterator](): AsyncIterator<CacheEvent> {
    return this.events();
  }

  /** Stops watching: every watch we set is removed (on the server too); iterators end; the cache empties. */
  close(): Promise<void> {
    return this.life.close(async (wasStarted) => {
      this.client.off('stateChanged', this.onState);
      this.client.closedSignal.removeEventListener('abort', this.onClientClosed);
      this.pacer.cancel();
      this.endLoad(new ClosedError(`TreeCache ${this.path}`));
      if (wasStarted) {
        // Reads in flight finish first, so that the watches they set are removed too.
        while (this.pumps.size > 0 || this.watches.arming)
          await Promise.allSettled([...[...this.pumps.values()].map((p) => p.runner.whenIdle()), this.watches.arming]);
        await this.client.removeAllWatches();
      }
      this.tree.clear();
      this.stream.end();
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- watching ----

  /** Sets the watches up (falling back to one-shot watches on a 3.5 server), then loads from the root. */
  private arm(): void {
    this.outstanding++;
    this.armThenLoad()
      .finally(() => this.arrive())
      .catch((err: unknown) => this.log.error({ err }, 'tree cache: loading failed')); // a throwing listener, for one
  }

  private async armThenLoad(): Promise<void> {
    if (!this.life.isStarted) return;
    try {
      if (!(await this.watches.arm())) this.watches = new OneShotTreeWatches(this.reader);
    } catch (err) {
      if (this.life.isStarted) this.retryLater(() => this.arm(), err);
      return;
    }
    this.refresh(this.path, true);
  }

  private readonly onState = (state: ConnectionState): void => {
    if (!this.life.isStarted) return;
    if (state === ConnectionState.LOST) this.sessionLost = true;
    else if (state === ConnectionState.RECONNECTED && this.sessionLost) {
      this.sessionLost = false;
      // A persistent watch says so itself (reset); one-shot watches were re-registered with
      // SetWatches, but a new session may have missed more than they cover.
      if (!this.watches.coverNewSession) this.resync();
    }
  };

  /** The client closed: nothing will run any more; no retry stays scheduled. */
  private readonly onClientClosed = (): void => this.pacer.cancel();

  /** Re-reads the root and every cached node with its children (or sets the watch up first). */
  private resync(): void {
    if (!this.life.isStarted) return;
    if (!this.watches.armed && !this.watches.arming) return this.arm();
    this.refresh(this.path, true);
    for (const path of [...this.tree.paths()]) if (path !== this.path) this.refresh(path, true);
  }

  // ---- reads ----

  /** Reads `path` now, or once more after the read in flight. */
  private refresh(path: string, children: boolean): void {
    if (!this.life.isStarted) return;
    let pump = this.pumps.get(path);
    if (!pump) {
      const runner: PassRunner = new PassRunner(
        this.client.clock,
        () => this.readPass(path, pump!),
        (err) => {
          if (this.life.isStarted) this.retryLater(() => this.refresh(path, true), err);
        },
        () => {
          if (this.pumps.get(path)?.runner === runner) this.pumps.delete(path);
          this.arrive();
        },
      );
      pump = { runner, children: false };
      this.pumps.set(path, pump);
    }
    pump.children ||= children;
    if (pump.runner.run()) this.outstanding++;
  }

  private async readPass(path: string, pump: Pump): Promise<void> {
    if (!this.life.isStarted) return;
    const children = pump.children;
    pump.children = false;
    await this.read(path, children);
    this.pacer.succeeded();
  }

  private async read(path: string, children: boolean): Promise<void> {
    const client = this.client;
    const watch = this.watches.onReads;
    let got: { data: Buffer; stat: Stat };
    try {
      got = await client.getData(path, this.decompressed === undefined ? watch : { ...watch, decompressed: this.decompressed });
    } catch (err) {
      if (err instanceof DecompressionError) {
        // Retrying reads the same bytes: reported, and read again when the node changes (its watch is set).
        if (this.life.isStarted) this.emitSafely('error', err);
        return;
      }
      if (!(err instanceof NoNodeError)) throw err;
      if (!this.life.isStarted) return;
      this.removeTree(path);
      if (watch && path === this.path) {
        // Only the root needs an exists watch: a parent's child watch covers everything below it.
        const stat = await client.exists(path, watch);
        if (stat !== null && this.life.isStarted) this.refresh(path, true);
      }
      return;
    }
    if (!this.life.isStarted) return;
    const event = this.tree.put(path, got.data, got.stat);
    if (event) this.publish(event);
    if (!children || !this.tree.holdsChildrenOf(path)) return;
    let names: string[];
    try {
      names = (await client.getChildren(path, watch)).children;
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      if (this.life.isStarted) this.removeTree(path);
      return;
    }
    if (!this.life.isStarted) return;
    const listed = new Set(names);
    for (const name of names) {
      const child = joinPath(path, name);
      if (!this.tree.has(child) && this.tree.acceptsChild(child)) this.refresh(child, true);
    }
    // A cached child missing from the listing goes only when its own read says NoNode.
    for (const name of this.tree.childNames(path)) if (!listed.has(name)) this.refresh(joinPath(path, name), false);
  }

  private removeTree(path: string): void {
    for (const event of this.tree.remove(path)) this.publish(event);
  }

  /** A throwing listener must not break the cache's bookkeeping: it is reported as `error`, not rethrown. */
  private publish(event: CacheEvent): void {
    this.stream.push(event);
    if (event.type === 'created') this.emitSafely('created', event.node);
    else if (event.type === 'changed') this.emitSafely('changed', event.node, event.previous);
    else if (event.type === 'deleted') this.emitSafely('deleted', event.previous);
    else this.emitSafely('initialized');
  }

  /** One pump or retry finished: the first load is done when none is left (reads a closed client failed do not count). */
  private arrive(): void {
    if (--this.outstanding > 0 || this.isInitialized || !this.life.isStarted || this.client.closedSignal.aborted) return;
    this.isInitialized = true;
    this.endLoad();
    this.publish({ type: 'initialized' });
  }

  private retryLater(again: () => void, err: unknown): void {
    const verdict = triageFailure(err, this.client.closedSignal);
    if (verdict === 'closed') return;
    if (verdict === 'stop') {
      this.log.warn({ err }, 'NoAuth: not retried');
      this.emitSafely('error', err as Error);
      return; // the kit's NoAuth rule: reading that path stops; the rest of the tree is still cached
    }
    if (verdict === 'report' && err instanceof Error) this.emitSafely('error', err);
    this.outstanding++;
    const ms = this.pacer.schedule(
      () => {
        if (this.life.isStarted) again();
        this.arrive();
      },
      { alongside: true },
    );
    this.log.debug({ err, retryInMs: ms }, 'retrying');
  }
}
