/**
 * @tenure/nodes: PersistentNode (a node that heals itself, with protected creates and an ownership
 * rule) and PersistentTtlNode (a node kept alive by touching it).
 */
export { PersistentNode, type PersistentNodeOptions, type PersistentNodeEvents } from './persistent-node.js';
export { PersistentTtlNode, type PersistentTtlNodeOptions } from './persistent-ttl-node.js';
export { NodeConflictError } from './errors.js';
export { judgeOwnership, sessionOwner, type Ownership } from './node-ownership.js';
export type { WaitOptions } from './waiters.js';
