import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, type Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import {
  DistributedDelayQueue,
  DistributedIdQueue,
  DistributedPriorityQueue,
  SimpleDistributedQueue,
  delayName,
  epochOf,
  idOf,
  priorityName,
  type QueueSerializer,
} from '@tenure/queues';
import { ManualClock } from '@tenure/testing';
import { noWatches, roundTrip, startTestServer, subtree, Taken, TestClients } from './harness.js';

const text: QueueSerializer<string> = { serialize: (s) => Buffer.from(s), deserialize: (b) => b.toString() };

describe("Curator's name encodings", () => {
  it('priority: S + 8 uppercase hex of the 32-bit two’s complement', () => {
    expect(priorityName(5)).toBe('queue-100000005');
    expect(priorityName(-1)).toBe('queue-0FFFFFFFF');
    expect(priorityName(-0x80000000)).toBe('queue-080000000');
    expect(priorityName(0x7fffffff)).toBe('queue-17FFFFFFF');
    expect(() => priorityName(1.5)).toThrow(InvalidArgumentError);
    expect(() => priorityName(2 ** 31)).toThrow(InvalidArgumentError);
  });

  it('delay: |uppercase hex epoch, at least 8 digits|; the epoch is read between the last two |', () => {
    expect(delayName(1700000000000)).toBe('queue-|18BCFE56800|');
    expect(delayName(255)).toBe('queue-|000000FF|');
    expect(epochOf('queue-|18BCFE56800|0000000009')).toBe(1700000000000);
    expect(epochOf('queue-|18bcfe56800|0000000009')).toBe(1700000000000);
    expect(epochOf('queue-0000000009')).toBe(0);
    expect(epochOf('queue-|zz|0000000009')).toBe(0);
    expect(() => delayName(0)).toThrow(InvalidArgumentError);
  });

  it('id: the text between the first two |', () => {
    expect(idOf('queue-|order_42|0000000010')).toBe('order_42');
    expect(idOf('queue-0000000010')).toBe('queue-0000000010');
  });
});

describe('the other queues', () => {
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

  it('DistributedPriorityQueue: lower numbers first, FIFO within a priority', async () => {
    await using queue = new DistributedPriorityQueue(client, '/pq', { serializer: text });
    await queue.start();
    for (const [item, p] of [
      ['c', 10],
      ['a', -5],
      ['d', 10],
      ['b', 0],
      ['z', 2 ** 31 - 1],
      ['first', -(2 ** 31)],
    ] as const)
      await queue.put(item, p);
    expect((await client.getChildren('/pq')).children.sort()[0]).toMatch(/^queue-080000000\d{10}$/);
    const got: string[] = [];
    for await (const item of queue) {
      got.push(item);
      if (got.length === 6) break;
    }
    expect(got).toEqual(['first', 'a', 'b', 'c', 'd', 'z']);
  });

  it('DistributedPriorityQueue: an urgent item put during a long batch is taken after minItemsBeforeRefresh items', async () => {
    const got = new Taken<string>();
    const producer = new DistributedPriorityQueue(client, '/pq2', { serializer: text });
    await producer.start();
    for (let i = 0; i < 20; i++) await producer.put(`low-${i}`, 100);
    const consumerClient = await clients.open();
    const queue = new DistributedPriorityQueue(consumerClient, '/pq2', {
      serializer: text,
      minItemsBeforeRefresh: 2,
      consumer: async (item) => {
        got.push(item);
        if (got.length === 3) await producer.put('urgent', 1);
        await consumerClient.sync('/pq2'); // some work: a round trip per item
      },
    });
    await queue.start();
    await got.until(21);
    expect(got.items.indexOf('urgent')).toBeLessThan(8);
    await queue.close();
    await producer.close();
  });

  it('DistributedDelayQueue: an item is taken no earlier than its time; the wait is cleared on close', async () => {
    // The due times and the queue's wait are on one manual clock, so each item is taken at exactly its time.
    const clock = new ManualClock();
    await clients.closeAll();
    await server.close();
    server = startTestServer({ clock });
    clients = new TestClients(() => server.transport());
    const c = await clients.open({ clock });
    const got = new Taken<{ item: string; at: number }>();
    const queue = new DistributedDelayQueue(c, '/dq', {
      serializer: text,
      now: () => clock.now(),
      consumer: async (item) => void got.push({ item, at: clock.now() }),
    });
    await queue.start();
    const now = clock.now();
    await queue.put('later', now + 400);
    await queue.put('soon', now + 150);
    await queue.put('past', now - 1000);
    await got.until(1);
    await clock.advance(149);
    expect(got.items.map((g) => g.item)).toEqual(['past']); // nothing before its time
    await clock.advance(1);
    await got.until(2);
    await clock.advance(249);
    expect(got.length).toBe(2);
    await clock.advance(1);
    await got.until(3);
    expect(got.items.map((g) => g.item)).toEqual(['past', 'soon', 'later']);
    expect(got.items[1]!.at).toBe(now + 150);
    expect(got.items[2]!.at).toBe(now + 400);
    // Waiting for a far item: close() ends that wait (no timer left).
    await queue.put('far', clock.now() + 60_000);
    await clock.advance(1_000); // the queue has seen it and waits for its time
    expect(got.length).toBe(3);
    const armed = clock.pending;
    await queue.close();
    expect(clock.pending).toBe(armed - 1); // its wait's timer, cleared
    await clock.advance(60_000);
    expect(got.length).toBe(3);
    expect(subtree(server, '/dq')).toHaveLength(1);
    await roundTrip(c);
    expect(noWatches(server)).toBe(true);
  });

  it('DistributedIdQueue: FIFO over ids; remove(id) deletes every item with that exact id', async () => {
    await using queue = new DistributedIdQueue(client, '/idq', { serializer: text });
    await queue.start();
    await queue.put('1', 'b');
    await queue.put('2', 'a/x');
    await queue.put('3', 'b');
    await queue.put('4', 'c');
    expect((await client.getChildren('/idq')).children.sort()).toEqual(
      expect.arrayContaining([expect.stringMatching(/^queue-\|a_x\|\d{10}$/), expect.stringMatching(/^queue-\|b\|\d{10}$/)]),
    );
    expect(await queue.remove('b')).toBe(2);
    expect(await queue.remove('a/x')).toBe(0); // not escaped, as in Curator
    expect(await queue.remove('a_x')).toBe(1);
    const got: string[] = [];
    for await (const item of queue) {
      got.push(item);
      break;
    }
    expect(got).toEqual(['4']);
    expect(() => new DistributedIdQueue(client, '/bad|path')).toThrow(InvalidArgumentError);
  });

  it('DistributedIdQueue with lockPath: a failed item is re-queued under its id', async () => {
    const attempts = new Taken<string>();
    let checked!: () => void;
    const check = new Promise<void>((resolve) => (checked = resolve));
    const queue = new DistributedIdQueue(client, '/idr', {
      serializer: text,
      lockPath: '/idr-locks',
      consumer: async (item) => {
        attempts.push(item);
        if (attempts.length === 1) {
          throw new Error('once');
        }
        await check; // the retry holds the item until the test has looked at it
      },
    });
    await queue.start();
    await queue.put('x', 'job-7');
    await attempts.until(2); // the retry
    expect((await client.getChildren('/idr')).children).toEqual([expect.stringMatching(/^queue-\|job-7\|\d{10}$/)]);
    checked();
    await queue.close();
  });

  it('SimpleDistributedQueue: offer, peek, element, poll, remove, take; raw bytes under qn-', async () => {
    await using queue = new SimpleDistributedQueue(client, '/sq');
    expect(await queue.peek()).toBeNull();
    expect(await queue.poll()).toBeNull();
    await expect(queue.element()).rejects.toMatchObject({ name: 'NoSuchElementError' });
    await expect(queue.remove()).rejects.toMatchObject({ name: 'NoSuchElementError' });
    const path = await queue.offer(Buffer.from('one'));
    expect(path).toMatch(/^\/sq\/qn-\d{10}$/);
    expect((await client.getData(path)).data.toString()).toBe('one');
    await queue.offer('two');
    expect((await queue.peek())!.toString()).toBe('one');
    expect((await queue.element()).toString()).toBe('one');
    expect((await queue.poll())!.toString()).toBe('one');
    expect((await queue.remove()).toString()).toBe('two');
    await expect(queue.take({ timeoutMs: 50 })).rejects.toMatchObject({ name: 'TimeoutError' });
    const taking = queue.take();
    await roundTrip(client); // its listing has been answered: it waits on an empty queue
    const other = new SimpleDistributedQueue(await clients.open(), '/sq');
    await other.offer('three');
    expect((await taking).toString()).toBe('three');
    const ac = new AbortController();
    const aborted = queue.take({ signal: ac.signal });
    ac.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    await other.close();
  });

  it('SimpleDistributedQueue: concurrent takers get each item exactly once; close leaves no watch', async () => {
    const producer = new SimpleDistributedQueue(client, '/sq2');
    const takers = (await clients.openMany(3)).map((c) => new SimpleDistributedQueue(c, '/sq2'));
    const got = new Taken<string>();
    const taking = takers.map(async (q) => {
      for (;;) {
        const item = await q.take().catch(() => null);
        if (item === null) return;
        got.push(item.toString());
      }
    });
    for (let i = 0; i < 40; i++) await producer.offer(String(i));
    await got.until(40);
    await Promise.all(takers.map((q) => q.close()));
    await Promise.all(taking);
    expect(new Set(got.items).size).toBe(40);
    await producer.close();
    await roundTrip(...clients.all);
    expect(noWatches(server)).toBe(true);
    await expect(producer.offer('x')).rejects.toMatchObject({ name: 'ClosedError' });
  });
});
