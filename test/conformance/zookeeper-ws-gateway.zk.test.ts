/**
 * The conformance suite, unchanged, against a real Apache ZooKeeper 3.8 reached over WebSocket
 * through the gateway of @tenure/server (`createWebSocketGateway`), frame for frame over TCP.
 */
import { describe } from 'vitest';
import { createWebSocketGateway } from '@tenure/server';
import { TestingServer, realZooKeeper } from '@tenure/testing';
import { webSocket } from '@tenure/ws';
import { conformanceSuite } from './suite.js';

const zk = realZooKeeper();

describe.skipIf(!zk.available)('real ZooKeeper', () => {
  // TestingServer: tickTime=200, extendedTypesEnabled=true, containers checked every 100 ms.
  conformanceSuite('Apache ZooKeeper 3.8, WebSocket through the gateway', async () => {
    const server = await TestingServer.start();
    const gateway = await createWebSocketGateway({ port: 0, path: '/zookeeper', connectString: server.connectString });
    return {
      transport: webSocket(gateway.url),
      tickMs: 200,
      containerCheckIntervalMs: 100,
      close: async () => {
        await gateway.close();
        await server.close();
      },
    };
  });
});
