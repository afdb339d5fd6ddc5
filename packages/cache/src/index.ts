/**
 * @tenure/cache: TreeCache (a subtree mirrored with its data and Stats) and NodeCache (one node),
 * kept by a persistent recursive watch, or by one-shot watches on servers without them.
 */
export {
  TreeCache,
  type TreeCacheOptions,
  type TreeCacheEvents,
  type TreeCacheSelector,
  type CachedNode,
  type CacheEvent,
} from './tree-cache.js';
/** Re-exported from @tenure/client, where every wait's options are declared. */
export type { WaitOptions } from '@tenure/client';
export { TreeCache as CuratorCache } from './tree-cache.js';
export { NodeCache, type NodeCacheOptions } from './node-cache.js';
export { EventStream } from './event-stream.js';
