/**
 * node.watch(): typed values as they change, no duplicate for a reconnect or a LOST session, the
 * end on close / break / signal / the client's close (ClosedError), a node failing its schema
 * (ModelValidationError), and no watch left on the server afterwards.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ClosedError, ConnectionState, type Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { TestClients, eventually, nextEvent, startTestServer } from '@tenure/testing';
import { ModelValidationError, model, type ModelSnapshot } from '@tenure/models';

const Config = z.object({ level: z.enum(['debug', 'info', 'warn']), limit: z.number().int() });
type Config = z.infer<typeof Config>;

let server: EmbeddedServer;
let clients: TestClients;
let client: Client;
let writer: Client;

beforeEach(async () => {
  server = startTestServer();
  clients = new TestClients(() => server.transport());
  [client, writer] = await clients.openMany(2);
});
afterEach(async () => {
  await clients.closeAll();
  await server.close();
});

const watchesOf = (c: Client): number => server.watchCounts().get(c.sessionId) ?? 0;
const node = (c: Client) => model(c, '/config/{service}', { schema: Config }).at({ service: 'api' });
const values = (items: (ModelSnapshot<Config> | undefined)[]) => items.map((i) => i?.value ?? null);

describe('watch()', () => {
  it('yields the value now, then each change, undefined while the node is gone; close() leaves no watch', async () => {
    await node(writer).set({ level: 'info', limit: 1 });
    const watch = node(client).watch();
    const seen: (ModelSnapshot<Config> | undefined)[] = [];
    const next = async () => {
      const r = await watch.next();
      seen.push(r.value as ModelSnapshot<Config> | undefined);
      return r;
    };
    await next();
    await node(writer).set({ level: 'warn', limit: 2 });
    await next();
    await node(writer).delete();
    await next();
    await node(writer).set({ level: 'debug', limit: 3 });
    await next();
    expect(values(seen)).toEqual([{ level: 'info', limit: 1 }, { level: 'warn', limit: 2 }, null, { level: 'debug', limit: 3 }]);
    expect(seen[3]!.stat.version).toBe(0);
    expect(watchesOf(client)).toBeGreaterThan(0);
    await watch.close();
    expect(await watch.next()).toEqual({ done: true, value: undefined });
    expect(watchesOf(client)).toBe(0);
    expect(watch.trackedWatchCount).toBe(0);
  });

  it('a missing node first yields undefined, then its value once created; leaving the loop removes the watch', async () => {
    const got: (Config | null)[] = [];
    const loop = (async () => {
      for await (const item of node(client).watch()) {
        got.push(item?.value ?? null);
        if (got.length === 1) await node(writer).set({ level: 'info', limit: 9 });
        if (got.length === 2) break;
      }
    })();
    await loop;
    expect(got).toEqual([null, { level: 'info', limit: 9 }]);
    await eventually(() => watchesOf(client) === 0, 3000, 'no watch left after break');
  });

  it('a reconnect (dropped connection) and a LOST session re-read, and yield nothing when nothing changed', async () => {
    await node(writer).set({ level: 'info', limit: 1 });
    const watch = node(client).watch();
    expect((await watch.next()).value).toMatchObject({ value: { level: 'info', limit: 1 } });
    const reconnected = nextEvent(client, 'stateChanged', (s) => s === ConnectionState.RECONNECTED);
    server.dropConnection(client.sessionId);
    await reconnected;
    const lostThenBack = nextEvent(client, 'stateChanged', (s) => s === ConnectionState.RECONNECTED, { timeoutMs: 10_000 });
    server.expireSession(client.sessionId);
    await lostThenBack;
    // Changed while we were away: exactly one new item, the change.
    await node(writer).set({ level: 'warn', limit: 2 });
    expect((await watch.next()).value).toMatchObject({ value: { level: 'warn', limit: 2 } });
    await node(writer).set({ level: 'debug', limit: 3 });
    expect((await watch.next()).value).toMatchObject({ value: { level: 'debug', limit: 3 } });
    await watch.close();
    expect(watchesOf(client)).toBe(0);
  });

  it('a value another client writes that fails the schema ends the iteration with ModelValidationError (the path), leaving no watch', async () => {
    await node(writer).set({ level: 'info', limit: 1 });
    const watch = node(client).watch();
    await watch.next();
    await writer.setData('/config/api', JSON.stringify({ level: 'loud', limit: 1 }));
    const err = await watch.next().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelValidationError);
    expect(err).toMatchObject({ code: 'MODEL_VALIDATION', operation: 'read', path: '/config/api' });
    expect(await watch.next()).toEqual({ done: true, value: undefined });
    await eventually(() => watchesOf(client) === 0, 3000, 'no watch left after the error');
  });

  it("an aborted signal ends it; the client's close ends it with ClosedError", async () => {
    await node(writer).set({ level: 'info', limit: 1 });
    const ac = new AbortController();
    const aborted = node(client).watch({ signal: ac.signal });
    await aborted.next();
    ac.abort();
    expect(await aborted.next()).toEqual({ done: true, value: undefined });
    await eventually(() => watchesOf(client) === 0, 3000, 'no watch left after abort');

    // A signal aborted before the watch starts: it ends at once and sets nothing.
    const gone = node(client).watch({ signal: AbortSignal.abort() });
    expect(await gone.next()).toEqual({ done: true, value: undefined });
    expect(gone.trackedWatchCount).toBe(0);

    const other = await clients.open();
    const watch = node(other).watch();
    await watch.next();
    const pending = watch.next();
    await other.close();
    await expect(pending).rejects.toBeInstanceOf(ClosedError);
    expect(await watch.next()).toEqual({ done: true, value: undefined });
    // A watch on a closed client ends at once, the same way.
    await expect(node(other).watch().next()).rejects.toBeInstanceOf(ClosedError);
  });
});
