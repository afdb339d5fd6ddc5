/**
 * ServiceCache: the instances of one service, kept current by a watch (Curator's ServiceCacheImpl).
 *
 * `<basePath>/<name>` and its children are mirrored by a TreeCache of depth 1 (one persistent
 * recursive watch on ZooKeeper 3.6+, as Curator's CuratorCache; one-shot watches on 3.5). Instances
 * are keyed by child node name; a child whose data is not an instance is reported (`error`) and
 * left out. The cache creates no nodes (Curator creates `<basePath>/<name>` as a container; a
 * missing one is watched instead).
 *
 * While the client is disconnected, `instances` keeps the last known set: `synced` is false and
 * `lastSyncedAt` says when it was last known to be current.
 */
import { EventEmitter } from 'eventemitter3';
import {
  ConnectionState,
  RecipeLifecycle,
  safeEmitter,
  type Client,
  type RecipeState,
  type SafeEmit,
  type WaitOptions,
} from '@tenure/client';
import { EventStream, TreeCache, type CachedNode } from '@tenure/cache';
import { joinPath, nodeName } from '@tenure/protocol';
import { InvalidInstanceError } from './errors.js';
import type { InstanceSerializer } from './json-instance-serializer.js';
import { utcNow, type ServiceInstance } from './service-instance.js';

export interface ServiceCacheEvents<P> {
  /** The set of instances changed (after the initial load); the new set. */
  change: (instances: readonly ServiceInstance<P>[]) => void;
  /** A child that is not an instance (it is left out), or a read refused for good (e.g. NoAuth). */
  error: (error: Error) => void;
}

export interface ServiceCacheOptions {
  serializer: InstanceSerializer;
  /** One persistent recursive watch (default) or one-shot watches (false; ZooKeeper 3.5). */
  persistentWatches?: boolean;
  /** Called once, when the cache closes. */
  onClose?: () => void;
}

/**
 * The instances of one service, kept current by a watch; from `discovery.serviceCache(name)`.
 *
 * ```ts
 * const cache = discovery.serviceCache('billing');
 * await cache.start({ timeoutMs: 5000 });
 * for await (const instances of cache) console.log(instances.map((i) => i.id));
 * ```
 */
export class ServiceCache<P = unknown> extends EventEmitter<ServiceCacheEvents<P>> implements AsyncIterable<readonly ServiceInstance<P>[]> {
  /** `<basePath>/<name>`. */
  readonly path: string;
  private readonly tree: TreeCache;
  private readonly serializer: InstanceSerializer;
  private readonly byNode = new Map<string, ServiceInstance<P>>();
  private list: readonly ServiceInstance<P>[] = [];
  private dirty = false;
  private readonly stream = new EventStream<readonly ServiceInstance<P>[]>();
  private readonly life: RecipeLifecycle;
  private readonly emitSafely: SafeEmit<ServiceCacheEvents<P>>;
  private connected: boolean;
  /** When the set was last known current, while not connected. */
  private syncedUntil: number | null = null;
  private readonly onClose: (() => void) | undefined;

  /** Use `discovery.serviceCache(name)`. */
  constructor(
    private readonly client: Client,
    readonly name: string,
    path: string,
    options: ServiceCacheOptions,
  ) {
    super();
    this.path = path;
    this.serializer = options.serializer;
    this.onClose = options.onClose;
    this.connected = client.isConnected;
    this.life = new RecipeLifecycle(`ServiceCache ${path}`);
    this.emitSafely = safeEmitter<ServiceCacheEvents<P>>(this);
    this.tree = new TreeCache(client, path, {
      maxDepth: 1,
      persistentWatches: options.persistentWatches,
      logger: client.childLogger({ recipe: 'serviceCache', path }),
    });
    this.tree.on('created', (n) => this.put(n));
    this.tree.on('changed', (n) => this.put(n));
    this.tree.on('deleted', (n) => this.remove(n));
    this.tree.on('initialized', () => this.changed());
    this.tree.on('error', (e) => this.emitSafely('error', e));
  }

  /** Starts watching; resolves once the instances were first loaded (TimeoutError, AbortError, ClosedError). */
  start(options: WaitOptions = {}): Promise<void> {
    return this.life.start(async () => {
      this.client.on('stateChanged', this.onState);
      await this.tree.start(options);
    });
  }

  /** `'latent'` before start(), `'started'`, then `'closed'` (the recipe lifecycle). */
  get state(): RecipeState {
    return this.life.state;
  }

  /** Whether the initial load is done. */
  get initialized(): boolean {
    return this.tree.initialized;
  }

  /** The instances as cached now, in node-name order (the same array until the next change). */
  get instances(): readonly ServiceInstance<P>[] {
    if (this.dirty) {
      this.dirty = false;
      this.list = [...this.byNode.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, i]) => i);
    }
    return this.list;
  }

  /** False while the client is disconnected: `instances` is then the last known set. */
  get synced(): boolean {
    return this.life.isStarted && this.tree.initialized && this.connected;
  }

  /**
   * When `instances` was last known to be current (ms since the Unix epoch): now while synced, the
   * moment the connection was lost while not. Null before the initial load.
   */
  get lastSyncedAt(): number | null {
    if (!this.tree.initialized) return this.syncedUntil;
    return this.synced ? utcNow() : this.syncedUntil;
  }

  /** Instance sets: the current one (once loaded), then one per change, until close or `signal`. */
  snapshots(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<readonly ServiceInstance<P>[]> {
    return this.stream.subscribe(options.signal, this.tree.initialized ? [this.instances] : []);
  }

  [Symbol.asyncIterator](): AsyncIterator<readonly ServiceInstance<P>[]> {
    return this.snapshots();
  }

  /** Stops watching (every watch removed, on the server too); iterators end. */
  close(): Promise<void> {
    return this.life.close(async () => {
      this.onClose?.();
      this.client.off('stateChanged', this.onState);
      await this.tree.close();
      this.byNode.clear();
      this.dirty = true;
      this.stream.end();
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private put(node: CachedNode): void {
    if (node.path === this.path) return;
    const name = nodeName(node.path);
    try {
      this.byNode.set(name, this.serializer.deserialize(node.data) as ServiceInstance<P>);
    } catch (err) {
      const e = err instanceof InvalidInstanceError ? new InvalidInstanceError(err.message, joinPath(this.path, name)) : (err as Error);
      this.byNode.delete(name);
      this.emitSafely('error', e);
    }
    this.changed();
  }

  private remove(node: CachedNode): void {
    if (node.path !== this.path && this.byNode.delete(nodeName(node.path))) this.changed();
  }

  private changed(): void {
    this.dirty = true;
    if (!this.tree.initialized || !this.life.isStarted) return;
    const now = this.instances;
    this.stream.push(now);
    this.emitSafely('change', now);
  }

  private readonly onState = (state: ConnectionState): void => {
    const connected = state === ConnectionState.CONNECTED || state === ConnectionState.RECONNECTED || state === ConnectionState.READ_ONLY;
    if (this.connected && !connected && this.tree.initialized) this.syncedUntil = utcNow();
    this.connected = connected;
  };
}
