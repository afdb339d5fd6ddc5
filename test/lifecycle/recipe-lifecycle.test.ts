/**
 * One lifecycle for every recipe (the kit's RecipeLifecycle): 'latent' → start() → 'started' →
 * close() → 'closed'; a second start() and a start() after close() reject with IllegalStateError;
 * close() is idempotent; `await using` closes; and after close the recipe has left no watch, no
 * timer and no ephemeral node behind (the embedded server's introspection and a counting clock).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { IllegalStateError, type Client, type RecipeHandle } from '@tenure/client';
import { PersistentNode, PersistentTtlNode } from '@tenure/nodes';
import { NodeCache, TreeCache } from '@tenure/cache';
import { GroupMember, SetPartitioner } from '@tenure/group';
import { LeaderLatch, LeaderObserver, LeaderSelector } from '@tenure/leader';
import { DistributedDelayQueue, DistributedIdQueue, DistributedPriorityQueue, DistributedQueue } from '@tenure/queues';
import { JsonInstanceSerializer, ServiceCache, ServiceDiscovery, ServiceProvider } from '@tenure/discovery';
import { SharedCount, SharedValue } from '@tenure/counters';
import { model, type ModelSchema } from '@tenure/models';
import { TestClients, eventually, startTestServer } from '@tenure/testing';
import type { EmbeddedServer } from '@tenure/server';
import { countingClock } from '../../packages/client/test/harness.js';

interface Recipe {
  name: string;
  make(client: Client): RecipeHandle;
  /** Once started: wait until it holds what it holds (a node, a watch), so close has something to release. */
  ready?(recipe: RecipeHandle, server: EmbeddedServer): Promise<void>;
}

const serializer = new JsonInstanceSerializer();
/** A Standard Schema by hand (no schema library needed here): any object. */
const anyObject: ModelSchema<object> = {
  '~standard': {
    version: 1,
    vendor: 'lifecycle-test',
    validate: (v) => (typeof v === 'object' && v !== null ? { value: v } : { issues: [{ message: 'not an object' }] }),
  },
};
const holdUntilAborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

const recipes: Recipe[] = [
  {
    name: 'PersistentNode',
    make: (c) => new PersistentNode(c, { path: '/lc/pn/node' }),
    ready: (r) => (r as PersistentNode).waitForInitialCreate({ timeoutMs: 5000 }),
  },
  {
    name: 'PersistentTtlNode',
    make: (c) => new PersistentTtlNode(c, { path: '/lc/ttl/node', ttlMs: 5000 }),
    ready: (r) => (r as PersistentTtlNode).waitForInitialCreate({ timeoutMs: 5000 }),
  },
  {
    name: 'GroupMember',
    make: (c) => new GroupMember(c, '/lc/group', 'member-1', 'payload'),
    ready: (r) => (r as GroupMember).waitForJoined({ timeoutMs: 5000 }),
  },
  {
    name: 'SetPartitioner',
    make: (c) => new SetPartitioner(c, '/lc/partitioner', ['a', 'b'], { identifier: 'm', timeBoundaryMs: 10 }),
    ready: async (r) => void (await (r as SetPartitioner).waitForAcquire({ timeoutMs: 5000 })),
  },
  { name: 'TreeCache', make: (c) => new TreeCache(c, '/lc/tree') },
  { name: 'NodeCache', make: (c) => new NodeCache(c, '/lc/node-cache') },
  { name: 'LeaderLatch', make: (c) => new LeaderLatch(c, '/lc/latch', { id: 'a' }) },
  { name: 'LeaderObserver', make: (c) => new LeaderObserver(c, '/lc/latch') },
  { name: 'CachedModel', make: (c) => model(c, '/lc/models/{id}', { schema: anyObject }).cached() },
  {
    name: 'LeaderSelector',
    make: (c) => new LeaderSelector(c, '/lc/selector', { id: 'a', takeLeadership: holdUntilAborted }),
    ready: async (r) => void (await eventually(() => (r as LeaderSelector).hasLeadership(), 5000, 'the selector leads')),
  },
  {
    name: 'DistributedQueue',
    make: (c) => new DistributedQueue(c, '/lc/queue', { consumer: async () => {}, lockPath: '/lc/queue-locks' }),
  },
  { name: 'DistributedPriorityQueue', make: (c) => new DistributedPriorityQueue(c, '/lc/priority', { consumer: async () => {} }) },
  { name: 'DistributedDelayQueue', make: (c) => new DistributedDelayQueue(c, '/lc/delay', { consumer: async () => {} }) },
  { name: 'DistributedIdQueue', make: (c) => new DistributedIdQueue(c, '/lc/id', { consumer: async () => {} }) },
  {
    name: 'ServiceDiscovery',
    make: (c) => new ServiceDiscovery(c, { basePath: '/lc/services', thisInstance: { name: 'api', id: 'one', port: 8080 } }),
  },
  { name: 'ServiceCache', make: (c) => new ServiceCache(c, 'api', '/lc/services/api', { serializer }) },
  {
    name: 'ServiceProvider',
    make: (c) => new ServiceProvider(new ServiceCache(c, 'api', '/lc/services/api', { serializer }), c.clock),
  },
  { name: 'SharedCount', make: (c) => new SharedCount(c, '/lc/count', 7) },
  { name: 'SharedValue', make: (c) => new SharedValue(c, '/lc/value', Buffer.from('v')) },
];

let server: EmbeddedServer;
let clients: TestClients;
afterEach(async () => {
  await clients?.closeAll();
  await server?.close();
});

async function open(): Promise<{ client: Client; clock: ReturnType<typeof countingClock> }> {
  server = startTestServer();
  clients = new TestClients(() => server.transport());
  const clock = countingClock();
  const client = await clients.open({ clock });
  return { client, clock };
}

/** Watches plus ephemerals the server holds for the client's session. */
function held(client: Client): number {
  const ephemerals = server.sessions().find((s) => s.sessionId === client.sessionId)?.ephemerals.length ?? 0;
  return (server.watchCounts().get(client.sessionId) ?? 0) + ephemerals;
}

/** What the recipe leaves on the server and on the clock once closed: nothing. */
async function expectNothingLeft(client: Client, clock: ReturnType<typeof countingClock>, timersBefore: number): Promise<void> {
  expect(server.watchCounts().get(client.sessionId) ?? 0).toBe(0);
  expect(server.sessions().find((s) => s.sessionId === client.sessionId)?.ephemerals ?? []).toEqual([]);
  // The client's own timers (pings, the session's) come and go; the recipe's must all be gone.
  await eventually(() => clock.live() <= timersBefore, 3000, 'no timer left by the recipe');
}

describe.each(recipes)('$name follows the recipe lifecycle', (recipe) => {
  it("'latent' → start() → 'started' → close() → 'closed'; misuse rejects with IllegalStateError; close twice resolves", async () => {
    const { client, clock } = await open();
    const timersBefore = clock.live();
    const r = recipe.make(client);
    expect(r.state).toBe('latent');
    await r.start();
    expect(r.state).toBe('started');
    await recipe.ready?.(r, server);
    const again = r.start();
    await expect(again).rejects.toBeInstanceOf(IllegalStateError);
    await expect(again).rejects.toMatchObject({ code: 'ILLEGAL_STATE' });
    expect(r.state).toBe('started');
    // It holds something on the server (a watch, an ephemeral), which close() must give back.
    await eventually(() => held(client) > 0, 5000, 'the recipe holds a watch or a node');
    await r.close();
    expect(r.state).toBe('closed');
    await expect(r.close()).resolves.toBeUndefined();
    const late = r.start();
    await expect(late).rejects.toBeInstanceOf(IllegalStateError);
    await expect(late).rejects.toMatchObject({ code: 'ILLEGAL_STATE' });
    expect(r.state).toBe('closed');
    await expectNothingLeft(client, clock, timersBefore);
  });

  it('`await using` closes it, leaving no watch, timer or node behind', async () => {
    const { client, clock } = await open();
    const timersBefore = clock.live();
    let kept: RecipeHandle;
    {
      await using r = recipe.make(client);
      kept = r;
      await r.start();
      await recipe.ready?.(r, server);
    }
    expect(kept.state).toBe('closed');
    await expectNothingLeft(client, clock, timersBefore);
  });

  it('close() before start() closes it for good', async () => {
    const { client } = await open();
    const r = recipe.make(client);
    await r.close();
    expect(r.state).toBe('closed');
    await expect(r.start()).rejects.toBeInstanceOf(IllegalStateError);
  });
});
