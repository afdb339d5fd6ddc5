/**
 * Tenure's models and curator-x-async's ModeledFramework with JacksonModelSerializer on one real
 * ZooKeeper 3.8, on the same nodes: a model written by Tenure is read by Java's Jackson into an
 * equal object (User.equals on a fixture built in Java), and the reverse; the bytes are the same;
 * versioned updates from both sides interleave without losing one; a Tenure cache sees Java's
 * writes as typed changes; and the same with the model's `compressed` against Curator's
 * `.compressed()` / `.decompressed()` (GzipCompressionProvider).
 *
 * The Java side is packages/models/test/java/CuratorModelWorker.java, compiled here against
 * Debian's Curator and Jackson jars. Debian has no curator-x-async jar, so the worker makes
 * ModeledFramework's two calls itself (JacksonModelSerializer's ObjectMapper setup, and set() as
 * create().orSetData().creatingParentContainersIfNeeded()); see its header.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TestingServer, TestClients, realZooKeeper } from '@tenure/testing';
import { ModelValidationError, model } from '@tenure/models';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

const JARS = [
  '/usr/share/java/curator-recipes.jar',
  '/usr/share/java/jackson-databind.jar',
  '/usr/share/java/jackson-core.jar',
  '/usr/share/java/jackson-annotations.jar',
  '/usr/share/java/slf4j-simple.jar',
];
const zk = realZooKeeper();
const java = javaToolchain(JARS);
const SOURCE = fileURLToPath(new URL('../../packages/models/test/java/CuratorModelWorker.java', import.meta.url));

/** The Java User POJO as a zod schema. */
const User = z.object({
  id: z.string(),
  name: z.string(),
  age: z.number().int(),
  visits: z.number().int(),
  score: z.number(),
  active: z.boolean(),
  roles: z.array(z.string()),
  address: z.object({ city: z.string(), zip: z.string() }).nullable(),
  quotas: z.record(z.string(), z.number().int()),
});
type User = z.infer<typeof User>;

/** The Java fixtures (CuratorModelWorker.fixture), field for field, in the POJO's property order. */
const FIXTURES: Record<'alice' | 'bob', User> = {
  alice: {
    id: 'alice',
    name: 'Alice Zoë ✓ 漢字',
    age: 31,
    visits: 9007199254740991,
    score: 0.1,
    active: true,
    roles: ['admin', 'dev'],
    address: { city: 'Lyon', zip: '69001' },
    quotas: { cpu: 4, disk: 100 },
  },
  bob: {
    id: 'bob',
    name: 'Bob "the builder"\n\\',
    age: 0,
    visits: -1,
    score: -1.5e-7,
    active: false,
    roles: [],
    address: null,
    quotas: {},
  },
};

const after = (line: string, word: string): string => line.slice(word.length + 1);

describe.skipIf(!zk.available || !java.available)('models: Tenure and Curator (JacksonModelSerializer) on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let compiled: CompiledJava;
  let curator: JavaProgram;
  let clients: TestClients;
  const extra: JavaProgram[] = [];

  const startWorker = (): Promise<JavaProgram> =>
    JavaProgram.start({ classpath: compiled.classpath, mainClass: 'CuratorModelWorker', args: [server.connectString] }, /^ready$/, 60_000);

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava([SOURCE], JARS), TestingServer.start()]);
    curator = await startWorker();
    clients = new TestClients(() => server.transport());
  }, 120_000);
  afterEach(async () => {
    await Promise.all(extra.splice(0).map((p) => p.stop()));
    await clients.closeAll();
  });
  afterAll(async () => {
    await curator?.stop();
    await server?.close();
    compiled?.dispose();
  });

  it.each(['alice', 'bob'] as const)(
    'Tenure writes %s; Java reads it with Jackson into an object equal to its own fixture',
    async (name) => {
      const client = await clients.open();
      const users = model(client, '/tenure-wrote/{id}', { schema: User });
      await users.at({ id: name }).set(FIXTURES[name]);
      const line = await curator.ask(`check /tenure-wrote/${name} ${name}`, /^check /);
      const [equal, ...json] = after(line, 'check').split(' ');
      expect(equal).toBe('true');
      // And what Jackson makes of it, written back by Jackson, is the same value.
      expect(JSON.parse(json.join(' '))).toEqual(FIXTURES[name]);
    },
  );

  it.each(['alice', 'bob'] as const)(
    'Java writes %s (ModeledFramework.set: parents as containers); Tenure reads an equal, schema-checked value',
    async (name) => {
      await curator.ask(`write /java-wrote/users/${name} ${name}`, /^wrote /);
      const client = await clients.open();
      const { value, stat } = await model(client, '/java-wrote/users/{id}', { schema: User }).at({ id: name }).read();
      expect(value).toEqual(FIXTURES[name]);
      expect(stat.version).toBe(0);
      // The parent Curator made is a container, as Tenure's set() makes them.
      expect((await client.exists('/java-wrote/users'))!.ephemeralOwner).toBe(0n);
    },
  );

  it('the bytes are the same: Tenure writes exactly what Jackson writes for alice (compact UTF-8 JSON, one property order)', async () => {
    await curator.ask('write /bytes/java alice', /^wrote /);
    const client = await clients.open();
    await model(client, '/bytes/{id}', { schema: User }).at({ id: 'tenure' }).set(FIXTURES.alice);
    const fromJava = (await client.getData('/bytes/java')).data;
    const fromTenure = (await client.getData('/bytes/tenure')).data;
    expect(fromTenure.toString('utf8')).toBe(fromJava.toString('utf8'));
    expect(fromTenure.equals(fromJava)).toBe(true);
  });

  it('a Java-written node updated by Tenure (update) reads back in Java with the change', async () => {
    await curator.ask('write /round/users/alice alice', /^wrote /);
    const client = await clients.open();
    const node = model(client, '/round/users/{id}', { schema: User }).at({ id: 'alice' });
    await node.update((u) => ({ ...u, age: u.age + 1, roles: [...u.roles, 'ops'], quotas: { ...u.quotas, gpu: 1 } }));
    const got = JSON.parse(after(await curator.ask('read /round/users/alice', /^read /), 'read')) as User;
    expect(got).toEqual({ ...FIXTURES.alice, age: 32, roles: ['admin', 'dev', 'ops'], quotas: { cpu: 4, disk: 100, gpu: 1 } });
  });

  it('on ZooKeeper too: a value failing the schema is refused before any write, and a node Java wrote that fails it is the typed error with the path', async () => {
    const client = await clients.open();
    const Adult = User.extend({ age: z.number().int().min(18) });
    const adults = model(client, '/adults/{id}', { schema: Adult });
    await expect(adults.at({ id: 'bob' }).set(FIXTURES.bob)).rejects.toMatchObject({ code: 'MODEL_VALIDATION', operation: 'write' });
    expect(await client.exists('/adults/bob')).toBeNull();
    expect(await client.exists('/adults')).toBeNull();
    await curator.ask('write /adults/bob bob', /^wrote /);
    const err = await adults
      .at({ id: 'bob' })
      .read()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelValidationError);
    expect(err).toMatchObject({ code: 'MODEL_VALIDATION', operation: 'read', path: '/adults/bob' });
    expect((err as ModelValidationError).issues.map((i) => i.path?.map((p) => (typeof p === 'object' ? p.key : p)))).toEqual([['age']]);
  });

  it("Jackson ignores a property it does not know (JacksonModelSerializer's FAIL_ON_UNKNOWN_PROPERTIES off): a Tenure model with more fields is read in Java", async () => {
    const client = await clients.open();
    const Wider = User.extend({ team: z.string() });
    await model(client, '/wider/{id}', { schema: Wider })
      .at({ id: 'alice' })
      .set({ ...FIXTURES.alice, team: 'core' });
    expect(after(await curator.ask('check /wider/alice alice', /^check /), 'check').split(' ')[0]).toBe('true');
  });

  it('2 Java and 2 Tenure contenders make versioned read-modify-writes on one node: no update is lost', async () => {
    await curator.ask('write /contended/users/alice alice', /^wrote /);
    const [j1, j2] = await Promise.all([startWorker(), startWorker()]);
    extra.push(j1!, j2!);
    const [t1, t2] = await clients.openMany(2);
    const PER = 25;
    const bumps = (c: typeof t1) => async () => {
      const node = model(c!, '/contended/users/{id}', { schema: User }).at({ id: 'alice' });
      for (let i = 0; i < PER; i++) await node.update((u) => ({ ...u, age: u.age + 1 }));
    };
    await Promise.all([
      j1!.ask(`bump /contended/users/alice ${PER}`, /^bumped /, 60_000),
      j2!.ask(`bump /contended/users/alice ${PER}`, /^bumped /, 60_000),
      bumps(t1)(),
      bumps(t2)(),
    ]);
    const { value, stat } = await model(t1!, '/contended/users/{id}', { schema: User }).at({ id: 'alice' }).read();
    expect(value.age).toBe(FIXTURES.alice.age + 4 * PER);
    expect(stat.version).toBe(4 * PER);
    expect({ ...value, age: FIXTURES.alice.age }).toEqual(FIXTURES.alice);
  });

  it.each(['alice', 'bob'] as const)(
    'compressed (CreateOption.compress): Tenure writes %s gzipped, Java reads it with decompressed() and Jackson; Java writes it compressed, Tenure reads it',
    async (name) => {
      const client = await clients.open();
      const users = model(client, '/compressed/{id}', { schema: User, compressed: true });
      await users.at({ id: `tenure-${name}` }).set(FIXTURES[name]);
      expect((await client.getData(`/compressed/tenure-${name}`)).data.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
      expect(after(await curator.ask(`checkz /compressed/tenure-${name} ${name}`, /^check /), 'check').split(' ')[0]).toBe('true');
      await curator.ask(`writez /compressed/java-${name} ${name}`, /^wrote /);
      expect((await users.at({ id: `java-${name}` }).read()).value).toEqual(FIXTURES[name]);
    },
  );

  it("a Tenure CachedModel sees Java's writes as typed changes", async () => {
    const client = await clients.open();
    await using cached = model(client, '/cached/users/{id}', { schema: User }).cached();
    await cached.start();
    const changes = cached.changes();
    await curator.ask('write /cached/users/bob bob', /^wrote /);
    for (;;) {
      const { value: change } = await changes.next();
      if (change?.type === 'created') {
        expect(change).toMatchObject({ path: '/cached/users/bob', params: { id: 'bob' }, value: FIXTURES.bob });
        break;
      }
    }
    expect(cached.get({ id: 'bob' })?.value).toEqual(FIXTURES.bob);
  });
});
