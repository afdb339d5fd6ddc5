/**
 * @tenure/etcd: ZooKeeper's data model on etcd v3. `etcdTransport(endpoints, { prefix })` is a
 * Transport whose tree, sessions and sequence counters live in etcd; `EtcdStore` is the
 * ReplicatedStore of @tenure/server that the transport (and a tenure-server front end) run on.
 */
export { etcdTransport, EtcdTransport, ETCD_HOST, type EtcdTransportOptions } from './etcd-transport.js';
export { EtcdStore, HEALTH_CHANNEL, type EtcdStoreOptions } from './etcd-store.js';
export { EtcdCompactor, type CompactorState, type EtcdCompactionOptions } from './etcd-compactor.js';
export { probeEtcdHealth, QUOTA_WARN_RATIO, UNCOMPACTED_WARN_REVISION, type EtcdHealth } from './etcd-health.js';
export { EtcdRpc, type EtcdAuth, type EtcdConnectOptions, type EtcdTls } from './etcd-rpc.js';
export { EtcdLayoutError, EtcdTlsError, EtcdUnavailableError } from './errors.js';
export { KeyLayout } from './key-layout.js';
