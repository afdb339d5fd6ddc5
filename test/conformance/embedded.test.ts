/** The conformance suite against the embedded server through its in-process transport. */
import { createEmbeddedServer } from '@tenure/server';
import { conformanceSuite } from './suite.js';

conformanceSuite('embedded server, in-process transport', async () => {
  // The same knobs as the real-ZooKeeper harness: tickTime 200, container checks every 100 ms.
  const server = createEmbeddedServer({ tickMs: 200, containerCheckIntervalMs: 100 });
  return { transport: server.transport(), tickMs: 200, containerCheckIntervalMs: 100, close: () => server.close() };
});
