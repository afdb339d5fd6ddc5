/**
 * The client against a real Apache ZooKeeper 3.8 (Debian's package through @tenure/testing), over
 * the TCP transport selected by `connectString`. Faults are network faults (FaultProxy) and
 * ZooKeeper's own session expiry.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FaultProxy, TestingServer, expireSession, realZooKeeper } from '@tenure/testing';
import {
  ConnectionState,
  CreateMode,
  RetryPolicies,
  createClient,
  type Client,
  type ConnectionState as State,
  type PersistentWatchEvent,
} from '../src/index.js';

const zk = realZooKeeper();
let server: TestingServer;
const clients: Client[] = [];
const proxies: FaultProxy[] = [];

async function open(connectString: string, sessionTimeoutMs = 2000): Promise<{ client: Client; states: State[] }> {
  const client = createClient({
    connectString,
    sessionTimeoutMs,
    connectionTimeoutMs: 5000,
    retryPolicy: RetryPolicies.exponentialBackoff(50, 10, 500),
  });
  const states: State[] = [];
  client.on('stateChanged', (s) => states.push(s));
  clients.push(client);
  await client.start();
  return { client, states };
}

const until = async (fn: () => boolean | Promise<boolean>, ms = 8000): Promise<void> => {
  const end = performance.now() + ms;
  while (!(await fn())) {
    if (performance.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe.skipIf(!zk.available)('client on real ZooKeeper', () => {
  beforeAll(async () => {
    server = await TestingServer.start();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });
  afterAll(async () => {
    await server?.close();
  });

  it('operations through a connectString with a chroot', async () => {
    const { client: root } = await open(server.connectString);
    await root.create('/chroot', null).catch(() => {});
    const { client } = await open(`${server.connectString}/chroot`);
    const r = await client.create('/a', 'x');
    expect(r.path).toBe('/a');
    expect((await root.getData('/chroot/a')).data.toString()).toBe('x');
    const tx = await client.transaction().create('/b', 'b').setData('/a', 'y', { version: 0 }).commit();
    expect(tx[0]).toMatchObject({ type: 'create', path: '/b' });
    // ZooKeeper turns create2 inside multi into create: a plain create's result has no Stat.
    expect((tx[0] as { stat?: unknown }).stat).toBeUndefined();
    const p = await client.create('/locks/lock-', null, {
      mode: CreateMode.EPHEMERAL_SEQUENTIAL,
      protection: true,
      createParentContainers: true,
    });
    expect(p.path).toMatch(/^\/locks\/_c_[0-9a-f-]{36}-lock-\d{10}$/);
    expect(await client.getEphemerals()).toEqual([p.path]);
    const reads = await client.multiRead([
      { type: 'getData', path: '/a' },
      { type: 'getChildren', path: '/' },
    ]);
    expect(reads[0]).toMatchObject({ type: 'getData', path: '/a' });
    await client.delete('/locks', { deletingChildren: true });
    await client.delete('/a');
    await client.delete('/b');
  });

  it('a network partition: SUSPENDED, then RECONNECTED with the same session, and watches catch up', async () => {
    const proxy = await FaultProxy.start(server.connectString);
    proxies.push(proxy);
    const { client, states } = await open(proxy.connectString, 4000);
    const { client: other } = await open(server.connectString);
    await other.create('/w', 'v0').catch(() => {});
    const events: string[] = [];
    await client.getData('/w', { watch: (e) => void events.push(e.type) });
    const id = client.sessionId;
    proxy.blackhole();
    await client.waitForState(ConnectionState.SUSPENDED, { timeoutMs: 5000 });
    await other.setData('/w', 'v1');
    proxy.heal();
    await client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    await until(() => events.length === 1);
    expect(events).toEqual(['NodeDataChanged']);
    expect(client.sessionId).toBe(id);
    expect(states).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED, ConnectionState.RECONNECTED]);
    await other.delete('/w');
  });

  it('a partition past the timeout: LOST by the deadline, a new session, and a persistent watch resets', async () => {
    const proxy = await FaultProxy.start(server.connectString);
    proxies.push(proxy);
    const { client, states } = await open(proxy.connectString, 2000);
    const T = client.negotiatedTimeoutMs;
    const got: PersistentWatchEvent[] = [];
    const watch = await client.addWatch('/pw', { recursive: true, listener: (e) => got.push(e) });
    await client.create('/eph', null, { mode: CreateMode.EPHEMERAL });
    const oldId = client.sessionId;
    const sent = performance.now();
    await client.sync('/');
    proxy.blackhole();
    await client.waitForState(ConnectionState.LOST, { timeoutMs: T + 2000 });
    expect(performance.now() - sent).toBeLessThanOrEqual(T + 500);
    proxy.heal();
    await client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 8000 });
    expect(states).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED, ConnectionState.LOST, ConnectionState.RECONNECTED]);
    expect(client.sessionId).not.toBe(oldId);
    await until(() => got.some((e) => e.type === 'reset'));
    await client.create('/pw', 'x');
    await until(() => got.some((e) => e.type === 'NodeCreated'));
    await until(async () => (await client.exists('/eph')) === null);
    await watch.close();
    await client.delete('/pw');
  });

  it('removing one kind of watch keeps the others on the same path', async () => {
    const { client: c } = await open(server.connectString);
    const { client: other } = await open(server.connectString);
    await other.create('/mix', 'v0');
    const oneShot: string[] = [];
    const persistent: string[] = [];
    const w = await c.addWatch('/mix', { listener: (e) => persistent.push(e.type) });
    await c.getData('/mix', { watch: (e) => oneShot.push(e.type) });
    await w.close();
    await other.setData('/mix', 'v1');
    await until(() => oneShot.length === 1);
    const w2 = await c.addWatch('/mix', { listener: (e) => persistent.push(e.type) });
    const cb = (e: { type: string }): void => void oneShot.push(e.type);
    await c.getData('/mix', { watch: cb });
    await c.removeWatches('/mix', 2 /* Data */, { watcher: cb });
    await other.setData('/mix', 'v2');
    await other.setData('/mix', 'v3');
    await until(() => persistent.length === 2);
    expect(oneShot).toEqual(['NodeDataChanged', 'DataWatchRemoved']);
    await w2.close();
    await other.delete('/mix');
  });

  it('expireSession gives LOST, then RECONNECTED', async () => {
    const { client, states } = await open(server.connectString, 2000);
    const oldId = client.sessionId;
    await expireSession({ sessionId: client.sessionId, passwd: client.sessionPassword }, server);
    await client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 8000 });
    expect(states).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED, ConnectionState.LOST, ConnectionState.RECONNECTED]);
    expect(client.previousSessionIds).toEqual([oldId]);
  });
});
