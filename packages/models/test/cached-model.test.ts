/**
 * CachedModel: every instance of a template in memory (a TreeCache underneath), typed reads, an
 * iterable of typed changes, nodes failing the schema held as invalid, multi-parameter templates,
 * async schemas kept in the cache's order, and the client's close.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as v from 'valibot';
import { ClosedError, NoNodeError, type Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { TestClients, nextEvent, startTestServer } from '@tenure/testing';
import { ModelValidationError, model, type ModelChange, type StandardSchemaV1 } from '@tenure/models';

const User = v.object({ name: v.string(), age: v.number() });
type User = v.InferOutput<typeof User>;

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

/** Reads `n` changes from an iterator. */
async function take<T>(it: AsyncIterator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

describe('CachedModel', () => {
  it('start() loads every instance; get() and list() are typed reads from memory; writes go through the model', async () => {
    const users = model(writer, '/users/{id}', { schema: User });
    await users.at({ id: 'alice' }).set({ name: 'Alice', age: 31 });
    await users.at({ id: 'bob' }).set({ name: 'Bob', age: 40 });
    await using cached = model(client, '/users/{id}', { schema: User }).cached();
    await cached.start();
    expect(cached.cache.path).toBe('/users');
    expect(cached.get({ id: 'alice' })?.value).toEqual({ name: 'Alice', age: 31 });
    expect(cached.get({ id: 'carol' })).toBeUndefined();
    expect(cached.list().map((i) => [i.params.id, i.value.age])).toEqual([
      ['alice', 31],
      ['bob', 40],
    ]);
    expect(cached.size).toBe(2);
    // readThrough: the cache when it has the node, else the server (Curator's readThrough()).
    expect((await cached.readThrough({ id: 'bob' })).value.age).toBe(40);
    await expect(cached.readThrough({ id: 'nobody' })).rejects.toBeInstanceOf(NoNodeError);
  });

  it('changes() yields typed created / changed / deleted items, in order', async () => {
    await using cached = model(client, '/users/{id}', { schema: User }).cached();
    await cached.start();
    const changes = cached.changes();
    const users = model(writer, '/users/{id}', { schema: User });
    await users.at({ id: 'alice' }).set({ name: 'Alice', age: 31 });
    await users.at({ id: 'alice' }).update((u) => ({ ...u, age: u.age + 1 }));
    await users.at({ id: 'alice' }).delete();
    const got = await take(changes, 3);
    expect(got).toMatchObject([
      { type: 'created', path: '/users/alice', params: { id: 'alice' }, value: { name: 'Alice', age: 31 } },
      { type: 'changed', params: { id: 'alice' }, value: { age: 32 }, previous: { age: 31 } },
      { type: 'deleted', params: { id: 'alice' }, previous: { age: 32 } },
    ]);
    expect(cached.get({ id: 'alice' })).toBeUndefined();
  });

  it('a node that fails the schema is held as invalid: get() throws its ModelValidationError, changes() and error say so; list() leaves it out', async () => {
    await using cached = model(client, '/users/{id}', { schema: User }).cached();
    await cached.start();
    const changes = cached.changes();
    const error = nextEvent<Error>(cached, 'error');
    await writer.create('/users/mallory', '{"name":"M","age":"old"}', { createParents: true });
    const [change] = await take(changes, 1);
    expect(change).toMatchObject({ type: 'invalid', path: '/users/mallory', params: { id: 'mallory' } });
    expect((change as Extract<ModelChange<string, User>, { type: 'invalid' }>).error).toBeInstanceOf(ModelValidationError);
    expect(await error).toMatchObject({ code: 'MODEL_VALIDATION', path: '/users/mallory' });
    expect(() => cached.get({ id: 'mallory' })).toThrow(ModelValidationError);
    expect(cached.list()).toEqual([]);
    // Fixed by a valid write: a change.
    await writer.setData('/users/mallory', '{"name":"M","age":7}');
    expect(await take(changes, 1)).toMatchObject([{ type: 'changed', value: { name: 'M', age: 7 }, previous: undefined }]);
  });

  it('a template with two parameters caches from its fixed prefix; nodes off the template and empty parents are skipped', async () => {
    const Member = z.object({ role: z.enum(['owner', 'member']) });
    const members = model(writer, '/orgs/{org}/members/{user}', { schema: Member });
    await members.at({ org: 'acme', user: 'ann' }).set({ role: 'owner' });
    await members.at({ org: 'acme', user: 'ben' }).set({ role: 'member' });
    await members.at({ org: 'zeta', user: 'ann' }).set({ role: 'member' });
    await writer.create('/orgs/acme/settings', '{"theme":"dark"}'); // not an instance of the template
    await using cached = model(client, '/orgs/{org}/members/{user}', { schema: Member }).cached();
    await cached.start();
    expect(cached.cache.path).toBe('/orgs');
    expect(cached.list().map((i) => `${i.params.org}/${i.params.user}:${i.value.role}`)).toEqual([
      'acme/ann:owner',
      'acme/ben:member',
      'zeta/ann:member',
    ]);
    expect(cached.get({ org: 'zeta', user: 'ann' })?.value.role).toBe('member');
  });

  it('an async schema keeps the changes in the cache order', async () => {
    let delay = 20;
    const Slow: StandardSchemaV1<unknown, { n: number }> = {
      '~standard': {
        version: 1,
        vendor: 'test',
        // Each validation is quicker than the one before: done in order only if the cache waits.
        validate: (value) =>
          new Promise((resolve) => setTimeout(() => resolve({ value: value as { n: number } }), (delay = Math.max(0, delay - 5)))),
      },
    };
    await using cached = model(client, '/slow/{id}', { schema: Slow }).cached();
    await cached.start();
    const changes = cached.changes();
    const cacheOrder: string[] = [];
    cached.cache.on('created', (node) => void (node.path !== '/slow' && cacheOrder.push(node.path)));
    const slow = model(writer, '/slow/{id}', { schema: Slow });
    await Promise.all(['a', 'b', 'c', 'd'].map((id, i) => slow.at({ id }).set({ n: i })));
    const got = await take(changes, 4);
    expect(got.map((c) => (c as { path: string }).path)).toEqual(cacheOrder);
    expect(cacheOrder).toHaveLength(4);
  });

  it("the client's close ends the changes with ClosedError", async () => {
    const other = await clients.open();
    const cached = model(other, '/users/{id}', { schema: User }).cached();
    await cached.start();
    const pending = cached.changes().next();
    await other.close();
    await expect(pending).rejects.toBeInstanceOf(ClosedError);
    await cached.close();
    expect(cached.state).toBe('closed');
  });
});

describe('CachedModel and empty nodes', () => {
  it('an empty node is skipped (Curator: a parent on its way); a model node emptied by someone is invalid, not stale', async () => {
    await using cached = model(client, '/users/{id}', { schema: User }).cached();
    await cached.start();
    const changes = cached.changes();
    await writer.create('/users/empty', null, { createParents: true });
    await model(writer, '/users/{id}', { schema: User }).at({ id: 'zoe' }).set({ name: 'Zoe', age: 5 });
    expect(await take(changes, 1)).toMatchObject([{ type: 'created', path: '/users/zoe' }]);
    expect(cached.get({ id: 'empty' })).toBeUndefined();
    await writer.setData('/users/zoe', null);
    expect(await take(changes, 1)).toMatchObject([{ type: 'invalid', path: '/users/zoe' }]);
    expect(() => cached.get({ id: 'zoe' })).toThrow(ModelValidationError);
  });
});
