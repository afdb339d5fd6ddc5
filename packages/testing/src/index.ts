/**
 * @tenure/testing: real ZooKeeper servers and clusters (Debian's `zookeeper` package), the embedded
 * server behind the same interface, network faults (FaultProxy) and session expiry.
 */
export { TestingServer, type TestingServerOptions } from './testing-server.js';
export { TestingCluster, type TestingClusterOptions, type HasConnectedServer } from './testing-cluster.js';
export { TestingEmbeddedServer, type TestingEmbeddedServerOptions } from './testing-embedded-server.js';
export { FaultProxy, ProxyConnection, type DroppedReply, type ReplyMatch, type OpName } from './fault-proxy.js';
export { fourLetterWord } from './four-letter-words.js';
export { freePort } from './free-port.js';
export { parseServerDump, type ServerDump, type SessionDump } from './server-dump.js';
export { findZooKeeper, realZooKeeper, ZooKeeperUnavailableError } from './zookeeper-install.js';
export type { ZooKeeperInstallation, ZooKeeperAvailability } from './zookeeper-install.js';
export type { ZooKeeperSettings } from './zookeeper-node.js';
export { expireSession, type SessionHandle, type ServerTarget, type ExpireSessionOptions } from './expire-session.js';
export { locateZooKeeper } from './zookeeper-install.js';
export { eventually, sleep } from './eventually.js';
export { ManualClock, settle, type ManualTimerHandle } from './manual-clock.js';
export { untilTree, roundTrip } from './tree-change.js';
export { seededRandom } from './seeded-random.js';
export { tapTransport, type TapHooks } from './tap-transport.js';
export { startTestServer, connectRecording, TestClients, type RecordedClient } from './test-clients.js';
export { ZooKeeperSuite } from './zookeeper-suite.js';
export { launchChromium, findChromium, CHROMIUM_FLAGS, ChromiumUnavailableError } from './chromium.js';
export type { ChromiumHandle, LaunchChromiumOptions } from './chromium.js';
export { TenureServerProcess, type TenureServerProcessOptions, type TenureServerLogLine } from './tenure-server-process.js';
export { SaslZooKeeper, type SaslZooKeeperOptions } from './zookeeper-sasl.js';
export {
  makeTlsCertificates,
  STORE_PASSWORD,
  SUBJECTS,
  CLIENT_X509_ID,
  type TlsCertificates,
  type CertificateName,
} from './tls-certificates.js';
export { TlsTestingServer, javaClientFlags, NETTY_JARS, type TlsTestingServerOptions } from './zookeeper-tls.js';
export { nextEvent, type EventSource, type NextEventOptions } from './next-event.js';
export { EventLog } from './event-log.js';
export { childrenUntil, type ChildrenUntilOptions } from './children-until.js';
export { TestingEtcd, TestingEtcdCluster, type TestingEtcdOptions } from './testing-etcd.js';
