/**
 * @tenure/models on the embedded server: zod and valibot schemas, refusals before any write (the
 * server's zxid does not move), nodes written by others that fail the schema, async schemas, path
 * parameters, Curator's set/delete semantics, and update() under four contending clients.
 */
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import * as v from 'valibot';
import { AbortError, BadVersionError, CreateMode, NoNodeError, TenureError, type Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { TestClients, seededRandom, startTestServer, tapTransport } from '@tenure/testing';
import { OpCode, type Request } from '@tenure/protocol';
import {
  ModelPathError,
  ModelValidationError,
  UpdateConflictError,
  OutcomeUnknownError,
  model,
  type StandardSchemaV1,
} from '@tenure/models';

const User = z.object({
  id: z.string(),
  name: z.string().min(1),
  age: z.number().int().nonnegative(),
  roles: z.array(z.string()),
  address: z.object({ city: z.string(), zip: z.string() }).nullable(),
  active: z.boolean().default(true),
});
type User = z.infer<typeof User>;

const ValibotUser = v.object({
  id: v.string(),
  name: v.pipe(v.string(), v.minLength(1)),
  age: v.pipe(v.number(), v.integer(), v.minValue(0)),
  roles: v.array(v.string()),
  address: v.nullable(v.object({ city: v.string(), zip: v.string() })),
  active: v.optional(v.boolean(), true),
});

const alice: User = { id: 'alice', name: 'Alice', age: 31, roles: ['admin', 'dev'], address: { city: 'Lyon', zip: '69001' }, active: true };

let server: EmbeddedServer;
let clients: TestClients;
let client: Client;

beforeEach(async () => {
  server = startTestServer();
  clients = new TestClients(() => server.transport());
  client = await clients.open();
});
afterEach(async () => {
  await clients.closeAll();
  await server.close();
});

describe.each([
  ['zod', User],
  ['valibot', ValibotUser],
] as const)('a model with a %s schema', (_name, schema) => {
  it('set() creates the node (parents as containers) with compact UTF-8 JSON; read() gives the value back with its Stat', async () => {
    const users = model(client, '/users/{id}', { schema });
    const node = users.at({ id: 'alice' });
    expect(node.path).toBe('/users/alice');
    const { path, stat } = await node.set(alice);
    expect(path).toBe('/users/alice');
    expect(stat.version).toBe(0);
    expect(server.node('/users')!.stat.ephemeralOwner).toBe(0n);
    // Exactly what Jackson's ObjectMapper writes: compact JSON in UTF-8.
    expect((await client.getData('/users/alice')).data.toString('utf8')).toBe(JSON.stringify(alice));
    const read = await node.read();
    expect(read.value).toEqual(alice);
    expect(read.stat.version).toBe(0);
  });

  it('set() on an existing node sets its data (Curator: setDataIfExists), at a version if given', async () => {
    const node = model(client, '/users/{id}', { schema }).at({ id: 'alice' });
    await node.set(alice);
    const { stat } = await node.set({ ...alice, age: 32 });
    expect(stat.version).toBe(1);
    expect((await node.read()).value.age).toBe(32);
    await expect(node.set({ ...alice, age: 33 }, { version: 0 })).rejects.toBeInstanceOf(BadVersionError);
    await node.set({ ...alice, age: 33 }, { version: 1 });
    expect((await node.read()).value.age).toBe(33);
  });

  it('a value that fails the schema is a ModelValidationError with the issues, and nothing is written (the zxid does not move)', async () => {
    const node = model(client, '/users/{id}', { schema }).at({ id: 'bob' });
    const zxid = server.zxid;
    const bad = { ...alice, id: 'bob', age: -3, name: '' };
    const err = await node.set(bad as User).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelValidationError);
    expect(err).toBeInstanceOf(TenureError);
    const e = err as ModelValidationError;
    expect(e.code).toBe('MODEL_VALIDATION');
    expect(e.operation).toBe('write');
    expect(e.path).toBe('/users/bob');
    expect(e.issues.length).toBeGreaterThanOrEqual(2);
    const paths = e.issues.map((i) => i.path?.map((p) => (typeof p === 'object' ? p.key : p)).join('.'));
    expect(paths).toEqual(expect.arrayContaining(['age', 'name']));
    expect(server.zxid).toBe(zxid);
    expect(server.node('/users/bob')).toBeUndefined();
    expect(server.node('/users')).toBeUndefined();
  });

  it('a node another client wrote that fails the schema gives the ModelValidationError on read, with the path', async () => {
    await client.create('/users/mallory', JSON.stringify({ id: 'mallory', name: 'M', age: 'old', roles: [] }), { createParents: true });
    await client.create('/users/garbage', Buffer.from([0x7b, 0xff, 0x00]), { createParents: true });
    const users = model(client, '/users/{id}', { schema });
    const wrongType = await users
      .at({ id: 'mallory' })
      .read()
      .catch((e: unknown) => e);
    expect(wrongType).toBeInstanceOf(ModelValidationError);
    expect(wrongType).toMatchObject({ code: 'MODEL_VALIDATION', operation: 'read', path: '/users/mallory' });
    expect((wrongType as ModelValidationError).message).toContain('/users/mallory');
    const notJson = await users
      .at({ id: 'garbage' })
      .read()
      .catch((e: unknown) => e);
    expect(notJson).toBeInstanceOf(ModelValidationError);
    expect(notJson).toMatchObject({ code: 'MODEL_VALIDATION', path: '/users/garbage' });
    expect((notJson as ModelValidationError).issues[0]!.message).toMatch(/not readable/);
  });
});

describe('path parameters', () => {
  it('.at() resolves every parameter; numbers and bigints are written in decimal', () => {
    const m = model(client, '/orgs/{org}/users/{id}', { schema: User });
    expect(m.at({ org: 'acme', id: 42 }).path).toBe('/orgs/acme/users/42');
    expect(m.at({ org: 'acme', id: 7n }).path).toBe('/orgs/acme/users/7');
    expect(m.template.parameters).toEqual(['org', 'id']);
    expect(m.match('/orgs/acme/users/42')).toEqual({ org: 'acme', id: '42' });
    expect(m.match('/orgs/acme/groups/42')).toBeUndefined();
    expect(model(client, '/config', { schema: User }).at().path).toBe('/config');
  });

  it.each([
    ['a slash', 'a/b'],
    ['a slash alone', '/'],
    ['an empty name', ''],
    ['..', '..'],
    ['.', '.'],
    ['a NUL', 'a\u0000b'],
  ])('a value with %s is a ModelPathError before anything is sent', (_what, id) => {
    const users = model(client, '/users/{id}', { schema: User });
    const err = (() => {
      try {
        users.at({ id });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ModelPathError);
    expect(err).toMatchObject({ code: 'MODEL_PATH', parameter: 'id', template: '/users/{id}' });
  });

  it('the parameters are typed from the template, and so are the values', () => {
    const m = model(client, '/orgs/{org}/users/{id}', { schema: User });
    expectTypeOf<Parameters<typeof m.at>[0]>().toEqualTypeOf<{
      readonly org: string | number | bigint;
      readonly id: string | number | bigint;
    }>();
    expectTypeOf(m.match('/orgs/a/users/b')).toEqualTypeOf<{ readonly org: string; readonly id: string } | undefined>();
    expectTypeOf<Parameters<typeof m.list>[0]>().toEqualTypeOf<{ readonly org: string | number | bigint }>();
    expectTypeOf<Awaited<ReturnType<ReturnType<typeof m.at>['read']>>['value']>().toEqualTypeOf<User>();
    // @ts-expect-error: `name` is not a parameter of the template, and `id` is missing
    expect(() => m.at({ org: 'a', name: 'x' })).toThrow(ModelPathError);
    const v = model(client, '/users/{id}', { schema: ValibotUser });
    expectTypeOf<Awaited<ReturnType<ReturnType<typeof v.at>['read']>>['value']['active']>().toEqualTypeOf<boolean>();
    expect(v.template.parameters).toEqual(['id']);
  });

  it('a missing or non-string parameter is a ModelPathError', () => {
    const users = model(client, '/users/{id}', { schema: User });
    expect(() => users.at({} as { id: string })).toThrow(ModelPathError);
    expect(() => users.at({ id: { toString: () => 'x' } } as unknown as { id: string })).toThrow(ModelPathError);
    expect(() => users.at({ id: NaN })).toThrow(ModelPathError);
  });

  it('templates and options are checked: a partial parameter, a missing schema, a TTL without a TTL mode', () => {
    expect(() => model(client, '/users/u-{id}', { schema: User })).toThrow(/whole node name/);
    expect(() => model(client, 'users/{id}', { schema: User })).toThrow(/starts with/);
    expect(() => model(client, '/users/{id}', { schema: {} as StandardSchemaV1 })).toThrow(/Standard Schema/);
    expect(() => model(client, '/users/{id}', { schema: User, ttl: 1000 })).toThrow(/TTL/);
    expect(() => model(client, '/users/{id}', { schema: User, createMode: CreateMode.PERSISTENT_WITH_TTL })).toThrow(/ttl/);
  });
});

describe('Curator semantics', () => {
  it('createMode: EPHEMERAL nodes belong to the session; TTL nodes carry the TTL', async () => {
    const sessions = model(client, '/sessions/{id}', { schema: User, createMode: CreateMode.EPHEMERAL });
    await sessions.at({ id: 'alice' }).set(alice);
    expect(server.node('/sessions/alice')!.stat.ephemeralOwner).toBe(client.sessionId);
    const sent: Request[] = [];
    const tapped = await clients.open({ transport: tapTransport(server.transport(), { request: (r) => void sent.push(r) }) });
    const timed = model(tapped, '/timed/{id}', { schema: User, createMode: CreateMode.PERSISTENT_WITH_TTL, ttl: 60_000 });
    await timed.at({ id: 'alice' }).set(alice);
    // ZooKeeper hides a TTL node's owner in its Stat; the request says what was asked.
    const creates = sent.filter((r) => (r as { path?: string }).path === '/timed/alice' && r.type !== OpCode.setData);
    expect(creates.length).toBeGreaterThan(0); // a first try before the parent exists, then the one that lands
    for (const r of creates) expect(r).toMatchObject({ type: OpCode.createTTL, flags: CreateMode.PERSISTENT_WITH_TTL, ttl: 60_000n });
  });

  it('a sequential mode creates a new node on each set(), and set() resolves to its name', async () => {
    const events = model(client, '/events/{id}', { schema: User, createMode: CreateMode.PERSISTENT_SEQUENTIAL });
    const first = await events.at({ id: 'e-' }).set(alice);
    const second = await events.at({ id: 'e-' }).set(alice);
    expect(first.path).toMatch(/^\/events\/e-\d{10}$/);
    expect(second.path).not.toBe(first.path);
  });

  it('delete() (guaranteed), exists(), children(); read() of a missing node is a NoNodeError', async () => {
    const users = model(client, '/users/{id}', { schema: User });
    for (const id of ['carol', 'alice', 'bob']) await users.at({ id }).set({ ...alice, id });
    expect(await model(client, '/users', { schema: User }).at().children()).toEqual(['alice', 'bob', 'carol']);
    expect((await users.at({ id: 'bob' }).exists())!.version).toBe(0);
    await users.at({ id: 'bob' }).delete();
    expect(await users.at({ id: 'bob' }).exists()).toBeNull();
    await expect(users.at({ id: 'bob' }).read()).rejects.toBeInstanceOf(NoNodeError);
    await expect(users.at({ id: 'bob' }).delete()).rejects.toBeInstanceOf(NoNodeError);
    await expect(users.at({ id: 'alice' }).delete({ version: 5 })).rejects.toBeInstanceOf(BadVersionError);
  });

  it('the schema output is what is written: zod defaults are filled in before the write', async () => {
    const node = model(client, '/users/{id}', { schema: User }).at({ id: 'dan' });
    await node.set({ id: 'dan', name: 'Dan', age: 3, roles: [], address: null });
    expect(JSON.parse((await client.getData('/users/dan')).data.toString())).toEqual({
      id: 'dan',
      name: 'Dan',
      age: 3,
      roles: [],
      address: null,
      active: true,
    });
  });
});

describe('async schemas', () => {
  /** A Standard Schema whose validate always answers a Promise (as Standard Schema allows). */
  const slowPositive: StandardSchemaV1<unknown, { n: number }> = {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: async (value) => {
        await new Promise((r) => setImmediate(r));
        const n = (value as { n?: unknown } | null)?.n;
        return typeof n === 'number' && n > 0 ? { value: { n } } : { issues: [{ message: 'n must be a positive number', path: ['n'] }] };
      },
    },
  };

  it('a Promise-returning validate is awaited on write and on read', async () => {
    const node = model(client, '/async/{id}', { schema: slowPositive }).at({ id: 'a' });
    await node.set({ n: 5 });
    expect((await node.read()).value).toEqual({ n: 5 });
    const zxid = server.zxid;
    await expect(node.set({ n: -1 })).rejects.toMatchObject({
      code: 'MODEL_VALIDATION',
      issues: [{ message: 'n must be a positive number' }],
    });
    expect(server.zxid).toBe(zxid);
    await client.setData('/async/a', '{"n":0}');
    await expect(node.read()).rejects.toBeInstanceOf(ModelValidationError);
  });

  it('zod async refinements work through ~standard.validate', async () => {
    const Name = z.object({ name: z.string().refine(async (s) => (await Promise.resolve(s)) !== 'root', 'reserved') });
    const node = model(client, '/names/{id}', { schema: Name }).at({ id: 'x' });
    await node.set({ name: 'ok' });
    await expect(node.set({ name: 'root' })).rejects.toMatchObject({ code: 'MODEL_VALIDATION', issues: [{ message: 'reserved' }] });
    expect((await node.read()).value).toEqual({ name: 'ok' });
  });
});

describe('update()', () => {
  const Counter = z.object({ count: z.number().int(), writers: z.array(z.string()) });

  it('four clients each add 25 to one counter: no update is lost', async () => {
    const contenders = await clients.openMany(4);
    const counter = (c: Client) => model(c, '/counters/{name}', { schema: Counter }).at({ name: 'hits' });
    await counter(client).set({ count: 0, writers: [] });
    const PER = 25;
    const written = await Promise.all(
      contenders.map(async (c, who) => {
        const mine: number[] = [];
        for (let i = 0; i < PER; i++) {
          const { value } = await counter(c).update((cur) => ({ count: cur.count + 1, writers: [...cur.writers, `c${who}`] }));
          mine.push(value.count);
        }
        return mine;
      }),
    );
    const final = await counter(client).read();
    expect(final.value.count).toBe(4 * PER);
    expect(final.stat.version).toBe(4 * PER);
    // Each update wrote a distinct count (none overwrote another), and every writer's 25 are there.
    expect(new Set(written.flat()).size).toBe(4 * PER);
    for (let who = 0; who < 4; who++) expect(final.value.writers.filter((w) => w === `c${who}`)).toHaveLength(PER);
  });

  it('four contenders under dropped connections and lost replies: each update that resolved landed once; only an OutcomeUnknownError may or may not have', async () => {
    const contenders = await clients.openMany(4);
    const counter = (c: Client) => model(c, '/counters/{name}', { schema: Counter }).at({ name: 'faulty' });
    await counter(client).set({ count: 0, writers: [] });
    const random = seededRandom(24);
    let faulted = 0;
    /** Between an update's read and its write: sometimes drop the connection (the write goes after the reconnect), sometimes lose the write's reply. */
    const fault = (c: Client): void => {
      const r = random();
      if (r < 0.1 ? server.dropConnection(c.sessionId) : r < 0.2 ? server.loseNextReply(c.sessionId) : false) faulted++;
    };
    const PER = 50;
    let unknown = 0;
    const counts: number[] = [];
    await Promise.all(
      contenders.map(async (c) => {
        for (let i = 0; i < PER; i++) {
          try {
            const { value } = await counter(c).update((cur) => {
              fault(c);
              return { ...cur, count: cur.count + 1 };
            });
            counts.push(value.count);
          } catch (err) {
            if (!(err instanceof OutcomeUnknownError)) throw err;
            unknown++;
          }
        }
      }),
    );
    const final = (await counter(client).read()).value.count;
    expect(new Set(counts).size).toBe(counts.length); // no two resolved updates wrote the same count
    expect(final).toBeGreaterThanOrEqual(counts.length);
    expect(final).toBeLessThanOrEqual(counts.length + unknown);
    expect(counts.length + unknown).toBe(4 * PER);
    expect(faulted).toBeGreaterThan(20);
    expect(unknown).toBeGreaterThan(0); // a lost reply after a landed write is never taken for a conflict
  });

  it('a missing node is a NoNodeError, unless `initial` is given: then fn(initial) is created', async () => {
    const node = model(client, '/counters/{name}', { schema: Counter }).at({ name: 'fresh' });
    await expect(node.update((c) => ({ ...c, count: c.count + 1 }))).rejects.toBeInstanceOf(NoNodeError);
    const { value, stat } = await node.update((c) => ({ ...c, count: c.count + 1 }), { initial: { count: 0, writers: [] } });
    expect(value.count).toBe(1);
    expect(stat.version).toBe(0);
    expect((await node.update((c) => ({ ...c, count: c.count + 1 }), { initial: { count: 0, writers: [] } })).value.count).toBe(2);
  });

  it('fn giving a value that fails the schema: ModelValidationError, nothing written', async () => {
    const node = model(client, '/counters/{name}', { schema: Counter }).at({ name: 'c' });
    await node.set({ count: 1, writers: [] });
    const zxid = server.zxid;
    await expect(node.update((c) => ({ ...c, count: c.count + 0.5 }))).rejects.toMatchObject({
      code: 'MODEL_VALIDATION',
      operation: 'write',
    });
    expect(server.zxid).toBe(zxid);
  });

  it('maxAttempts: losing every round is an UpdateConflictError', async () => {
    const node = model(client, '/counters/{name}', { schema: Counter }).at({ name: 'busy' });
    await node.set({ count: 0, writers: [] });
    let rounds = 0;
    const err = await node
      .update(
        async (c) => {
          rounds++;
          await client.setData('/counters/busy', JSON.stringify({ count: 100 + rounds, writers: [] })); // someone else wins
          return { ...c, count: c.count + 1 };
        },
        { maxAttempts: 3 },
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpdateConflictError);
    expect(err).toMatchObject({ code: 'UPDATE_CONFLICT', attempts: 3, path: '/counters/busy' });
    expect(rounds).toBe(3);
  });

  it('an aborted signal ends an update that keeps losing with AbortError', async () => {
    const node = model(client, '/counters/{name}', { schema: Counter }).at({ name: 'abort' });
    await node.set({ count: 0, writers: [] });
    const ac = new AbortController();
    let rounds = 0;
    const err = await node
      .update(
        async (c) => {
          if (++rounds === 3) ac.abort();
          await client.setData('/counters/abort', JSON.stringify({ count: 100 + rounds, writers: [] }));
          return { ...c, count: c.count + 1 };
        },
        { signal: ac.signal },
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AbortError);
    expect(rounds).toBe(3);
  });

  it('a write applied whose reply was lost is not applied twice: it is an OutcomeUnknownError (fn runs once)', async () => {
    const node = model(client, '/counters/{name}', { schema: Counter }).at({ name: 'lossy' });
    await node.set({ count: 0, writers: [] });
    let calls = 0;
    const err = await node
      .update((c) => {
        calls++;
        server.loseNextReply(client.sessionId); // the setData lands, its reply does not
        return { ...c, count: c.count + 1 };
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err).toMatchObject({ code: 'OUTCOME_UNKNOWN', operation: 'setData', path: '/counters/lossy' });
    expect(calls).toBe(1);
    expect((await node.read()).value.count).toBe(1);
  });
});

describe('list()', () => {
  it('reads every instance under one parent, checked; a missing parent is empty; the other parameters are typed', async () => {
    const members = model(client, '/orgs/{org}/members/{user}', { schema: User });
    expect(await members.list({ org: 'acme' })).toEqual([]);
    await members.at({ org: 'acme', user: 'bob' }).set({ ...alice, id: 'bob' });
    await members.at({ org: 'acme', user: 'alice' }).set(alice);
    await members.at({ org: 'zeta', user: 'carol' }).set({ ...alice, id: 'carol' });
    const acme = await members.list({ org: 'acme' });
    expect(acme.map((m) => [m.path, m.params, m.value.id])).toEqual([
      ['/orgs/acme/members/alice', { org: 'acme', user: 'alice' }, 'alice'],
      ['/orgs/acme/members/bob', { org: 'acme', user: 'bob' }, 'bob'],
    ]);
    // @ts-expect-error: `user` is the listed parameter, `org` is required
    await expect(members.list({ user: 'x' })).rejects.toBeInstanceOf(ModelPathError);
    const users = model(client, '/users/{id}', { schema: User });
    await users.at({ id: 'alice' }).set(alice);
    expect((await users.list()).map((u) => u.params.id)).toEqual(['alice']);
    await client.create('/users/broken', 'not json');
    await expect(users.list()).rejects.toMatchObject({ code: 'MODEL_VALIDATION', path: '/users/broken' });
    await expect(model(client, '/config', { schema: User }).list()).rejects.toThrow(/last node name is a parameter/);
  });
});
