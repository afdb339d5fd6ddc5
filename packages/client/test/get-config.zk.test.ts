/**
 * getConfig and reconfig on servers without a dynamic ensemble: real ZooKeeper 3.8 standalone,
 * the embedded server (which answers as that standalone does), and a static 3-node ensemble.
 * Ensemble tracking leaves their hosts alone and sets no watch on any of them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TestingCluster, TestingEmbeddedServer, TestingServer, realZooKeeper } from '@tenure/testing';
import { ReconfigDisabledError, UnimplementedError, clientHostsOf, createClient, type Client } from '../src/index.js';

const zk = realZooKeeper();

async function connected(connectString: string): Promise<Client> {
  const client = createClient({ connectString, sessionTimeoutMs: 4000 });
  await client.start();
  return client;
}

/** Every watch the server holds, by its `wchc`-backed dump. */
type Dumpable = { dump(): Promise<{ totalWatches: number }> };

async function standaloneBehaviour(server: { connectString: string } & Dumpable): Promise<unknown> {
  const client = await connected(server.connectString);
  try {
    const hostsChanged: unknown[] = [];
    client.on('hostsChanged', (c) => hostsChanged.push(c));
    const config = await client.getConfig();
    let reconfigError: unknown;
    await client.reconfig({ leaving: ['1'] }).catch((e: unknown) => (reconfigError = e));
    // Tracking read the config after connecting: by now it has, and set no watch.
    await client.sync('/');
    const watches = (await server.dump()).totalWatches;
    return {
      config,
      error: (reconfigError as { code?: string }).code,
      errorClass: (reconfigError as Error).constructor.name,
      hosts: client.hosts,
      hostsChanged,
      watches,
    };
  } finally {
    await client.close();
  }
}

describe.skipIf(!zk.available)('getConfig without a dynamic ensemble', () => {
  let real: TestingServer;
  let embedded: TestingEmbeddedServer;
  beforeAll(async () => {
    [real, embedded] = await Promise.all([TestingServer.start(), TestingEmbeddedServer.start()]);
  });
  afterAll(async () => {
    await Promise.all([real?.close(), embedded?.close()]);
  });

  test('a standalone ZooKeeper 3.8 has an empty config and refuses reconfig with ReconfigDisabled; the embedded server answers the same', async () => {
    const fromReal = await standaloneBehaviour(real);
    expect(fromReal).toEqual({
      config: { members: [], version: '', raw: '' },
      error: 'RECONFIGDISABLED',
      errorClass: ReconfigDisabledError.name,
      hosts: [real.connectString],
      hostsChanged: [],
      watches: 0,
    });
    const fromEmbedded = await standaloneBehaviour(embedded);
    expect(fromEmbedded).toEqual({ ...(fromReal as object), hosts: [embedded.connectString] });
  });

  test('a standalone with reconfigEnabled=true refuses reconfig as Unimplemented', async () => {
    const server = await TestingServer.start({ config: { reconfigEnabled: true } });
    try {
      const client = await connected(server.connectString);
      await expect(client.reconfig({ leaving: ['1'] })).rejects.toBeInstanceOf(UnimplementedError);
      await client.close();
    } finally {
      await server.close();
    }
  });

  test('a static ensemble (reconfigEnabled=false) names no client address: hosts stay, no watch', async () => {
    const cluster = await TestingCluster.start();
    try {
      const client = await connected(cluster.address(0));
      const config = await client.getConfig();
      expect(config.members.map((m) => m.id)).toEqual(['1', '2', '3']);
      expect(clientHostsOf(config)).toEqual([]);
      await client.sync('/');
      expect(client.hosts).toEqual([cluster.address(0)]);
      const on = cluster.serverOf(client);
      expect((await cluster.dump(on)).sessions.find((s) => s.sessionId === client.sessionId)?.watches ?? 0).toBe(0);
      await client.close();
    } finally {
      await cluster.close();
    }
  });
});
