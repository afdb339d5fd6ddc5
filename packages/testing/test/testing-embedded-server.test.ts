/** TestingEmbeddedServer: the TestingServer interface over the embedded server. */
import { expect, test } from 'vitest';
import { ConnectionLossError, CreateMode, OPEN_ACL_UNSAFE, OpCode, type ACL, type ConnectParams } from '@tenure/protocol';
import { TestingEmbeddedServer } from '@tenure/testing';

const NEW: ConnectParams = { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 4000, readOnly: false };
const ignore = { onEvent() {}, onClose() {} };

test('transport(), dump(), stop() and restart() keep sessions and data; close()', async () => {
  const server = await TestingEmbeddedServer.start();
  const t = server.transport();
  const r = await t.connect(t.hosts[0]!, NEW, ignore);
  if (r.kind !== 'connected') throw new Error('expired');
  const c = r.connection;
  expect(c.negotiatedTimeoutMs).toBe(4000);
  await c.send({ type: OpCode.create, path: '/e', data: null, acl: OPEN_ACL_UNSAFE as ACL[], flags: CreateMode.EPHEMERAL });
  await c.send({ type: OpCode.getData, path: '/e', watch: true });
  const dump = await server.dump();
  expect(dump.sessions).toEqual([{ sessionId: c.sessionId, ephemerals: ['/e'], watchedPaths: ['/e'], watches: 1 }]);
  expect(server.connectString).toMatch(/^127\.0\.0\.1:\d+$/); // TCP: see testing-embedded-tcp.test.ts

  await server.stop();
  expect(server.running).toBe(false);
  expect(c.closed).toBe(true);
  await expect(t.connect(t.hosts[0]!, NEW, ignore)).rejects.toBeInstanceOf(ConnectionLossError);
  await server.restart();
  const again = await t.connect(t.hosts[0]!, { ...NEW, sessionId: c.sessionId, passwd: c.passwd }, ignore);
  expect(again.kind).toBe('connected');
  await server.close();
  expect(server.running).toBe(false);
});
