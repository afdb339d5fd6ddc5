/**
 * Ensemble tracking over the embedded server: one server behind three FaultProxies plays a
 * three-member ensemble whose config (setEnsembleConfig) names the proxies' addresses. A client
 * given one member learns the others, follows each change (hostsChanged, chroot kept) and moves
 * off a member that left with its session; `ensembleTracker: false`, a config without client
 * addresses and the in-process transport leave the hosts alone.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { FaultProxy, TestingEmbeddedServer, nextEvent } from '@tenure/testing';
import { ConnectionState, IllegalStateError, createClient, type Client, type HostsChange, type WatchEvent } from '../src/index.js';

const line = (id: number, p: FaultProxy) => `server.${id}=127.0.0.1:${1000 + id}:${2000 + id}:participant;${p.address}`;

describe('ensemble tracking', () => {
  let server: TestingEmbeddedServer;
  let proxies: FaultProxy[];
  let client: Client | undefined;
  beforeEach(async () => {
    server = await TestingEmbeddedServer.start();
    proxies = await Promise.all([1, 2, 3].map(() => FaultProxy.start(server.connectString)));
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    await Promise.all(proxies.map((p) => p.close()));
    await server.close();
  });

  test('learns every member, follows a change, and moves off a member that left with the same session', async () => {
    server.server.setEnsembleConfig(proxies.map((p, i) => line(i + 1, p)));
    const seed = createClient({ connectString: server.connectString, ensembleTracker: false });
    await seed.start();
    await seed.create('/app');
    await seed.close();

    client = createClient({ connectString: proxies[0]!.address + '/app', sessionTimeoutMs: 10_000, random: () => 0.99 });
    const learned = nextEvent<HostsChange>(client, 'hostsChanged');
    await client.start();
    expect(await learned).toEqual({ previous: [proxies[0]!.address], hosts: expect.arrayContaining(proxies.map((p) => p.address)) });
    expect([...client.hosts].sort()).toEqual(proxies.map((p) => p.address).sort());
    expect(client.connectedServer).toBe(proxies[0]!.address);
    const sessionId = client.sessionId;

    // The config names members 2 and 3 only: the client leaves member 1, keeping its session.
    const states: ConnectionState[] = [];
    client.on('stateChanged', (s) => states.push(s));
    const shrunk = nextEvent<HostsChange>(client, 'hostsChanged');
    const reconnected = client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 10_000 });
    const version = server.server.setEnsembleConfig([line(2, proxies[1]!), line(3, proxies[2]!)]);
    expect((await shrunk).hosts.slice().sort()).toEqual([proxies[1]!.address, proxies[2]!.address].sort());
    await reconnected;
    // Re-attached on the new member before the old link closed: no SUSPENDED.
    expect(states).toEqual([ConnectionState.RECONNECTED]);
    expect(client.sessionId).toBe(sessionId);
    expect([proxies[1]!.address, proxies[2]!.address]).toContain(client.connectedServer);
    // The chroot is kept on the new member.
    await client.create('/n', 'v');
    const seen = createClient({ connectString: server.connectString, ensembleTracker: false });
    await seen.start();
    expect((await seen.getData('/app/n')).data.toString()).toBe('v');
    await seen.close();

    // getConfig reads the node outside the chroot; a watch fires once at the next change.
    const config = await client.getConfig();
    expect(config.version).toBe(version);
    expect(config.members.map((m) => m.id)).toEqual(['2', '3']);
    const fired = new Promise<WatchEvent>((resolve) => void client!.getConfig({ watch: resolve }));
    await client.sync('/');
    server.server.setEnsembleConfig(proxies.map((p, i) => line(i + 1, p)));
    expect(await fired).toMatchObject({ type: 'NodeDataChanged', path: '/zookeeper/config' });
  });

  test('ensembleTracker: false, a config without client addresses, and the in-process transport leave the hosts alone', async () => {
    server.server.setEnsembleConfig(proxies.map((p, i) => line(i + 1, p)));
    const off = createClient({ connectString: proxies[0]!.address, ensembleTracker: false });
    await off.start();
    await off.sync('/');
    expect(off.hosts).toEqual([proxies[0]!.address]);
    expect(server.server.watchCounts().get(off.sessionId) ?? 0).toBe(0);
    await off.close();

    const inProcess = createClient({ transport: server.transport() });
    await inProcess.start();
    await inProcess.sync('/');
    expect(inProcess.hosts).toEqual(server.transport().hosts);
    expect(() => inProcess.updateServerList('a:2181')).toThrow(IllegalStateError);
    await inProcess.close();

    server.server.setEnsembleConfig(['server.1=127.0.0.1:1:2', 'server.2=127.0.0.1:3:4']);
    client = createClient({ connectString: proxies[0]!.address });
    const changes: HostsChange[] = [];
    client.on('hostsChanged', (c) => changes.push(c));
    await client.start();
    expect((await client.getConfig()).members).toHaveLength(2);
    expect(client.hosts).toEqual([proxies[0]!.address]);
    expect(changes).toEqual([]);
    expect(server.server.watchCounts().get(client.sessionId) ?? 0).toBe(0);
  });

  test('updateServerList rebalances a live client and keeps its chroot', async () => {
    client = createClient({ connectString: proxies[0]!.address + '/', ensembleTracker: false, random: () => 0 });
    await client.start();
    const sessionId = client.sessionId;
    const changed = nextEvent<HostsChange>(client, 'hostsChanged');
    const reconnected = client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 10_000 });
    // 1 → 3 servers: with random 0 the client moves (probability 2/3 of moving, 0 ≤ 2/3).
    client.updateServerList(proxies.map((p) => p.address).join(',') + '/ignored');
    expect(await changed).toMatchObject({ previous: [proxies[0]!.address] });
    await reconnected;
    expect(client.sessionId).toBe(sessionId);
    expect([proxies[1]!.address, proxies[2]!.address]).toContain(client.connectedServer);
  });
});
