/**
 * TreeCache and NodeCache on a real ZooKeeper 3.8: a tree of ~1,000 nodes under concurrent writers
 * while the cache's client suffers real faults (TCP resets and a partition past the session timeout
 * through FaultProxy, closeSession from outside). Afterwards the cache equals the server's tree.
 * Once with the persistent recursive watch, once with one-shot watches. Close leaves no watch.
 *
 * Sizes: TENURE_CACHE_NODES (default 1000), TENURE_CACHE_CHANGES per writer (default 100).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionState, type Client } from '@tenure/client';
import { FaultProxy, TestingServer, expireSession, nextEvent, realZooKeeper } from '@tenure/testing';
import { NodeCache, TreeCache } from '../src/index.js';
import { connect, eventually, sleep, treeDiff } from './harness.js';

const zk = realZooKeeper();
const NODES = Number(process.env.TENURE_CACHE_NODES ?? 1000);
const CHANGES = Number(process.env.TENURE_CACHE_CHANGES ?? 100);

/** The server's subtree, read by `client`: path → data and mzxid. */
async function zkTree(client: Client, root: string): Promise<Map<string, { data: string; mzxid: bigint }>> {
  const out = new Map<string, { data: string; mzxid: bigint }>();
  let level = [root];
  while (level.length > 0) {
    const next: string[] = [];
    await Promise.all(
      level.map(async (path) => {
        try {
          const { data, stat } = await client.getData(path);
          out.set(path, { data: data.toString(), mzxid: stat.mzxid });
          const { children } = await client.getChildren(path);
          for (const c of children) next.push(`${path}/${c}`);
        } catch (err) {
          if (!(err instanceof Error) || err.name !== 'NoNodeError') throw err;
        }
      }),
    );
    level = next;
  }
  return out;
}

describe.skipIf(!zk.available)('TreeCache on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let admin: Client;
  const clients: Client[] = [];
  const proxies: FaultProxy[] = [];

  beforeAll(async () => {
    server = await TestingServer.start();
    admin = (await connect(server.connectString, { sessionTimeoutMs: 4000 })).client;
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    for (const p of proxies.splice(0)) await p.close();
  });
  afterAll(async () => {
    await admin?.close();
    await server?.close();
  });

  async function open(connectString: string, sessionTimeoutMs = 2000): Promise<Client> {
    const { client } = await connect(connectString, { sessionTimeoutMs, connectionTimeoutMs: 4000 });
    clients.push(client);
    return client;
  }

  const watchesOf = async (client: Client): Promise<number> =>
    (await server.dump()).sessions.find((s) => s.sessionId === client.sessionId)?.watches ?? 0;

  for (const persistentWatches of [true, false]) {
    it(`mirrors ~${NODES} nodes under concurrent changes and real faults (${persistentWatches ? 'persistent' : 'one-shot'} watches)`, async () => {
      const root = `/zsoak${persistentWatches ? 'p' : 'o'}`;
      const fan = Math.max(2, Math.round(Math.cbrt(NODES)));
      await admin.create(root, 'root');
      for (let i = 0; i < fan; i++) {
        await admin.create(`${root}/a${i}`, 'a');
        await Promise.all(Array.from({ length: fan }, (_, j) => admin.create(`${root}/a${i}/b${j}`, 'b')));
        const leaves: Promise<unknown>[] = [];
        for (let j = 0; j < fan; j++) for (let k = 0; k < fan - 1; k++) leaves.push(admin.create(`${root}/a${i}/b${j}/c${k}`, 'c'));
        await Promise.all(leaves);
      }
      const proxy = await FaultProxy.start(server.connectString);
      proxies.push(proxy);
      const client = await open(proxy.address, 1500);
      const cache = new TreeCache(client, root, { persistentWatches });
      await cache.start({ timeoutMs: 20_000 });
      expect(treeDiff(cache, await zkTree(admin, root))).toEqual([]);

      const writer = async (w: Client, id: number): Promise<void> => {
        for (let n = 0; n < CHANGES; n++) {
          const i = n % fan;
          const j = (n * 7 + id) % fan;
          const leaf = `${root}/a${i}/b${j}/c${(n * 3 + id) % (fan + 1)}`;
          try {
            if (n % 4 === 0) await w.setData(`${root}/a${i}`, `w${id}-${n}`);
            else if (n % 4 === 1) await w.create(leaf, `new ${id}-${n}`);
            else if (n % 4 === 2) await w.delete(leaf);
            else await w.setData(leaf, `leaf ${id}-${n}`);
          } catch (err) {
            if (!(err instanceof Error) || !/NoNode|NodeExists/.test(err.name)) throw err;
          }
        }
      };
      const faults = async (): Promise<void> => {
        await sleep(100);
        proxy.reset(); // a TCP reset: same session, events may be missed (persistent) or caught up (one-shot)
        await client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
        await sleep(100);
        proxy.blackhole(); // past the session timeout: LOST, a new session, a full re-sync
        await client.waitForState(ConnectionState.LOST, { timeoutMs: 5000 });
        proxy.heal();
        await client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 8000 });
        await sleep(100);
        await expireSession(client, server);
        await client.waitForState(ConnectionState.LOST, { timeoutMs: 5000 });
      };
      const writers = [await open(server.connectString), await open(server.connectString)];
      await Promise.all([...writers.map((w, id) => writer(w, id)), faults()]);
      await client.waitForState(ConnectionState.CONNECTED, { timeoutMs: 8000 });

      let diff: string[] = [];
      await eventually(
        async () => (diff = treeDiff(cache, await zkTree(admin, root))).length === 0,
        15_000,
        'the cache to equal the server',
      ).catch((err: Error) => {
        throw new Error(`${err.message}: ${diff.length} differences, e.g. ${diff.slice(0, 5).join(', ')}`);
      });
      expect(await watchesOf(client)).toBeGreaterThan(0);
      await cache.close();
      expect(await watchesOf(client)).toBe(0);
      await admin.delete(root, { deletingChildren: true });
    }, 60_000);
  }

  it('NodeCache follows a node (both watch kinds) and leaves no watch', async () => {
    const client = await open(server.connectString);
    for (const persistentWatches of [true, false]) {
      const path = `/znode-${persistentWatches}`;
      const cache = new NodeCache(client, path, { persistentWatches });
      await cache.start({ timeoutMs: 5000 });
      const created = nextEvent(cache, 'created');
      await admin.create(path, 'a');
      await created;
      expect(cache.current?.data.toString()).toBe('a');
      const changed = nextEvent(cache, 'changed');
      await admin.setData(path, 'b');
      await changed;
      expect(cache.current?.data.toString()).toBe('b');
      const deleted = nextEvent(cache, 'deleted');
      await admin.delete(path);
      await deleted;
      expect(cache.current).toBeUndefined();
      await cache.close();
    }
    expect(await watchesOf(client)).toBe(0);
  });
});
