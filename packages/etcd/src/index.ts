/**
 * @tenure/etcd: ZooKeeper's data model on etcd v3. `etcdTransport(endpoints, { prefix })` is a
 * Transport whose tree, sessions and sequence counters live in etcd; `EtcdStore` is the
 * ReplicatedStore of @tenure/server that the transport (and a tenure-server front end) run on.
 */
export { etcdTransport, EtcdTransport, ETCD_HOST, type EtcdTransportOptions } from './etcd-transport.js';
export { EtcdStore, type EtcdStoreOptions } from './etcd-store.js';
export { EtcdRpc, type EtcdAuth, type EtcdConnectOptions, type EtcdTls } from './etcd-rpc.js';
export { EtcdLayoutError, EtcdUnavailableError } from './errors.js';
export { KeyLayout } from './key-layout.js';
