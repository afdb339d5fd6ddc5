/** The conformance suite against real Apache ZooKeeper 3.8 over TCP (the @tenure/zookeeper transport). */
import { TestingServer } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { conformanceSuite } from './suite.js';

// TestingServer runs ZooKeeper with tickTime=200, extendedTypesEnabled=true and container checks every 100 ms.
conformanceSuite('Apache ZooKeeper 3.8, TCP transport', async () => {
  const server = await TestingServer.start();
  return { transport: zookeeper(server.connectString), tickMs: 200, containerCheckIntervalMs: 100, close: () => server.close() };
});
