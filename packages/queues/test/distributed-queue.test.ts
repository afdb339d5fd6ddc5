import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CreateMode, type Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { DistributedQueue, decodeFrame, encodeFrame, CorruptItemError, type QueueSerializer } from '@tenure/queues';
import { OpCode, type Request } from '@tenure/protocol';
import { nextEvent } from '@tenure/testing';
import {
  countingTransport,
  gone,
  noWatches,
  roundTrip,
  startTestServer,
  subtree,
  Taken,
  TestClients,
  untilChangedUnder,
} from './harness.js';

const text: QueueSerializer<string> = { serialize: (s) => Buffer.from(s), deserialize: (b) => b.toString() };

describe('ItemSerializer frame', () => {
  it("matches Curator's bytes for AB, '', xyz and for an empty MultiItem", () => {
    const frame = encodeFrame([Buffer.from('AB'), Buffer.alloc(0), Buffer.from('xyz')]);
    expect(frame.toString('hex')).toBe('00010001' + '01' + '00000002' + '4142' + '01' + '00000000' + '01' + '00000003' + '78797a' + '02');
    expect(encodeFrame([]).toString('hex')).toBe('0001000102');
    expect(decodeFrame(frame, '/q').map((b) => b.toString())).toEqual(['AB', '', 'xyz']);
    expect(decodeFrame(Buffer.concat([encodeFrame([Buffer.from('a')]), Buffer.from('trailing')]), '/q').map(String)).toEqual(['a']);
  });

  it('refuses a wrong version, opcode, a negative size or truncation, naming the node', () => {
    expect(() => decodeFrame(Buffer.from('0001000201', 'hex'), '/q/queue-1')).toThrow(/\/q\/queue-1.*version/);
    expect(() => decodeFrame(Buffer.from('0001000103', 'hex'), '/q')).toThrow(CorruptItemError);
    expect(() => decodeFrame(Buffer.from('0001000101ffffffff02', 'hex'), '/q')).toThrow(/bad size/);
    expect(() => decodeFrame(Buffer.from('000100010100000005414202', 'hex'), '/q')).toThrow(/truncated/);
    expect(() => decodeFrame(Buffer.from('00010001', 'hex'), '/q')).toThrow(/truncated/);
  });
});

describe('DistributedQueue', () => {
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

  it("puts Curator's nodes: <path> persistent, queue-<10 digits> persistent sequential holding one frame", async () => {
    await using queue = new DistributedQueue(client, '/app/jobs', { serializer: text });
    await queue.start();
    const path = await queue.put('hello');
    expect(path).toMatch(/^\/app\/jobs\/queue-\d{10}$/);
    expect(server.node('/app/jobs')!.stat.ephemeralOwner).toBe(0n);
    const { data } = await client.getData(path);
    expect(data.toString('hex')).toBe(encodeFrame([Buffer.from('hello')]).toString('hex'));
    await expect(queue.putMulti(['a', 'b'])).resolves.toMatch(/queue-\d{10}$/);
  });

  it('without lockPath: items come in order, one after another, each deleted before the consumer sees it', async () => {
    const got = new Taken<string>();
    const stillThere: boolean[] = [];
    let running = 0;
    let overlap = false;
    const producer = new DistributedQueue(client, '/q', { serializer: text });
    await producer.start();
    for (let i = 0; i < 20; i++) await producer.put(`item-${i}`);
    await producer.putMulti(['m1', 'm2', 'm3']);
    const consumer = new DistributedQueue(await clients.open(), '/q', {
      serializer: text,
      consumer: async (item) => {
        if (running++ > 0) overlap = true;
        const { children } = await client.getChildren('/q');
        stillThere.push(children.length > 0 && got.length < 20 ? children.length === 23 - got.length : false);
        got.push(item);
        await client.sync('/q'); // a round trip inside the consumer: a second delivery would overlap it
        running--;
      },
    });
    await consumer.start();
    await got.until(23);
    expect(got.items).toEqual([...Array.from({ length: 20 }, (_, i) => `item-${i}`), 'm1', 'm2', 'm3']);
    expect(overlap).toBe(false);
    expect(stillThere.slice(0, 20).every((s) => !s)).toBe(true); // the item's node was gone each time
    await consumer.close();
    await producer.close();
    expect(subtree(server, '/q')).toEqual([]);
    await roundTrip(...clients.all);
    expect(noWatches(server)).toBe(true);
  });

  it('with lockPath: the item and its lock node exist while the consumer runs; both go once it resolves', async () => {
    const seen = new Taken<{ item: string; itemNodes: string[]; lockNodes: string[] }>();
    const queue = new DistributedQueue(client, '/q', {
      serializer: text,
      lockPath: '/q-locks',
      consumer: async (item) => {
        seen.push({
          item,
          itemNodes: (await client.getChildren('/q')).children,
          lockNodes: (await client.getChildren('/q-locks')).children,
        });
      },
    });
    await queue.start();
    const path = await queue.put('one');
    const name = path.slice(3);
    await seen.until(1);
    expect(seen.items[0]).toEqual({ item: 'one', itemNodes: [name], lockNodes: [name] });
    await gone(client, path); // the item, then its lock
    await gone(client, `/q-locks/${name}`);
    expect(subtree(server, '/q')).toEqual([]);
    expect(subtree(server, '/q-locks')).toEqual([]);
    expect(server.node(`/q-locks`)).toBeDefined();
    await queue.close();
    await roundTrip(...clients.all);
    expect(noWatches(server)).toBe(true);
  });

  it("errorMode 'requeue' (the default) puts a failed item back in one transaction; 'delete' drops it", async () => {
    const attempts = new Taken<string>();
    const requeue = new DistributedQueue(client, '/rq', {
      serializer: text,
      lockPath: '/rq-locks',
      consumer: async (item) => {
        attempts.push(item);
        if (attempts.length === 1) throw new Error('first try fails');
      },
    });
    await requeue.start();
    const first = await requeue.put('job');
    await attempts.until(2); // the retry
    expect(attempts.items).toEqual(['job', 'job']);
    await untilChangedUnder(client, '/rq', () => subtree(server, '/rq').length === 0); // consumed
    await requeue.close();
    expect(first).toMatch(/queue-0000000000$/);

    const dropped: string[] = [];
    const drop = new DistributedQueue(client, '/dq', {
      serializer: text,
      lockPath: '/dq-locks',
      errorMode: 'delete',
      consumer: async (item) => {
        dropped.push(item);
        throw new Error('always fails');
      },
    });
    await drop.start();
    await drop.putMulti(['a', 'b']);
    await untilChangedUnder(client, '/dq', () => subtree(server, '/dq').length === 0); // the item dropped
    expect(dropped).toEqual(['a', 'b']); // the rest of the frame is still delivered
    await roundTrip(client); // nothing is left to deliver: no request in flight brings it back
    expect(dropped).toEqual(['a', 'b']);
    await drop.close();
    expect(subtree(server, '/dq-locks')).toEqual([]);
  });

  it('a requeued multi-item frame is put back whole, under a new sequence', async () => {
    const attempts = new Taken<string>();
    let failed = false;
    const queue = new DistributedQueue(client, '/mq', {
      serializer: text,
      lockPath: '/mq-locks',
      consumer: async (item) => {
        attempts.push(item);
        if (item === 'b' && !failed) {
          failed = true;
          throw new Error('b fails once');
        }
      },
    });
    await queue.start();
    await queue.putMulti(['a', 'b', 'c']);
    await attempts.until(5); // the redelivery
    expect(attempts.items).toEqual(['a', 'b', 'a', 'b', 'c']);
    await queue.close();
  });

  it('a corrupted item is logged and deleted, and the next one is taken', async () => {
    const got = new Taken<string>();
    const errors: string[] = [];
    const logger = { trace() {}, debug() {}, info() {}, warn() {}, error: (_o: object, msg?: string) => void errors.push(msg ?? '') };
    await client.create('/cq', null);
    await client.create('/cq/queue-', Buffer.from('junk'), { mode: CreateMode.PERSISTENT_SEQUENTIAL });
    const queue = new DistributedQueue(client, '/cq', { serializer: text, logger, consumer: async (item) => void got.push(item) });
    await queue.start();
    await queue.put('good');
    await got.until(1);
    expect(got.items).toEqual(['good']);
    expect(errors).toContain('Corrupted queue item');
    expect(subtree(server, '/cq')).toEqual([]);
    await queue.close();
  });

  it('skips foreign nodes but counts them toward maxItems; put waits while full and goes on when room is made', async () => {
    await client.create('/fq', null);
    await client.create('/fq/foreign', null);
    const queue = new DistributedQueue(client, '/fq', { serializer: text, maxItems: 3 });
    await queue.start();
    await queue.put('1');
    await queue.put('2');
    let third = false;
    const putting = queue.put('3').then(() => (third = true));
    // Another put, behind it, waits out its 50 ms for room: the third one was waiting all along.
    await expect(queue.put('x', { timeoutMs: 50 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(third).toBe(false);
    await client.delete('/fq/foreign');
    await putting;
    const got: string[] = [];
    for await (const item of queue) {
      got.push(item);
      if (got.length === 3) break;
    }
    expect(got).toEqual(['1', '2', '3']);
    await queue.close();
    await roundTrip(client);
    expect(noWatches(server)).toBe(true);
  });

  it('without a consumer the queue is an async iterator; it waits for items and ends when the queue closes', async () => {
    const queue = new DistributedQueue(client, '/iq', { serializer: text });
    await queue.start();
    const got = new Taken<string>();
    const loop = (async () => {
      for await (const item of queue) got.push(item);
    })();
    await roundTrip(client); // the iterator's first listing has been answered: it waits on an empty queue
    const producer = new DistributedQueue(await clients.open(), '/iq', { serializer: text });
    await producer.start();
    await producer.put('a');
    await producer.putMulti(['b', 'c']);
    await got.until(3);
    expect(got.items).toEqual(['a', 'b', 'c']);
    await queue.close();
    await loop;
    await producer.close();
    await roundTrip(...clients.all);
    expect(noWatches(server)).toBe(true);
  });

  it('with lockPath, an iterator that breaks in the middle of an item leaves it for the next consumer', async () => {
    const queue = new DistributedQueue(client, '/bq', { serializer: text, lockPath: '/bq-locks' });
    await queue.start();
    await queue.put('kept');
    for await (const item of queue) {
      expect(item).toBe('kept');
      expect(subtree(server, '/bq-locks')).toHaveLength(1);
      break;
    }
    expect(subtree(server, '/bq-locks')).toEqual([]);
    expect(subtree(server, '/bq')).toHaveLength(1);
    const again: string[] = [];
    for await (const item of queue) {
      again.push(item);
      break;
    }
    expect(again).toEqual(['kept']);
    await queue.close();
  });

  it('close() stops a consumer mid-item (its signal aborts) and, with lockPath, leaves the item and no lock', async () => {
    const started = new Taken<string>();
    const queue = new DistributedQueue(client, '/sq', {
      serializer: text,
      lockPath: '/sq-locks',
      consumer: (item, { signal }) =>
        new Promise((_resolve, reject) => {
          started.push(item);
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        }),
    });
    await queue.start();
    await queue.put('long');
    await started.until(1); // the consumer is running
    await queue.close();
    expect(subtree(server, '/sq')).toHaveLength(1);
    expect(subtree(server, '/sq-locks')).toEqual([]);
    await expect(queue.put('late')).rejects.toMatchObject({ name: 'ClosedError' });
    await roundTrip(client);
    expect(noWatches(server)).toBe(true);
  });

  it('several consumers share the items: each taken exactly once', async () => {
    const producer = new DistributedQueue(client, '/shared', { serializer: text });
    await producer.start();
    const got = new Map<string, number>();
    const taken = new Taken<string>();
    const consumers = await Promise.all(
      (await clients.openMany(3)).map(async (c) => {
        const q = new DistributedQueue(c, '/shared', {
          serializer: text,
          lockPath: '/shared-locks',
          consumer: async (item) => {
            got.set(item, (got.get(item) ?? 0) + 1);
            taken.push(item);
          },
        });
        await q.start();
        return q;
      }),
    );
    await Promise.all(Array.from({ length: 60 }, (_, i) => producer.put(`i${i}`)));
    await taken.until(60);
    expect(got.size).toBe(60);
    // The consumers stop; whatever they had in flight has run: still each item exactly once.
    await Promise.all(consumers.map((q) => q.close()));
    expect(taken.length).toBe(60);
    expect([...got.values()].every((n) => n === 1)).toBe(true);
    await producer.close();
  });
  it("an item whose lock another consumer holds is taken as soon as that lock goes (its holder's session ended), with no new put", async () => {
    const other = await clients.open();
    const producer = new DistributedQueue(client, '/lq', { serializer: text, lockPath: '/lq-locks' });
    await producer.start();
    const path = await producer.put('held');
    await other.create(`/lq-locks/${path.slice(4)}`, null, { mode: CreateMode.EPHEMERAL });
    const got = new Taken<string>();
    const wire = countingTransport(server.transport());
    const lockPath = `/lq-locks/${path.slice(4)}`;
    // The consumer finds the item locked and watches that lock.
    const watching = nextEvent(
      wire.counts.replies,
      'reply',
      (r: Request) => r.type !== OpCode.ping && 'watch' in r && r.watch && r.path === lockPath,
    );
    const queue = new DistributedQueue(await clients.open({ transport: wire }), '/lq', {
      serializer: text,
      lockPath: '/lq-locks',
      consumer: async (item) => void got.push(item),
    });
    await queue.start();
    await watching;
    expect(got.items).toEqual([]);
    await other.close();
    await got.until(1); // the item, once its lock is gone
    await queue.close();
    await producer.close();
    await roundTrip(...clients.all.filter((c) => !c.closed));
    expect(noWatches(server)).toBe(true);
  });
});
