/**
 * @tenure/client: the session, Curator's connection states, retries and ZooKeeper's operations
 * over any transport.
 */
export { createClient } from './create-client.js';
export * from './public-api.js';
export { gzip } from './gzip-zlib.js';
