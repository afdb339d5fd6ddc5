/**
 * The conformance suite, unchanged, against a real Apache ZooKeeper 3.8 (Debian's package, run by
 * @tenure/testing's TestingServer) over TCP through the @tenure/zookeeper transport.
 */
import { describe } from 'vitest';
import { TestingServer, realZooKeeper } from '@tenure/testing';
import { conformanceSuite } from './suite.js';

const zk = realZooKeeper();

describe.skipIf(!zk.available)('real ZooKeeper', () => {
  // TestingServer: tickTime=200, extendedTypesEnabled=true, containers checked every 100 ms.
  conformanceSuite('Apache ZooKeeper 3.8, TCP transport', async () => {
    const server = await TestingServer.start();
    return { transport: server.transport(), tickMs: 200, containerCheckIntervalMs: 100, close: () => server.close() };
  });
});
