/**
 * Tenure's queues and Apache Curator's (Debian's libcurator-recipes-java 5.4) on one real ZooKeeper,
 * on the same paths: each produces what the other consumes. The Java side is
 * test/interop/queues-java/CuratorQueueWorker.java, compiled by this suite and driven line by line.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { EventLog, TestingServer, TestClients, childrenUntil, realZooKeeper, sleep } from '@tenure/testing';
import {
  DistributedDelayQueue,
  DistributedIdQueue,
  DistributedPriorityQueue,
  DistributedQueue,
  SimpleDistributedQueue,
  type QueueSerializer,
} from '@tenure/queues';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

const zk = realZooKeeper();
const java = javaToolchain();
const WORKER = fileURLToPath(new URL('./queues-java/CuratorQueueWorker.java', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../packages/queues/test/fixtures/', import.meta.url));
const text: QueueSerializer<string> = { serialize: (s) => Buffer.from(s), deserialize: (b) => b.toString() };
const CRASH_SESSION_MS = 1500;

/** The values of the "item <v>" lines a program printed. */
const itemsOf = (p: JavaProgram): string[] => p.lines.filter((l) => l.startsWith('item ')).map((l) => l.slice(5));

describe.skipIf(!zk.available || !java.available)('Curator queue interop on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let compiled: CompiledJava;
  let curator: JavaProgram;
  let clients: TestClients;
  const extra: JavaProgram[] = [];
  const children: ChildProcess[] = [];

  const startWorker = (sessionMs = 4000): Promise<JavaProgram> =>
    JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorQueueWorker', args: [server.connectString, String(sessionMs)] },
      /^ready$/,
    );

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava([WORKER]), TestingServer.start()]);
    curator = await startWorker();
    clients = new TestClients(() => server.transport());
  });
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await Promise.all(extra.splice(0).map((p) => p.stop()));
    await clients.closeAll();
  });
  afterAll(async () => {
    await curator?.stop();
    await server?.close();
    compiled?.dispose();
  });

  it('Curator produces 500 items, Tenure consumes all 500 exactly once, in order; then the reverse', async () => {
    await curator.ask('put /interop/fifo 500 c', /^put 500$/, 60_000);
    const got = new EventLog<string>();
    const queue = new DistributedQueue(await clients.open(), '/interop/fifo', {
      serializer: text,
      consumer: async (item) => void got.push(item),
    });
    await queue.start();
    await got.atLeast(500, { timeoutMs: 30_000 });
    await sleep(100);
    expect(got).toEqual(Array.from({ length: 500 }, (_, i) => `c${i}`));
    await queue.close();

    const producer = new DistributedQueue(await clients.open(), '/interop/fifo2', { serializer: text });
    await producer.start();
    for (let i = 0; i < 500; i++) await producer.put(`t${i}`);
    await producer.close();
    await curator.ask('consume queue /interop/fifo2 500 -', /^consumed 500$/, 60_000);
    expect(itemsOf(curator).filter((v) => v.startsWith('t'))).toEqual(Array.from({ length: 500 }, (_, i) => `t${i}`));
    const admin = await clients.open();
    expect((await admin.getChildren('/interop/fifo')).children).toEqual([]);
    expect((await admin.getChildren('/interop/fifo2')).children).toEqual([]);
  });

  it('MultiItem both ways: one node, the items in order; lock-safe consumers on both sides', async () => {
    await curator.ask('putmulti /interop/multi a,b,c', /^put 1$/);
    const got = new EventLog<string>();
    const queue = new DistributedQueue(await clients.open(), '/interop/multi', {
      serializer: text,
      lockPath: '/interop/multi-locks',
      consumer: async (i) => void got.push(i),
    });
    await queue.start();
    await got.atLeast(3, { timeoutMs: 10_000 }); // the multi item
    expect(got).toEqual(['a', 'b', 'c']);
    await queue.close();

    const producer = new DistributedQueue(await clients.open(), '/interop/multi2', { serializer: text });
    await producer.start();
    await producer.putMulti(['x', 'y', 'z']);
    const before = itemsOf(curator).length;
    await curator.ask('consume queue /interop/multi2 3 /interop/multi2-locks', /^consumed 3$/, 20_000);
    expect(itemsOf(curator).slice(before)).toEqual(['x', 'y', 'z']);
  });

  it('with lockPath, a Tenure consumer killed (SIGKILL) mid-item leaves the item for a Curator consumer: none lost', async () => {
    const producer = new DistributedQueue(await clients.open(), '/interop/crash-t', { serializer: text });
    await producer.start();
    for (let i = 0; i < 20; i++) await producer.put(`k${i}`);
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        `${FIXTURES}tenure-consumer.ts`,
        server.connectString,
        '/interop/crash-t',
        '/interop/crash-t-locks',
        String(CRASH_SESSION_MS),
      ],
      {
        cwd: FIXTURES,
        env: { ...process.env, TSX_TSCONFIG_PATH: `${FIXTURES}tsconfig.json` },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    children.push(child);
    const lines = new EventLog<string>();
    createInterface({ input: child.stdout! }).on('line', (l) => lines.push(l));
    await lines.until((log) => log.some((l) => l.startsWith('consuming ')), { timeoutMs: 30_000 }); // the child takes an item
    expect(lines.find((l) => l.startsWith('consuming '))).toBe('consuming k0');
    const admin = await clients.open();
    expect((await admin.getChildren('/interop/crash-t-locks')).children).toHaveLength(1);
    child.kill('SIGKILL');

    const consumer = await startWorker();
    extra.push(consumer);
    const consumed = consumer.ask('consume queue /interop/crash-t 21 /interop/crash-t-locks', /^consumed 21$/, 30_000);
    await consumer.waitFor(() => itemsOf(consumer).length === 19, 20_000); // the 19 free items
    // Curator looks at a skipped item again only when the children change: once the dead child's
    // session has expired (its lock node with it), one more put lets it see k0.
    await childrenUntil(admin, '/interop/crash-t-locks', (c) => c.length === 0, { timeoutMs: 20_000 }); // the dead lock goes with its session
    await producer.put('nudge');
    await consumed;
    expect(itemsOf(consumer).sort()).toEqual([...Array.from({ length: 20 }, (_, i) => `k${i}`), 'nudge'].sort());
    expect((await admin.getChildren('/interop/crash-t')).children).toEqual([]);
  });

  it('with lockPath, a Curator consumer killed mid-item (the JVM halts) leaves the item for a Tenure consumer: none lost', async () => {
    await curator.ask('put /interop/crash-c 20 j', /^put 20$/);
    const doomed = await startWorker(CRASH_SESSION_MS);
    extra.push(doomed);
    const crashing = doomed.waitFor(/^crashing /, 20_000);
    doomed.send('crash /interop/crash-c /interop/crash-c-locks');
    expect(await crashing).toBe('crashing j0');
    expect(await doomed.exited).toBe(137);

    const got = new EventLog<string>();
    const queue = new DistributedQueue(await clients.open(), '/interop/crash-c', {
      serializer: text,
      lockPath: '/interop/crash-c-locks',
      consumer: async (item) => void got.push(item),
    });
    await queue.start();
    await got.atLeast(20, { timeoutMs: 20_000 }); // every item, j0 too once the dead session expires
    expect([...got].sort()).toEqual(Array.from({ length: 20 }, (_, i) => `j${i}`).sort());
    expect(got.indexOf('j0')).toBeGreaterThanOrEqual(0);
    await queue.close();
  });

  it('priority queues interoperate: same names for the same priority, lower numbers first on both sides', async () => {
    const priorities = [7, -3, 0, 2147483647, -2147483648, 7, 100];
    for (const [i, p] of priorities.entries()) await curator.ask(`putp /interop/prio p${i} ${p}`, /^put 1$/);
    const client = await clients.open();
    const javaNames = (await client.getChildren('/interop/prio')).children;
    const queue = new DistributedPriorityQueue(client, '/interop/prio2', { serializer: text });
    await queue.start();
    for (const [i, p] of priorities.entries()) await queue.put(`q${i}`, p);
    const ourNames = (await client.getChildren('/interop/prio2')).children;
    expect(ourNames.map((n) => n.slice(0, -10)).sort()).toEqual(javaNames.map((n) => n.slice(0, -10)).sort());
    const expected = (prefix: string): string[] =>
      [...priorities.entries()].sort((a, b) => a[1] - b[1] || a[0] - b[0]).map(([i]) => `${prefix}${i}`);

    const got: string[] = [];
    const fromJava = new DistributedPriorityQueue(client, '/interop/prio', { serializer: text });
    await fromJava.start();
    for await (const item of fromJava) {
      got.push(item);
      if (got.length === priorities.length) break;
    }
    await fromJava.close();
    expect(got).toEqual(expected('p'));
    await queue.close();
    const before = itemsOf(curator).length;
    await curator.ask(`consume priority /interop/prio2 ${priorities.length} -`, new RegExp(`^consumed ${priorities.length}$`), 20_000);
    expect(itemsOf(curator).slice(before)).toEqual(expected('q'));
  });

  it('delay queues interoperate: neither side takes an item before its time', async () => {
    const client = await clients.open();
    const due = Date.now() + 1500;
    await curator.ask(`putd /interop/delay late ${due}`, /^put 1$/);
    await curator.ask(`putd /interop/delay early ${Date.now() - 10}`, /^put 1$/);
    const got = new EventLog<{ item: string; at: number }>();
    const queue = new DistributedDelayQueue(client, '/interop/delay', {
      serializer: text,
      consumer: async (item) => void got.push({ item, at: Date.now() }),
    });
    await queue.start();
    await got.atLeast(2, { timeoutMs: 10_000 });
    expect(got.map((g) => g.item)).toEqual(['early', 'late']);
    expect(got[1]!.at).toBeGreaterThanOrEqual(due);
    await queue.close();

    const producer = new DistributedDelayQueue(client, '/interop/delay2', { serializer: text });
    await producer.start();
    const ourDue = Date.now() + 1500;
    await producer.put('ours', ourDue);
    const before = itemsOf(curator).length;
    await curator.ask('consume delay /interop/delay2 1 -', /^consumed 1$/, 20_000);
    expect(Date.now()).toBeGreaterThanOrEqual(ourDue);
    expect(itemsOf(curator).slice(before)).toEqual(['ours']);
    await producer.close();
  });

  it('id queues interoperate: names, FIFO order, and remove(id) across the two', async () => {
    const client = await clients.open();
    await curator.ask('puti /interop/ids a1 order/1', /^put 1$/);
    await curator.ask('puti /interop/ids a2 order-2', /^put 1$/);
    const queue = new DistributedIdQueue(client, '/interop/ids', { serializer: text });
    await queue.start();
    await queue.put('t1', 'order/1');
    await queue.put('t2', 'order-3');
    const names = (await client.getChildren('/interop/ids')).children;
    expect(names.filter((n) => n.startsWith('queue-|order_1|'))).toHaveLength(2);
    expect(await queue.remove('order_1')).toBe(2); // Curator's node and ours
    expect(await curator.ask('removei /interop/ids order-3', /^removed /)).toBe('removed 1'); // ours, by Curator
    const before = itemsOf(curator).length;
    await curator.ask('consume id /interop/ids 1 -', /^consumed 1$/, 20_000);
    expect(itemsOf(curator).slice(before)).toEqual(['a2']);
    await queue.put('t3', 'x');
    await queue.put('t4', 'y');
    await curator.ask('consume id /interop/ids 2 -', /^consumed 2$/, 20_000);
    expect(itemsOf(curator).slice(before + 1)).toEqual(['t3', 't4']);
    await queue.close();
  });

  it('SimpleDistributedQueue interoperates: raw bytes under qn-, FIFO both ways', async () => {
    const client = await clients.open();
    for (const v of ['s1', 's2', 's3']) await curator.ask(`offer /interop/simple ${v}`, /^put 1$/);
    await using queue = new SimpleDistributedQueue(client, '/interop/simple');
    expect((await queue.peek())!.toString()).toBe('s1');
    expect([(await queue.take()).toString(), (await queue.poll())!.toString(), (await queue.remove()).toString()]).toEqual([
      's1',
      's2',
      's3',
    ]);
    for (const v of ['u1', 'u2']) await queue.offer(v);
    const before = itemsOf(curator).length;
    await curator.ask('take /interop/simple 2', /^taken 2$/);
    expect(itemsOf(curator).slice(before)).toEqual(['u1', 'u2']);
  });
});
