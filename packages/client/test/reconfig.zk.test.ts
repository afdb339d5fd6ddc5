/**
 * Dynamic ensembles against a real 3-node ZooKeeper 3.8 with reconfigEnabled=true: a client given
 * one server learns the others, survives that server's SIGKILL with its session, and follows a
 * reconfig that removes the server and one that adds it back.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TestingCluster, realZooKeeper, nextEvent, sleep, eventually } from '@tenure/testing';
import {
  ConnectionLossError,
  ConnectionState,
  NoAuthError,
  BadVersionError,
  NewConfigNoQuorumError,
  createClient,
  type Client,
  type HostsChange,
} from '../src/index.js';

const zk = realZooKeeper();
const SUPER = 'super:s3cret';

describe.skipIf(!zk.available)('reconfig on a real 3-node ensemble', () => {
  let cluster: TestingCluster;
  let client: Client;
  const states: ConnectionState[] = [];

  beforeAll(async () => {
    cluster = await TestingCluster.start({ reconfigEnabled: true, superUser: SUPER });
  });
  afterAll(async () => {
    await client?.close();
    await cluster?.close();
  });

  test('reconfig without a super user is NoAuth', async () => {
    const plain = createClient({ connectString: cluster.address(1), sessionTimeoutMs: 4000, ensembleTracker: false });
    try {
      await plain.start();
      await expect(plain.reconfig({ leaving: ['3'] })).rejects.toBeInstanceOf(NoAuthError);
      expect(plain.hosts).toEqual([cluster.address(1)]);
    } finally {
      await plain.close();
    }
  });

  test('a client given only server 1 learns all three, keeps its session when server 1 is killed, and follows leave and join', async () => {
    const root = createClient({ connectString: cluster.address(1), ensembleTracker: false });
    await root.start();
    await root.create('/app');
    await root.close();
    client = createClient({
      connectString: cluster.address(0) + '/app',
      sessionTimeoutMs: 4000,
      authInfo: [{ scheme: 'digest', auth: SUPER }],
      // Rebalancing keeps a client whose server stays with probability S/(S+added): 0.99 stays.
      random: () => 0.99,
    });
    client.on('stateChanged', (s) => states.push(s));
    const learned = nextEvent<HostsChange>(client, 'hostsChanged', undefined, { timeoutMs: 20_000 });
    await client.start();
    expect(client.hosts).toEqual([cluster.address(0)]);
    const change = await learned;
    expect(change.previous).toEqual([cluster.address(0)]);
    expect([...client.hosts].sort()).toEqual([...cluster.addresses].sort());

    const config = await client.getConfig();
    expect(config.members.map((m) => m.id)).toEqual(['1', '2', '3']);
    expect(config.members[0]).toMatchObject({ host: '127.0.0.1', role: 'participant', clientHost: '127.0.0.1' });
    expect(config.version).toMatch(/^[0-9a-f]+$/);

    // The chroot is kept: a node made now lands under /app.
    await client.create('/under-chroot', 'x');
    const sessionId = client.sessionId;

    // The client stayed on server 1 through the rebalancing; crash it.
    expect(cluster.serverOf(client)).toBe(0);
    states.length = 0;
    await cluster.killServer(0);
    await client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 20_000 });
    expect(client.sessionId).toBe(sessionId);
    expect(states).not.toContain(ConnectionState.LOST);
    expect(cluster.serverOf(client)).toBeGreaterThan(0);

    // A new membership whose quorum is not connected (server 1 is down, server 4 does not exist).
    await expect(
      client.reconfig({ members: [cluster.serverLine(0), 'server.4=127.0.0.1:1:2:participant;127.0.0.1:3'] }),
    ).rejects.toBeInstanceOf(NewConfigNoQuorumError);

    // Remove server 1.
    const shrunk = nextEvent<HostsChange>(client, 'hostsChanged', undefined, { timeoutMs: 20_000 });
    const after = await client.reconfig({ leaving: ['1'], fromConfig: config.version });
    expect(after.members.map((m) => m.id)).toEqual(['2', '3']);
    expect(BigInt('0x' + after.version)).toBeGreaterThan(BigInt('0x' + config.version));
    await shrunk;
    const read = await client.getConfig();
    expect(read.members.map((m) => m.id)).toEqual(['2', '3']);
    expect(read.version).toBe(after.version);
    expect([...client.hosts].sort()).toEqual([cluster.address(1), cluster.address(2)].sort());

    // A stale fromConfig is refused.
    await expect(client.reconfig({ leaving: ['2'], fromConfig: config.version })).rejects.toBeInstanceOf(BadVersionError);

    // Bring server 1 back: restart it, then join it.
    await cluster.restartServer(0, { wait: false });
    const grown = nextEvent<HostsChange>(client, 'hostsChanged', undefined, { timeoutMs: 30_000 });
    const joined = await retryJoin(client, cluster.serverLine(0));
    expect(joined.members.map((m) => m.id)).toEqual(['1', '2', '3']);
    expect(BigInt('0x' + joined.version)).toBeGreaterThan(BigInt('0x' + after.version));
    await grown;
    expect([...client.hosts].sort()).toEqual([...cluster.addresses].sort());
    expect(client.sessionId).toBe(sessionId);
    expect((await client.getData('/under-chroot')).data.toString()).toBe('x');
    // Server 1 serves again, as a member of the ensemble.
    await cluster.waitServing();
    expect((await cluster.modes()).filter((m) => m === 'leader' || m === 'follower')).toHaveLength(3);

    // The server the client is on leaves: the client moves off it, with its session.
    const on = cluster.serverOf(client);
    expect(on).toBeGreaterThanOrEqual(0);
    const admin = createClient({
      connectString: cluster.address((on + 1) % 3),
      ensembleTracker: false,
      authInfo: [{ scheme: 'digest', auth: SUPER }],
    });
    await admin.start();
    const movedOff = nextEvent<HostsChange>(client, 'hostsChanged', undefined, { timeoutMs: 20_000 });
    // If that server leads, the ensemble elects another leader and the answer may be lost with the
    // connection: hostsChanged below shows the reconfig landed either way.
    await admin.reconfig({ leaving: [cluster.serverId(on)] }).catch((err: unknown) => {
      if (!(err instanceof ConnectionLossError)) throw err;
    });
    await admin.close();
    expect((await movedOff).hosts).not.toContain(cluster.address(on));
    await eventually(() => (client.isConnected && cluster.serverOf(client) !== on) || undefined, 20_000, 'moved off the server that left');
    expect(client.sessionId).toBe(sessionId);
    expect(states).not.toContain(ConnectionState.LOST);
    expect((await client.getData('/under-chroot')).data.toString()).toBe('x');
  });
});

/** The restarted server needs to have synced with the leader before a join can get a quorum. */
async function retryJoin(client: Client, line: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await client.reconfig({ joining: [line] });
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(250);
    }
  }
}
