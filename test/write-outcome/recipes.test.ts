/**
 * The recipes' writes outside protected creates, each with its reply swallowed by a FaultProxy in
 * front of the embedded server (over TCP): what the recipe makes of it. Writes that only need a
 * node to exist (or to be gone) take the raw answer; a queue's item, whose fate matters, is never
 * guessed: OutcomeUnknownError, never a silent duplicate or a silently dropped item.
 */
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { FaultProxy, TestingEmbeddedServer } from '@tenure/testing';
import { ConnectionState, CreateMode, OutcomeUnknownError, RetryPolicies, createClient, type Client } from '@tenure/client';
import { SimpleDistributedQueue } from '@tenure/queues';
import { DistributedBarrier } from '@tenure/barriers';
import { PersistentNode } from '@tenure/nodes';
import { AtomicLong, OutcomeUnknownError as CountersOutcomeUnknownError } from '@tenure/counters';

let server: TestingEmbeddedServer;
let proxy: FaultProxy;
let observer: Client;
const clients: Client[] = [];
const closers: Array<() => Promise<void>> = [];

async function open(connectString: string): Promise<Client> {
  const client = createClient({
    connectString,
    sessionTimeoutMs: 10_000,
    connectionTimeoutMs: 5000,
    retryPolicy: RetryPolicies.exponentialBackoff(20, 5, 200),
  });
  clients.push(client);
  await client.start();
  return client;
}

async function writer(): Promise<Client> {
  proxy = await FaultProxy.start(server.connectString);
  return open(proxy.connectString);
}

beforeAll(async () => {
  server = await TestingEmbeddedServer.start();
  observer = await open(server.connectString);
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await Promise.all(clients.splice(1).map((c) => c.close()));
  await proxy?.close();
});
afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server.close();
});

describe('recipes after a lost reply', () => {
  it('SimpleDistributedQueue.offer: OutcomeUnknownError, and no second item (a blind retry would make one)', async () => {
    const c = await writer();
    const q = new SimpleDistributedQueue(c, '/q1');
    closers.push(() => q.close());
    await q.offer('first');
    const dropped = proxy.dropReply({ op: 'create2' });
    await expect(q.offer('second')).rejects.toBeInstanceOf(OutcomeUnknownError);
    expect((await dropped).err).toBe(0);
    expect((await observer.getChildren('/q1')).children).toHaveLength(2);
  });

  it('SimpleDistributedQueue.take whose delete reply is lost: OutcomeUnknownError, not a silent skip to the next item', async () => {
    const c = await writer();
    const q = new SimpleDistributedQueue(c, '/q2');
    closers.push(() => q.close());
    await q.offer('a');
    await q.offer('b');
    const dropped = proxy.dropReply({ op: 'delete' });
    const err = await q.take({ timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((await dropped).err).toBe(0);
    // The queue goes on: the next take gives the next item.
    expect((await q.take({ timeoutMs: 5000 })).toString()).toBe('b');
  });

  it('DistributedBarrier.setBarrier: resolves (the barrier is up, whoever raised it)', async () => {
    const c = await writer();
    await observer.create('/b1', null); // so that the first create is the one that lands
    const b = new DistributedBarrier(c, '/b1/barrier');
    closers.push(() => b.close());
    const dropped = proxy.dropReply({ op: 'create2', path: '/b1/barrier' });
    await b.setBarrier();
    expect((await dropped).err).toBe(0);
    expect(await observer.exists('/b1/barrier')).not.toBeNull();
  });

  it('PersistentNode (persistent, fixed name): in place, created once, no error', async () => {
    const c = await writer();
    await observer.create('/n1', null);
    const node = new PersistentNode(c, { path: '/n1/node', mode: CreateMode.PERSISTENT, data: 'd' });
    const errors: unknown[] = [];
    node.on('error', (e) => void errors.push(e));
    closers.push(() => node.close());
    const dropped = proxy.dropReply({ op: 'create2', path: '/n1/node' });
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 5000 });
    expect((await dropped).err).toBe(0);
    expect((await observer.getData('/n1/node')).data.toString()).toBe('d');
    expect(errors).toEqual([]);
  });

  it("AtomicLong.increment: the counters' OutcomeUnknownError is the client's, and the value moved once", async () => {
    expect(CountersOutcomeUnknownError).toBe(OutcomeUnknownError);
    const c = await writer();
    const n = new AtomicLong(c, '/c1');
    closers.push(() => n.close());
    await n.forceSet(10n);
    const reconnected = c.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    const dropped = proxy.dropReply({ op: 'setData', path: '/c1' });
    const err = await n.increment().catch((e: unknown) => e);
    await reconnected;
    expect((await dropped).err).toBe(0);
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err).toMatchObject({ code: 'OUTCOME_UNKNOWN', operation: 'increment', path: '/c1' });
    expect((await n.get()).preValue).toBe(11n);
  });
});
