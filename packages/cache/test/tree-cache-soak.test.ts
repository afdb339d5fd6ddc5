/**
 * TreeCache soak on the embedded server: a tree of ~1,000 nodes under concurrent writers while the
 * cache's client suffers random faults (dropped connections, partitions past the session timeout,
 * session expiry, server restarts). Afterwards the cache must equal the server's tree, node for
 * node (data and mzxid). Run once with persistent watches and once with the one-shot fallback.
 *
 * Sizes: TENURE_CACHE_NODES (default 1000), TENURE_CACHE_CHANGES per writer (default 150),
 * TENURE_CACHE_FAULTS (default 4), TENURE_CACHE_SEED.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { ConnectionState, type Client } from '@tenure/client';
import { TreeCache } from '../src/index.js';
import { nextEvent, seededRandom } from '@tenure/testing';
import { connect, eventually, serverTree, sleep, startServer, treeDiff } from './harness.js';

const NODES = Number(process.env.TENURE_CACHE_NODES ?? 1000);
const CHANGES = Number(process.env.TENURE_CACHE_CHANGES ?? 150);
const FAULTS = Number(process.env.TENURE_CACHE_FAULTS ?? 4);
const SEED = Number(process.env.TENURE_CACHE_SEED ?? Date.now() % 100_000);

/** Layout: /soak/a{i}/b{j}/c{k} with fan-outs chosen so the tree has about NODES nodes. */
function layout(total: number): { fan: number; paths: string[] } {
  const fan = Math.max(2, Math.round(Math.cbrt(total)));
  const paths = ['/soak'];
  for (let i = 0; i < fan; i++) {
    paths.push(`/soak/a${i}`);
    for (let j = 0; j < fan; j++) {
      paths.push(`/soak/a${i}/b${j}`);
      for (let k = 0; k < fan - 1; k++) paths.push(`/soak/a${i}/b${j}/c${k}`);
    }
  }
  return { fan, paths };
}

let server: EmbeddedServer;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

describe.each([
  { name: 'persistent watches', persistentWatches: true },
  { name: 'one-shot watches', persistentWatches: false },
])(`TreeCache soak (seed ${SEED}) with $name`, ({ persistentWatches }) => {
  it(`mirrors a tree of ~${NODES} nodes under concurrent changes and random faults`, async () => {
    const random = seededRandom(SEED + (persistentWatches ? 0 : 1));
    server = startServer();
    const open = async (opts: Parameters<typeof connect>[1] = {}) => {
      const c = (await connect(server, { sessionTimeoutMs: 4000, ...opts })).client;
      clients.push(c);
      return c;
    };
    const setup = await open();
    const { fan, paths } = layout(NODES);
    for (let depth = 1; depth <= 4; depth++) {
      const level = paths.filter((p) => p.split('/').length - 1 === depth);
      await Promise.all(level.map((p) => setup.create(p, `init ${p}`)));
    }

    const client = await open({ sessionTimeoutMs: 1000 });
    const cache = new TreeCache(client, '/soak', { persistentWatches });
    await cache.start({ timeoutMs: 10_000 });
    expect(cache.size).toBe(paths.length);
    expect(treeDiff(cache, serverTree(server, '/soak'))).toEqual([]);

    // Writers: random creates, deletes, data changes and whole-subtree churn.
    const pick = (n: number) => Math.floor(random() * n);
    const writer = async (w: Client, id: number): Promise<void> => {
      for (let n = 0; n < CHANGES; n++) {
        const i = pick(fan);
        const j = pick(fan);
        const leaf = `/soak/a${i}/b${j}/c${pick(fan + 2)}`;
        const r = random();
        try {
          if (r < 0.35) await w.setData(paths[pick(paths.length)]!, `w${id}-${n}`);
          else if (r < 0.6) await w.create(leaf, `new ${id}-${n}`);
          else if (r < 0.85) await w.delete(leaf);
          else if (r < 0.95) await w.setData(leaf, `leaf ${id}-${n}`);
          else {
            await w.delete(`/soak/a${i}/b${j}`, { deletingChildren: true });
            await w.create(`/soak/a${i}/b${j}`, `again ${id}-${n}`);
          }
        } catch (err) {
          if (!(err instanceof Error) || !/NoNode|NodeExists|NotEmpty/.test(err.name)) throw err;
        }
        if (n % 10 === 0) await sleep(pick(15));
      }
    };

    // Faults on the cache's client while the writers run.
    const faults = async (): Promise<string[]> => {
      const done: string[] = [];
      for (let f = 0; f < FAULTS; f++) {
        await sleep(100 + pick(300));
        await client.waitForState(ConnectionState.CONNECTED, { timeoutMs: 10_000 });
        const kind = ['drop', 'partition', 'expire', 'restart'][f % 4]!;
        done.push(kind);
        if (kind === 'drop') server.dropConnection(client.sessionId);
        else if (kind === 'partition') {
          // Longer than the session timeout: LOST, a new session, a full re-sync.
          server.silence(client.sessionId, client.negotiatedTimeoutMs + 300);
          server.dropConnection(client.sessionId);
          await client.waitForState(ConnectionState.LOST, { timeoutMs: 5000 });
        } else if (kind === 'expire') server.expireSession(client.sessionId);
        else await server.restart(150);
      }
      return done;
    };

    const writers = await Promise.all([open(), open(), open()]);
    const [, done] = await Promise.all([Promise.all(writers.map((w, id) => writer(w, id))), faults()]);
    expect(done).toHaveLength(FAULTS);
    await client.waitForState(ConnectionState.CONNECTED, { timeoutMs: 10_000 });

    let diff: string[] = [];
    await eventually(
      () => (diff = treeDiff(cache, serverTree(server, '/soak'))).length === 0,
      15_000,
      `the cache to equal the server's tree`,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; ${diff.length} differences, e.g. ${diff.slice(0, 5).join(', ')}`);
    });
    // And it goes on following.
    const final = nextEvent<{ path: string; data: Buffer }>(
      cache,
      'changed',
      (n) => n.path === '/soak/a0' && n.data.toString() === 'final',
      {
        timeoutMs: 3000,
      },
    );
    await setup.setData('/soak/a0', 'final');
    await final;
    expect(cache.get('/soak/a0')?.data.toString()).toBe('final');
    await cache.close();
    expect(server.watchCounts().get(client.sessionId) ?? 0).toBe(0);
  }, 90_000);
});
