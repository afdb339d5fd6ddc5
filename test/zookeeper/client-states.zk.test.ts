/**
 * The client's connection states against a real ZooKeeper 3.8, with real faults: a FaultProxy
 * between client and server (reset, blackhole) and expireSession (a second connection closes the
 * session). The same scenarios as the client's own state tests on the embedded server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionLossError, ConnectionState, CreateMode, RetryPolicies, SessionExpiredError, type Client } from '@tenure/client';
import { EventLog, FaultProxy, TestingServer, expireSession, realZooKeeper } from '@tenure/testing';
import { connect, eventually, sleep } from './harness.js';

const zk = realZooKeeper();
const { CONNECTED, SUSPENDED, RECONNECTED, LOST } = ConnectionState;

describe.skipIf(!zk.available)('client connection states on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let proxy: FaultProxy;
  const clients: Client[] = [];

  beforeAll(async () => {
    server = await TestingServer.start();
  });
  afterEach(async () => {
    proxy?.heal();
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await proxy?.close();
  });
  afterAll(async () => {
    await server?.close();
  });

  async function open(options: Parameters<typeof connect>[1] = {}, start = true) {
    proxy = await FaultProxy.start(server.connectString);
    const r = await connect(proxy.address, options, start);
    clients.push(r.client);
    return r;
  }

  const sessionOnServer = async (id: bigint) => (await server.dump()).sessions.find((s) => s.sessionId === id);

  it('start gives CONNECTED, once; the client names the server it is on', async () => {
    const { client, states } = await open();
    expect(states).toEqual([CONNECTED]);
    expect(client.connectedServer).toBe(proxy.address);
    expect(client.sessionPassword.length).toBe(16);
    expect(client.negotiatedTimeoutMs).toBe(2000);
    // ZooKeeper's dump lists sessions by expiry bucket, and a request in flight moves the session
    // between buckets (the ensemble tracker reads the config right after CONNECTED): a sync's
    // reply orders after that read, so the dump sees the session at rest.
    await client.sync('/');
    expect(await sessionOnServer(client.sessionId)).toBeDefined();
  });

  it('an idle session stays connected: pings keep it alive for many timeouts', async () => {
    const { client, states } = await open({ sessionTimeoutMs: 600 });
    await client.create('/idle', null, { mode: CreateMode.EPHEMERAL });
    await sleep(3000);
    expect(states).toEqual([CONNECTED]);
    expect((await sessionOnServer(client.sessionId))?.ephemerals).toEqual(['/idle']);
  });

  it('a reset connection gives SUSPENDED then RECONNECTED, same session, ephemerals and watches intact', async () => {
    const { client, states } = await open();
    await client.create('/eph', 'x', { mode: CreateMode.EPHEMERAL });
    await client.create('/watched', 'a');
    const fired = new EventLog<string>();
    await client.getData('/watched', { watch: (e) => void fired.push(`${e.type}:${e.path}`) });
    const id = client.sessionId;
    proxy.reset();
    await client.waitForState(RECONNECTED, { timeoutMs: 5000 });
    expect(states).toEqual([CONNECTED, SUSPENDED, RECONNECTED]);
    expect(client.sessionId).toBe(id);
    expect((await client.exists('/eph'))?.ephemeralOwner).toBe(id);
    // The watch was re-registered with SetWatches on the new connection.
    const other = (await connect(server.connectString)).client;
    clients.push(other);
    await other.setData('/watched', 'b');
    await fired.atLeast(1, { timeoutMs: 3000 });
    expect(fired[0]).toMatch(/\/watched$/);
    await other.delete('/watched');
  });

  it('blackhole past the timeout: SUSPENDED, LOST by the deadline (+500 ms), then RECONNECTED with a new session', async () => {
    const { client, states, timeline } = await open({ sessionTimeoutMs: 1200 });
    await client.create('/bh', null, { mode: CreateMode.EPHEMERAL });
    const oldId = client.sessionId;
    const T = client.negotiatedTimeoutMs;
    const sentAt = performance.now();
    await client.exists('/bh');
    proxy.blackhole();
    await client.waitForState(LOST, { timeoutMs: 5000 });
    const lostAt = performance.now();
    expect(lostAt - sentAt).toBeGreaterThanOrEqual(T - 5);
    expect(lostAt - sentAt).toBeLessThanOrEqual(T + 500);
    const suspendedAt = timeline.find(([s]) => s === SUSPENDED)![1];
    expect(suspendedAt).toBeLessThan(timeline.find(([s]) => s === LOST)![1]);
    proxy.heal();
    await client.waitForState(RECONNECTED, { timeoutMs: 5000 });
    expect(states).toEqual([CONNECTED, SUSPENDED, LOST, RECONNECTED]);
    expect(client.sessionId).not.toBe(oldId);
    expect(client.previousSessionIds).toEqual([oldId]);
    // The server expires the old session on its own clock: its ephemeral goes with it.
    await eventually(async () => !(await sessionOnServer(oldId)), 3 * T, 'the old session to expire');
    expect(await client.exists('/bh')).toBeNull();
  });

  it('expireSession while connected: SUSPENDED, LOST, RECONNECTED with a new session; ephemerals gone', async () => {
    const { client, states } = await open();
    await client.create('/ex', null, { mode: CreateMode.EPHEMERAL });
    const oldId = client.sessionId;
    // ZooKeeper drops the client's connection when expireSession re-attaches; a client that
    // re-attached before the closeSession would take the session back for a moment (and see
    // RECONNECTED, SUSPENDED first). A slow network in front of the client keeps its reconnect
    // behind the closeSession, which goes straight to the server.
    proxy.delay(300);
    await expireSession(client, server);
    proxy.heal();
    await client.waitForState(RECONNECTED, { timeoutMs: 5000 });
    expect(states).toEqual([CONNECTED, SUSPENDED, LOST, RECONNECTED]);
    expect(client.sessionId).not.toBe(oldId);
    expect(await client.exists('/ex')).toBeNull();
    expect(await sessionOnServer(oldId)).toBeUndefined();
  });

  it('expireSession while disconnected gives LOST on reconnect, then RECONNECTED', async () => {
    const { client, states } = await open({ sessionTimeoutMs: 3000 });
    await client.create('/ex2', null, { mode: CreateMode.EPHEMERAL });
    const oldId = client.sessionId;
    proxy.blackhole();
    await client.waitForState(SUSPENDED, { timeoutMs: 3000 });
    await expireSession(client, server);
    proxy.reset();
    proxy.heal();
    await client.waitForState(RECONNECTED, { timeoutMs: 5000 });
    expect(states).toEqual([CONNECTED, SUSPENDED, LOST, RECONNECTED]);
    expect(client.previousSessionIds).toEqual([oldId]);
    expect(await client.exists('/ex2')).toBeNull();
  });

  it('operations issued while SUSPENDED wait for the reconnect', async () => {
    const { client } = await open();
    await client.create('/n', 'v');
    proxy.blackhole();
    proxy.reset();
    await client.waitForState(SUSPENDED, { timeoutMs: 3000 });
    const pending = client.getData('/n');
    await sleep(300);
    proxy.heal();
    expect((await pending).data.toString()).toBe('v');
    await client.delete('/n');
  });

  it('operations fail with ConnectionLoss after connectionTimeoutMs when the retry policy gives up', async () => {
    const { client } = await open({ connectionTimeoutMs: 300, retryPolicy: RetryPolicies.none(), sessionTimeoutMs: 4000 });
    proxy.blackhole();
    proxy.reset();
    await client.waitForState(SUSPENDED, { timeoutMs: 3000 });
    const t0 = performance.now();
    await expect(client.getData('/')).rejects.toBeInstanceOf(ConnectionLossError);
    const waited = performance.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(280);
    expect(waited).toBeLessThan(1500);
  });

  it('a request in flight when the session is lost fails with SessionExpired (never retried)', async () => {
    const { client } = await open({ sessionTimeoutMs: 800, retryPolicy: RetryPolicies.forever(50), connectionTimeoutMs: 5000 });
    proxy.blackhole();
    const op = client.getData('/');
    await expect(op).rejects.toBeInstanceOf(SessionExpiredError);
    expect(client.state === LOST || client.state === RECONNECTED).toBe(true);
  });

  it('start rejects on timeout when no server answers, and can be retried', async () => {
    const r = await open({ sessionTimeoutMs: 2000, connectionTimeoutMs: 300 }, false);
    proxy.blackhole();
    await expect(r.client.start()).rejects.toMatchObject({ name: 'TimeoutError' });
    proxy.heal();
    await r.client.start({ timeoutMs: 5000 });
    expect(r.client.state).toBe(CONNECTED);
  });

  it('close() ends the session on the server at once', async () => {
    const { client } = await open();
    await client.create('/closing', null, { mode: CreateMode.EPHEMERAL });
    const id = client.sessionId;
    await client.close();
    expect(await sessionOnServer(id)).toBeUndefined();
  });
});
