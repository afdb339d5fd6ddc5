/**
 * CachedModel follows the recipe lifecycle (test/lifecycle/recipe-lifecycle.test.ts's checks):
 * 'latent' → start() → 'started' → close() → 'closed'; a second start() and a start() after
 * close() reject with IllegalStateError; close() is idempotent; `await using` closes; and after
 * close it has left no watch, no timer and no node behind. A watch() leaves none either.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { IllegalStateError, type Client, type RecipeHandle } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { TestClients, eventually, startTestServer } from '@tenure/testing';
import { model } from '@tenure/models';
import { countingClock } from '../../client/test/harness.js';

const Item = z.object({ n: z.number() });

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
  await model(client, '/lc/items/{id}', { schema: Item }).at({ id: 'one' }).set({ n: 1 });
  return { client, clock };
}

const make = (c: Client): RecipeHandle => model(c, '/lc/items/{id}', { schema: Item }).cached();
const watches = (client: Client): number => server.watchCounts().get(client.sessionId) ?? 0;

async function expectNothingLeft(client: Client, clock: ReturnType<typeof countingClock>, timersBefore: number): Promise<void> {
  expect(watches(client)).toBe(0);
  expect(server.sessions().find((s) => s.sessionId === client.sessionId)?.ephemerals ?? []).toEqual([]);
  await eventually(() => clock.live() <= timersBefore, 3000, 'no timer left by the recipe');
}

describe('CachedModel follows the recipe lifecycle', () => {
  it("'latent' → start() → 'started' → close() → 'closed'; misuse rejects with IllegalStateError; close twice resolves", async () => {
    const { client, clock } = await open();
    const timersBefore = clock.live();
    const r = make(client);
    expect(r.state).toBe('latent');
    await r.start();
    expect(r.state).toBe('started');
    const again = r.start();
    await expect(again).rejects.toBeInstanceOf(IllegalStateError);
    await expect(again).rejects.toMatchObject({ code: 'ILLEGAL_STATE' });
    expect(r.state).toBe('started');
    await eventually(() => watches(client) > 0, 5000, 'the cache holds a watch');
    await r.close();
    expect(r.state).toBe('closed');
    await expect(r.close()).resolves.toBeUndefined();
    const late = r.start();
    await expect(late).rejects.toBeInstanceOf(IllegalStateError);
    expect(r.state).toBe('closed');
    await expectNothingLeft(client, clock, timersBefore);
    expect(server.node('/lc/items/one')).toBeDefined(); // a cache creates and deletes nothing
  });

  it('`await using` closes it, leaving no watch, timer or node behind', async () => {
    const { client, clock } = await open();
    const timersBefore = clock.live();
    let kept: RecipeHandle;
    {
      await using r = make(client);
      kept = r;
      await r.start();
    }
    expect(kept.state).toBe('closed');
    await expectNothingLeft(client, clock, timersBefore);
  });

  it('close() before start() closes it for good', async () => {
    const { client } = await open();
    const r = make(client);
    await r.close();
    expect(r.state).toBe('closed');
    await expect(r.start()).rejects.toBeInstanceOf(IllegalStateError);
  });

  it('close() ends the changes iterators', async () => {
    const { client } = await open();
    const cached = model(client, '/lc/items/{id}', { schema: Item }).cached();
    await cached.start();
    const changes = cached.changes();
    const pending = changes.next();
    await cached.close();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it('a watch() leaves no watch or timer once closed, and `await using` closes it', async () => {
    const { client, clock } = await open();
    const timersBefore = clock.live();
    {
      await using w = model(client, '/lc/items/{id}', { schema: Item }).at({ id: 'one' }).watch();
      expect((await w.next()).value).toMatchObject({ value: { n: 1 } });
      expect(watches(client)).toBeGreaterThan(0);
    }
    await expectNothingLeft(client, clock, timersBefore);
  });
});
