/**
 * @tenure/server: an embedded server with ZooKeeper semantics, its in-process transport and
 * fault injection.
 */
export { createEmbeddedServer, createReplicatedServer, EmbeddedServer } from './embedded-server.js';
export { StoreLimitError, StoreUnavailableError } from './replicated/replicated-store.js';
export type {
  ChildrenRecord,
  CommitOutcome,
  NodeRecord,
  ReplicatedStore,
  RevisionChange,
  StoreSink,
  StoreSnapshot,
  WriteSet,
} from './replicated/replicated-store.js';
export type { AcceptResult, FrontDoor, PeerInfo, ServerLimits } from './front-doors/front-door.js';
export type { NodeSnapshot, ServerConfig, ServerIntrospection, SessionInfo } from './ops/server-introspection.js';
export type { EmbeddedServerOptions, Logger } from './options.js';
export type { ConnectionSink } from './semantics/server-connection.js';
export { ServerConnection } from './semantics/server-connection.js';
export type { ListenAddress, ListenOptions } from './front-doors/tcp-listener.js';
export type { TlsListenOptions } from './front-doors/tls-listener.js';
export { certificateSubject } from './security/x509-subject.js';
export { SessionWheel } from './semantics/session-wheel.js';
export type { WebSocketAddress, WebSocketEndpointOptions } from './front-doors/websocket-endpoint.js';
export { createWebSocketGateway } from './front-doors/websocket-gateway.js';
export type { WebSocketGateway, WebSocketGatewayOptions } from './front-doors/websocket-gateway.js';
export type { SaslServerOptions } from './security/sasl-auth.js';
export type { StorageEvent } from './options.js';
export type { DataDirOptions } from './storage/data-dir-storage.js';
export { DataDirCorruptError } from './storage/storage-errors.js';
/**
 * Whether a request opcode is a write, a read or housekeeping (ping, auth, setWatches...), as
 * ZooKeeper's latency metrics split them; the tenure-server process times requests with it.
 */
export { requestKind } from './front-doors/connection-limits.js';
