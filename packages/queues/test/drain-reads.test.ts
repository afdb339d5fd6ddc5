/**
 * The performance promise: one consumer keeps one children watch and walks one listing, so draining
 * n items costs O(n) requests and O(n) child names read, not O(n²). Requests are counted on the
 * consumer's connection (a transport wrapper that counts and forwards; the server is real).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CreateMode, createClient, RetryPolicies, type Client } from '@tenure/client';
import { OpCode } from '@tenure/protocol';
import type { EmbeddedServer } from '@tenure/server';
import { DistributedQueue, SimpleDistributedQueue, encodeFrame } from '@tenure/queues';
import { countingTransport, startTestServer, TestClients, type RequestCounts } from './harness.js';

async function fill(client: Client, path: string, prefix: string, n: number, data: (i: number) => Buffer): Promise<void> {
  await client.create(path, null).catch(() => {});
  for (let i = 0; i < n; i += 500) {
    const tx = client.transaction();
    for (let j = i; j < Math.min(n, i + 500); j++) tx.create(`${path}/${prefix}`, data(j), { mode: CreateMode.PERSISTENT_SEQUENTIAL });
    await tx.commit();
  }
}

describe('draining costs O(n) reads', () => {
  let server: EmbeddedServer;
  let clients: TestClients;
  let admin: Client;
  beforeEach(async () => {
    server = startTestServer();
    clients = new TestClients(() => server.transport());
    admin = await clients.open();
  });
  afterEach(async () => {
    await clients.closeAll();
    await server.close();
  });

  async function countingClient(): Promise<{ client: Client; counts: RequestCounts }> {
    const transport = countingTransport(server.transport());
    const client = createClient({ transport, sessionTimeoutMs: 5000, retryPolicy: RetryPolicies.exponentialBackoff(20, 10, 200) });
    clients.all.push(client);
    await client.start();
    transport.counts.reset();
    return { client, counts: transport.counts };
  }

  async function drainQueue(n: number): Promise<RequestCounts> {
    const path = `/drain-${n}`;
    await fill(admin, path, 'queue-', n, (i) => encodeFrame([Buffer.from(String(i))]));
    const { client, counts } = await countingClient();
    let got = 0;
    let inOrder = true;
    let drained!: () => void;
    const all = new Promise<void>((resolve) => (drained = resolve));
    const queue = new DistributedQueue(client, path, {
      consumer: async (item) => {
        if (Number(item.toString()) !== got) inOrder = false;
        if (++got === n) drained();
      },
    });
    await queue.start();
    await all; // the consumer took the n-th item
    await queue.close();
    expect(inOrder).toBe(true);
    return counts;
  }

  it('a DistributedQueue of 10,000 items drains with reads growing linearly (1,000 vs 10,000)', async () => {
    const small = await drainQueue(1000);
    const large = await drainQueue(10_000);
    const reads = (c: RequestCounts): number =>
      (c.byType.get(OpCode.getData) ?? 0) + (c.byType.get(OpCode.getChildren2) ?? 0) + (c.byType.get(OpCode.exists) ?? 0);
    // One getData per item, a handful of listings.
    expect(large.byType.get(OpCode.getData)).toBe(10_000);
    expect(large.byType.get(OpCode.getChildren2) ?? 0).toBeLessThanOrEqual(5);
    expect(reads(large)).toBeLessThanOrEqual(10_005);
    expect(reads(large) / reads(small)).toBeLessThan(10.1);
    // Every name is read about once (the first listing), not once per item.
    expect(large.childNamesRead).toBeLessThanOrEqual(10_000 * 1.1);
    expect(large.childNamesRead / Math.max(1, small.childNamesRead)).toBeLessThan(10.5);
    expect(large.byType.get(OpCode.delete)).toBe(10_000);
  }, 120_000);

  it('a SimpleDistributedQueue of 10,000 items is taken with O(n) reads', async () => {
    await fill(admin, '/simple', 'qn-', 10_000, (i) => Buffer.from(String(i)));
    const { client, counts } = await countingClient();
    await using queue = new SimpleDistributedQueue(client, '/simple');
    for (let i = 0; i < 10_000; i++) expect((await queue.take()).toString()).toBe(String(i));
    expect(await queue.poll()).toBeNull();
    expect(counts.byType.get(OpCode.getData)).toBe(10_000);
    expect(counts.byType.get(OpCode.getChildren2) ?? 0).toBeLessThanOrEqual(5);
    expect(counts.childNamesRead).toBeLessThanOrEqual(11_000);
  }, 120_000);
});
