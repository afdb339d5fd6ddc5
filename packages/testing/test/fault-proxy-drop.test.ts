/** FaultProxy.dropReply on ZooKeeper frames: by op and path, by xid; the request applies, its reply never arrives. */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ConnectionState, RetryPolicies, createClient, type Client } from '@tenure/client';
import { OpCode } from '@tenure/protocol';
import { FaultProxy, TestingEmbeddedServer } from '@tenure/testing';

let server: TestingEmbeddedServer;
let proxy: FaultProxy;
let client: Client;

beforeAll(async () => {
  server = await TestingEmbeddedServer.start();
  proxy = await FaultProxy.start(server.connectString);
  // No ensemble tracking: its config read on each connection would take an xid the second test counts.
  client = createClient({
    connectString: proxy.connectString,
    retryPolicy: RetryPolicies.exponentialBackoff(20, 5, 200),
    ensembleTracker: false,
  });
  await client.start();
});
afterAll(async () => {
  await client.close();
  await proxy.close();
  await server.close();
});

test('by op and path: exactly that reply is swallowed, the connection cut, the session kept', async () => {
  await client.create('/x', 'v');
  const session = client.sessionId;
  const dropped = proxy.dropReply({ op: 'setData', path: '/x' });
  const reconnected = client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
  await client.setData('/x', 'w'); // unversioned: retried
  await reconnected;
  const d = await dropped;
  expect(d).toMatchObject({ connection: 1, op: OpCode.setData, path: '/x', err: 0 });
  expect(d.xid).toBeGreaterThan(0);
  expect(d.zxid).toBeGreaterThan(0n);
  expect(client.sessionId).toBe(session);
  expect(proxy.accepted).toHaveLength(2);
  // The request applied once before its retry applied again.
  expect((await client.exists('/x'))!.version).toBe(2);
});

test('by xid: the reply to that xid, on the connection that sends it next', async () => {
  // A connection numbers its requests from 1: after this drop, the retry is xid 1 on a new connection.
  const probe = proxy.dropReply({ op: 'exists', path: '/probe' });
  await client.exists('/probe');
  const before = (await probe).connection;
  const next = proxy.dropReply({ xid: 2 });
  expect((await client.getData('/x')).data.toString()).toBe('w');
  const d = await next;
  expect(d).toMatchObject({ connection: before + 1, xid: 2, op: OpCode.getData, path: '/x' });
});
