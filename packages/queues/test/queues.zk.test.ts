/**
 * The queues on a real ZooKeeper 3.8: FIFO order with several producers and consumers, each item
 * exactly once under lockPath; a consumer whose session expires mid-item (expireSession) loses
 * its lock and the item goes to another; a drain's reads, counted; the simple queue; nothing left.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, RetryPolicies } from '@tenure/client';
import { OpCode, type Request } from '@tenure/protocol';
import { TestingServer, expireSession, nextEvent, realZooKeeper } from '@tenure/testing';
import { DistributedPriorityQueue, DistributedQueue, SimpleDistributedQueue, type QueueSerializer } from '../src/index.js';
import { TestClients, countingTransport, roundTrip, Taken } from './harness.js';

const zk = realZooKeeper();
const text: QueueSerializer<string> = { serialize: (s) => Buffer.from(s), deserialize: (b) => b.toString() };

describe.skipIf(!zk.available)('queues on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let clients: TestClients;

  beforeAll(async () => {
    server = await TestingServer.start();
    clients = new TestClients(() => server.transport());
  });
  afterEach(async () => {
    await clients.closeAll();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('3 producers and 3 lock-safe consumers: 300 items, each exactly once; nothing left after close', async () => {
    const got = new Map<string, number>();
    const taken = new Taken<string>();
    const consumerClients = await clients.openMany(3);
    const consumers = await Promise.all(
      consumerClients.map(async (c) => {
        const q = new DistributedQueue(c, '/zk/shared', {
          serializer: text,
          lockPath: '/zk/shared-locks',
          consumer: async (item) => {
            got.set(item, (got.get(item) ?? 0) + 1);
            taken.push(item);
          },
        });
        await q.start();
        return q;
      }),
    );
    const producers = await Promise.all(
      (await clients.openMany(3)).map(async (c) => {
        const q = new DistributedQueue(c, '/zk/shared', { serializer: text });
        await q.start();
        return q;
      }),
    );
    await Promise.all(
      producers.map(async (q, p) => {
        for (let i = 0; i < 100; i++) await q.put(`${p}-${i}`);
      }),
    );
    await taken.until(300, 20_000);
    expect(got.size).toBe(300);
    // The consumers stop; whatever they had in flight has run: still each item exactly once.
    await Promise.all([...consumers, ...producers].map((q) => q.close()));
    expect(taken.length).toBe(300);
    expect([...got.values()].every((n) => n === 1)).toBe(true);
    const admin = await clients.open();
    expect((await admin.getChildren('/zk/shared')).children).toEqual([]);
    expect((await admin.getChildren('/zk/shared-locks')).children).toEqual([]);
    // close() awaited each removeWatches; a round trip on each consumer orders after anything else in flight.
    await roundTrip(...consumerClients);
    expect(await server.fourLetterWord('wchp')).not.toContain('/zk/shared');
  });

  it('a lock-safe consumer whose session expires mid-item loses its lock; another consumer takes the item', async () => {
    const producerClient = await clients.open();
    const producer = new DistributedQueue(producerClient, '/zk/expire', { serializer: text });
    await producer.start();
    await producer.put('fragile');
    const started = new Taken<string>();
    const doomedClient = await clients.open({ sessionTimeoutMs: 2000 });
    const doomed = new DistributedQueue(doomedClient, '/zk/expire', {
      serializer: text,
      lockPath: '/zk/expire-locks',
      consumer: (item) => {
        started.push(item);
        return new Promise(() => {});
      },
    });
    await doomed.start();
    await started.until(1, 10_000); // the doomed consumer takes the item
    const got = new Taken<string>();
    const wire = countingTransport(server.transport());
    // The other consumer finds the item locked and watches that lock.
    const watching = nextEvent(
      wire.counts.replies,
      'reply',
      (r: Request) => 'watch' in r && r.watch && r.path.startsWith('/zk/expire-locks/'),
    );
    const other = new DistributedQueue(await clients.open({ transport: wire }), '/zk/expire', {
      serializer: text,
      lockPath: '/zk/expire-locks',
      consumer: async (i) => void got.push(i),
    });
    await other.start();
    await watching;
    expect(got.items).toEqual([]);
    await expireSession(doomedClient);
    await got.until(1, 10_000); // the other consumer gets the item
    expect(got.items).toEqual(['fragile']);
    await other.close();
    await producer.close();
  });

  it('a drain of 2,000 items costs one getData per item and a few listings (counted on the wire)', async () => {
    const admin = await clients.open();
    const producer = new DistributedQueue(admin, '/zk/drain', { serializer: text });
    await producer.start();
    await Promise.all(Array.from({ length: 2000 }, (_, i) => producer.put(String(i).padStart(5, '0'))));
    const transport = countingTransport(server.transport());
    const client = createClient({ transport, sessionTimeoutMs: 5000, retryPolicy: RetryPolicies.exponentialBackoff(20, 10, 200) });
    clients.all.push(client);
    await client.start();
    transport.counts.reset();
    const got = new Taken<string>();
    const queue = new DistributedQueue(client, '/zk/drain', { serializer: text, consumer: async (i) => void got.push(i) });
    await queue.start();
    await got.until(2000, 30_000);
    await queue.close();
    expect(got.items).toEqual([...got.items].sort());
    expect(transport.counts.byType.get(OpCode.getData)).toBe(2000);
    expect(transport.counts.byType.get(OpCode.getChildren2) ?? 0).toBeLessThanOrEqual(5);
    expect(transport.counts.childNamesRead).toBeLessThanOrEqual(2200);
    await producer.close();
  });

  it('the priority queue and the simple queue on a real server', async () => {
    const client = await clients.open();
    await using pq = new DistributedPriorityQueue(client, '/zk/prio', { serializer: text });
    await pq.start();
    await pq.put('low', 9);
    await pq.put('high', -9);
    const got: string[] = [];
    for await (const item of pq) {
      got.push(item);
      if (got.length === 2) break;
    }
    expect(got).toEqual(['high', 'low']);
    await using sq = new SimpleDistributedQueue(client, '/zk/simple');
    const taking = sq.take({ timeoutMs: 5000 });
    await roundTrip(client); // its listing has been answered: it waits on an empty queue
    await new SimpleDistributedQueue(await clients.open(), '/zk/simple').offer('x');
    expect((await taking).toString()).toBe('x');
  });
});
