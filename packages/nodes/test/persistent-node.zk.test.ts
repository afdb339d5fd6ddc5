/**
 * PersistentNode on a real 3-node ZooKeeper 3.8 ensemble: re-creation after a delete by another
 * client, after session expiry (closeSession from outside, and a partition through FaultProxy),
 * after its server is killed and after a quorum loss; a protected sequential node keeps its name;
 * never two nodes; start-then-close leaves nothing; close leaves no watch on the server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionState, CreateMode, type Client } from '@tenure/client';
import { FaultProxy, TestingCluster, expireSession, nextEvent, realZooKeeper } from '@tenure/testing';
import { PersistentNode, type PersistentNodeOptions } from '../src/index.js';
import { connect, eventually, sleep } from './harness.js';

const zk = realZooKeeper();

describe.skipIf(!zk.available)('PersistentNode on a ZooKeeper 3.8 ensemble', () => {
  let cluster: TestingCluster;
  let admin: Client;
  const clients: Client[] = [];
  const nodes: PersistentNode[] = [];
  const proxies: FaultProxy[] = [];

  beforeAll(async () => {
    cluster = await TestingCluster.start();
    admin = (await connect(cluster.connectString, { sessionTimeoutMs: 4000 })).client;
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.close()));
    await Promise.all(clients.splice(0).map((c) => c.close()));
    for (const p of proxies.splice(0)) await p.close();
    for (let n = 0; n < cluster.size; n++) if (!cluster.running(n)) await cluster.restartServer(n, { wait: false });
    await cluster.waitServing();
  });
  afterAll(async () => {
    await admin?.close();
    await cluster?.close();
  });

  async function open(connectString = cluster.connectString, sessionTimeoutMs = 2000) {
    const { client, states } = await connect(connectString, { sessionTimeoutMs, connectionTimeoutMs: 4000 });
    clients.push(client);
    return { client, states };
  }

  function keep(client: Client, options: PersistentNodeOptions): PersistentNode {
    const node = new PersistentNode(client, { rejoinJitterMs: 300, ...options });
    nodes.push(node);
    return node;
  }

  // admin reads after a sync: its server may be a follower that has not yet applied what the
  // client's server acknowledged (ZooKeeper's reads are not linearizable across servers).
  async function kids(path: string): Promise<string[]> {
    await admin.sync('/');
    return (await admin.getChildren(path).catch(() => ({ children: [] as string[] }))).children.sort();
  }

  async function existsAfterSync(path: string): ReturnType<Client['exists']> {
    await admin.sync('/');
    return admin.exists(path);
  }

  const protectedSeq = (path: string): PersistentNodeOptions => ({
    path,
    mode: CreateMode.EPHEMERAL_SEQUENTIAL,
    protection: true,
    data: 'd',
  });

  it('is re-created under its protected name after another client deletes it', async () => {
    const { client } = await open();
    const node = keep(client, protectedSeq('/zdel/m-'));
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 5000 });
    const path = node.actualPath!;
    expect(path).toMatch(/^\/zdel\/_c_[0-9a-f-]{36}-m-\d{10}$/);
    for (let i = 0; i < 2; i++) {
      const before = (await existsAfterSync(path))!.czxid;
      const recreated = nextEvent(node, 'created', undefined, { timeoutMs: 5000 });
      await admin.delete(path);
      await recreated;
      expect((await existsAfterSync(path))!.czxid).toBeGreaterThan(before);
    }
    expect(await kids('/zdel')).toEqual([path.slice('/zdel/'.length)]);
    expect((await existsAfterSync(path))!.ephemeralOwner).toBe(client.sessionId);
  });

  it('after expireSession it is back within the session timeout + 2 s, owned by the new session, same name', async () => {
    const { client } = await open();
    const node = keep(client, protectedSeq('/zexp/m-'));
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 5000 });
    const path = node.actualPath!;
    const oldId = client.sessionId;
    const T = client.negotiatedTimeoutMs;
    const back = nextEvent(node, 'created', undefined, { timeoutMs: T + 10_000 });
    await expireSession(client, cluster);
    const t0 = performance.now();
    await back;
    expect(performance.now() - t0).toBeLessThan(T + 2000);
    const s = await existsAfterSync(path);
    expect(s?.ephemeralOwner).not.toBe(oldId);
    expect(s?.ephemeralOwner).toBe(client.sessionId);
    expect(await kids('/zexp')).toEqual([path.slice('/zexp/'.length)]);
  });

  it('after a partition through FaultProxy past the session timeout it is back within T + 2 s of LOST', async () => {
    for (const address of cluster.addresses) proxies.push(await FaultProxy.start(address));
    const { client } = await open(proxies.map((p) => p.address).join(','), 1500);
    const node = keep(client, { path: '/zpart/n', data: 'x' });
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 5000 });
    const oldId = client.sessionId;
    const T = client.negotiatedTimeoutMs;
    for (const p of proxies) p.blackhole();
    await client.waitForState(ConnectionState.LOST, { timeoutMs: T + 3000 });
    const lostAt = performance.now();
    const back = nextEvent(node, 'created', undefined, { timeoutMs: T + 2000 });
    for (const p of proxies) p.heal();
    await back;
    expect(performance.now() - lostAt).toBeLessThan(T + 2000);
    expect(client.sessionId).not.toBe(oldId);
    expect((await existsAfterSync('/zpart/n'))?.ephemeralOwner).toBe(client.sessionId);
    expect(await kids('/zpart')).toEqual(['n']);
  });

  it('killing the server the client is on: the node stays, one node, no churn', async () => {
    const { client } = await open(cluster.connectString, 4000);
    const node = keep(client, { path: '/zkill/n' });
    const events: string[] = [];
    node.on('created', () => void events.push('created'));
    node.on('deleted', () => void events.push('deleted'));
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 5000 });
    const czxid = (await existsAfterSync('/zkill/n'))!.czxid;
    const victim = cluster.serverOf(client);
    await cluster.killServer(victim);
    await client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 8000 });
    await sleep(300);
    const stat = (await existsAfterSync('/zkill/n'))!;
    expect(stat.czxid).toBe(czxid);
    expect(stat.ephemeralOwner).toBe(client.sessionId);
    expect(await kids('/zkill')).toEqual(['n']);
    expect(events).toEqual(['created']);
  });

  it('after a quorum loss past the session timeout it is re-created once, on the new session, with its name', async () => {
    const { client } = await open(cluster.connectString, 1500);
    const node = keep(client, protectedSeq('/zquorum/m-'));
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 5000 });
    const path = node.actualPath!;
    const oldId = client.sessionId;
    const T = client.negotiatedTimeoutMs;
    const on = cluster.serverOf(client);
    const killed = [0, 1, 2].filter((n) => n !== on);
    await Promise.all(killed.map((n) => cluster.killServer(n)));
    await client.waitForState(ConnectionState.LOST, { timeoutMs: T + 3000 });
    await sleep(T);
    const back = nextEvent(node, 'created', undefined, { timeoutMs: 15_000 });
    await Promise.all(killed.map((n) => cluster.restartServer(n, { wait: false })));
    await cluster.waitServing();
    // The restored quorum may still hold the old session (and its node) for a while: the
    // ownership rule deletes that old incarnation instead of adopting it.
    await back;
    expect(client.sessionId).not.toBe(oldId);
    expect((await existsAfterSync(path))?.ephemeralOwner).toBe(client.sessionId);
    expect(client.previousSessionIds).toContain(oldId);
    expect(await kids('/zquorum')).toEqual([path.slice('/zquorum/'.length)]);
    await sleep(3 * T); // the old session is gone for good by now: still exactly one node, ours
    expect((await existsAfterSync(path))?.ephemeralOwner).toBe(client.sessionId);
    expect(await kids('/zquorum')).toEqual([path.slice('/zquorum/'.length)]);
  });

  it('start followed at once by close leaves no node; close leaves no watch on the server', async () => {
    const { client } = await open(cluster.address(0));
    await admin.create('/zquick', null);
    for (const mode of [CreateMode.EPHEMERAL, CreateMode.PERSISTENT, CreateMode.EPHEMERAL_SEQUENTIAL]) {
      for (const protection of [false, true]) {
        const node = new PersistentNode(client, { path: '/zquick/n-', mode, protection });
        await node.start();
        await node.close();
      }
    }
    const node = new PersistentNode(client, { path: '/zquick/kept', mode: CreateMode.PERSISTENT });
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 5000 });
    const mine = async () => (await cluster.dump(0)).sessions.find((s) => s.sessionId === client.sessionId);
    await eventually(async () => (await mine())?.watchedPaths.includes('/zquick/kept'), 3000, 'the watch on the server');
    await node.close();
    await sleep(200);
    expect(await kids('/zquick')).toEqual([]);
    expect((await mine())?.watches ?? 0).toBe(0);
  });
});
