/**
 * The conformance suite against the embedded server over TCP: its listener (`server.listen()`)
 * reached through the @tenure/zookeeper transport, the same path a real ZooKeeper is reached by.
 */
import { createEmbeddedServer } from '@tenure/server';
import { zookeeper } from '@tenure/zookeeper';
import { conformanceSuite } from './suite.js';

conformanceSuite('embedded server, TCP listener', async () => {
  // The same knobs as the other targets: tickTime 200, container checks every 100 ms.
  const server = createEmbeddedServer({ tickMs: 200, containerCheckIntervalMs: 100 });
  const { connectString } = await server.listen({ port: 0 });
  return { transport: zookeeper(connectString), tickMs: 200, containerCheckIntervalMs: 100, close: () => server.close() };
});
