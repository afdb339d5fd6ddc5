/**
 * The conformance suite, unchanged, against a real Apache ZooKeeper 3.8's secureClientPort
 * (Netty factory) through the @tenure/zookeeper transport over TLS. ssl.clientAuth=want and no
 * client certificate: one would authenticate every session as `x509`, and the suite's ACL cases
 * need anonymous sessions. Certificate identities and refusals: test/tls/.
 */
import { describe } from 'vitest';
import { TlsTestingServer, realZooKeeper } from '@tenure/testing';
import { conformanceSuite } from './suite.js';

const zk = realZooKeeper();

describe.skipIf(!zk.available)('real ZooKeeper over TLS', () => {
  // TestingServer's knobs: tickTime=200, extendedTypesEnabled=true, containers checked every 100 ms.
  conformanceSuite('Apache ZooKeeper 3.8, TLS transport (secureClientPort)', async () => {
    const server = await TlsTestingServer.start({ clientAuth: 'want' });
    return {
      transport: server.secureTransport(server.certificates.clientOptions(null)),
      tickMs: 200,
      containerCheckIntervalMs: 100,
      close: () => server.close(),
    };
  });
});
