/**
 * The conformance suite against the embedded server over WebSocket: its WebSocket listener
 * (`server.listen({ webSocket })`) reached through the @tenure/ws transport, one frame per message.
 */
import { createEmbeddedServer } from '@tenure/server';
import { webSocket } from '@tenure/ws';
import { conformanceSuite } from './suite.js';

conformanceSuite('embedded server, WebSocket listener', async () => {
  // The same knobs as the other targets: tickTime 200, container checks every 100 ms.
  const server = createEmbeddedServer({ tickMs: 200, containerCheckIntervalMs: 100 });
  const { url } = await server.listen({ port: 0, webSocket: { path: '/zookeeper' } });
  return { transport: webSocket(url), tickMs: 200, containerCheckIntervalMs: 100, close: () => server.close() };
});
