/**
 * NodeCache: one node's data and Stat, kept by a watch (Curator's NodeCache). It is a TreeCache of
 * depth 0: a persistent (non-recursive) watch on the path, or with `persistentWatches: false`
 * one-shot getData watches, and an exists watch while the node is missing. It creates no nodes.
 */
import { EventEmitter } from 'eventemitter3';
import type { Client, RecipeState, WaitOptions } from '@tenure/client';
import { TreeCache, type CacheEvent, type CachedNode, type TreeCacheEvents, type TreeCacheOptions } from './tree-cache.js';

/**
 * As for TreeCache (`persistentWatches: false` uses one-shot watches, for ZooKeeper 3.5;
 * `decompressed: true` reads a node written compressed, as Curator's NodeCache `dataIsCompressed`).
 */
export type NodeCacheOptions = Pick<TreeCacheOptions, 'persistentWatches' | 'retryPolicy' | 'logger' | 'decompressed'>;

export class NodeCache extends EventEmitter<TreeCacheEvents> implements AsyncIterable<CacheEvent> {
  private readonly cache: TreeCache;

  constructor(
    client: Client,
    readonly path: string,
    options: NodeCacheOptions = {},
  ) {
    super();
    this.cache = new TreeCache(client, path, { ...options, maxDepth: 0 });
    this.cache.on('initialized', () => this.emit('initialized'));
    this.cache.on('created', (n) => this.emit('created', n));
    this.cache.on('changed', (n, p) => this.emit('changed', n, p));
    this.cache.on('deleted', (p) => this.emit('deleted', p));
    this.cache.on('error', (e) => this.emit('error', e));
  }

  /** The node as last read, or undefined while it does not exist. */
  get current(): CachedNode | undefined {
    return this.cache.get(this.path);
  }

  get initialized(): boolean {
    return this.cache.initialized;
  }

  get watchMode(): 'persistent' | 'one-shot' {
    return this.cache.watchMode;
  }

  /** `'latent'` before start(), `'started'`, then `'closed'`: the lifecycle of the TreeCache underneath. */
  get state(): RecipeState {
    return this.cache.state;
  }

  /** Starts watching; resolves once the node was first read (or found missing). */
  start(options?: WaitOptions): Promise<void> {
    return this.cache.start(options);
  }

  waitForInitialized(options?: WaitOptions): Promise<void> {
    return this.cache.waitForInitialized(options);
  }

  events(options?: { signal?: AbortSignal }): AsyncIterableIterator<CacheEvent> {
    return this.cache.events(options);
  }

  [Symbol.asyncIterator](): AsyncIterator<CacheEvent> {
    return this.cache.events();
  }

  /** Stops watching and removes its watch from the server. */
  close(): Promise<void> {
    return this.cache.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
