/**
 * @tenure/nodes: PersistentNode (a node that heals itself, with protected creates and an ownership
 * rule) and PersistentTtlNode (a node kept alive by touching it).
 */
export { PersistentNode } from './persistent-node.js';
export type { PersistentNodeOptions, PersistentNodeEvents } from './persistent-node-options.js';
export { PersistentTtlNode, type PersistentTtlNodeOptions } from './persistent-ttl-node.js';
export { NodeConflictError } from './errors.js';
export { judgeOwnership, sessionOwner, type Ownership } from './node-ownership.js';
/** Re-exported from @tenure/client, where every wait's options are declared. */
export type { WaitOptions } from '@tenure/client';
