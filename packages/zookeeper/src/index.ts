/**
 * @tenure/zookeeper: Tenure's transport to Apache ZooKeeper over its real wire protocol (TCP or TLS).
 * One connection to one server per `connect()`; the client owns host choice, timers and retries.
 */
export { zookeeper, DEFAULT_MAX_FRAME_BYTES } from './transport.js';
export type { ZooKeeperTransport, ZooKeeperTransportOptions } from './transport.js';
export { parseConnectString, parseHostPort, formatHostPort, DEFAULT_PORT } from './connect-string.js';
export type { ParsedConnectString, HostPort } from './connect-string.js';
export type { TlsOptions, TlsSetting } from './tls-options.js';
export type { HostLookup } from './host-lookup.js';
export { TlsError, type TlsRefusal } from '@tenure/protocol';
