/**
 * Fault tests on a real 3-node ZooKeeper 3.8 ensemble: crash the server the client is on, partition
 * the client from every server (FaultProxy per server), and lose the quorum for longer than the
 * session timeout. Faults are made in the servers and the network, never in the client.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionState, CreateMode, type Client } from '@tenure/client';
import { EventLog, FaultProxy, TestingCluster, realZooKeeper } from '@tenure/testing';
import { connect, eventually, sleep } from './harness.js';

const zk = realZooKeeper();
const { CONNECTED, SUSPENDED, RECONNECTED, LOST } = ConnectionState;

describe.skipIf(!zk.available)('client on a 3-node ZooKeeper 3.8 ensemble', () => {
  let cluster: TestingCluster;
  const clients: Client[] = [];
  const proxies: FaultProxy[] = [];

  beforeAll(async () => {
    cluster = await TestingCluster.start();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    for (const p of proxies.splice(0)) await p.close();
    // Every test leaves the whole ensemble serving for the next.
    for (let n = 0; n < cluster.size; n++) if (!cluster.running(n)) await cluster.restartServer(n, { wait: false });
    await cluster.waitServing();
  });
  afterAll(async () => {
    await cluster?.close();
  });

  async function open(connectString: string, options: Parameters<typeof connect>[1] = {}) {
    const r = await connect(connectString, options);
    clients.push(r.client);
    return r;
  }

  async function sessionAlive(id: bigint): Promise<boolean> {
    return (await cluster.dump()).sessions.some((s) => s.sessionId === id);
  }

  it('killing the server the client is on: SUSPENDED, then RECONNECTED elsewhere within the session timeout, same session, ephemerals and watches intact', async () => {
    const { client, states } = await open(cluster.connectString, { sessionTimeoutMs: 4000 });
    const T = client.negotiatedTimeoutMs;
    await client.create('/kill-eph', 'x', { mode: CreateMode.EPHEMERAL });
    await client.create('/kill-watched', 'a');
    const fired = new EventLog<string>();
    await client.getData('/kill-watched', { watch: (e) => void fired.push(`${e.type}:${e.path}`) });
    const id = client.sessionId;
    const victim = cluster.serverOf(client);
    expect(victim).toBeGreaterThanOrEqual(0);

    await cluster.killServer(victim);
    const killedAt = performance.now();
    await client.waitForState(RECONNECTED, { timeoutMs: T });
    expect(performance.now() - killedAt).toBeLessThan(T);
    expect(states).toEqual([CONNECTED, SUSPENDED, RECONNECTED]);
    expect(client.sessionId).toBe(id);
    const now = cluster.serverOf(client);
    expect(now).toBeGreaterThanOrEqual(0);
    expect(now).not.toBe(victim);
    expect((await client.exists('/kill-eph'))?.ephemeralOwner).toBe(id);

    const other = (await open(cluster.address([0, 1, 2].find((n) => n !== victim)!))).client;
    await other.setData('/kill-watched', 'b');
    await fired.atLeast(1, { timeoutMs: 3000 }); // the watch fires after the reconnect
    expect(fired[0]).toMatch(/\/kill-watched$/);
    await other.delete('/kill-watched');
  });

  it('blackholing every proxy past the session timeout: LOST by the deadline, then RECONNECTED with a new session; old ephemerals gone', async () => {
    for (const address of cluster.addresses) proxies.push(await FaultProxy.start(address));
    const { client, states } = await open(proxies.map((p) => p.address).join(','), { sessionTimeoutMs: 1500 });
    const T = client.negotiatedTimeoutMs;
    await client.create('/bh-eph', null, { mode: CreateMode.EPHEMERAL });
    const oldId = client.sessionId;
    const sentAt = performance.now();
    await client.exists('/bh-eph');
    for (const p of proxies) p.blackhole();
    await client.waitForState(LOST, { timeoutMs: T + 2000 });
    expect(performance.now() - sentAt).toBeLessThanOrEqual(T + 500);
    await sleep(300);
    for (const p of proxies) p.heal();
    await client.waitForState(RECONNECTED, { timeoutMs: 10_000 });
    expect(states).toEqual([CONNECTED, SUSPENDED, LOST, RECONNECTED]);
    expect(client.sessionId).not.toBe(oldId);
    await eventually(async () => !(await sessionAlive(oldId)), 3 * T, 'the old session to expire');
    expect(await client.exists('/bh-eph')).toBeNull();
  });

  it('losing the quorum for longer than the session timeout: LOST, no re-attach of the old session once quorum returns, works on a new one', async () => {
    const { client, states } = await open(cluster.connectString, { sessionTimeoutMs: 1500 });
    const T = client.negotiatedTimeoutMs;
    await client.create('/q-eph', null, { mode: CreateMode.EPHEMERAL });
    const oldId = client.sessionId;
    const on = cluster.serverOf(client);
    // Kill the two other servers, then the connection's server stops serving too.
    const killed = [0, 1, 2].filter((n) => n !== on);
    await Promise.all(killed.map((n) => cluster.killServer(n)));
    await client.waitForState(LOST, { timeoutMs: T + 3000 });
    await sleep(T);
    await Promise.all(killed.map((n) => cluster.restartServer(n, { wait: false })));
    await cluster.waitServing();
    await client.waitForState(RECONNECTED, { timeoutMs: 15_000 });
    expect(states).toEqual([CONNECTED, SUSPENDED, LOST, RECONNECTED]);
    expect(client.sessionId).not.toBe(oldId);
    expect(client.previousSessionIds).toEqual([oldId]);
    // The restored quorum may still hold the old session for one timeout (a new leader restarts
    // session clocks); the client never re-attaches it, and it goes.
    await eventually(async () => !(await sessionAlive(oldId)), 3 * T + 2000, 'the old session to be gone');
    expect(await client.exists('/q-eph')).toBeNull();
    await client.create('/q-new', 'ok', { mode: CreateMode.EPHEMERAL });
    expect((await client.getData('/q-new')).data.toString()).toBe('ok');
  });
});
