/**
 * A named representative of every recipe package, unchanged, over @tenure/etcd's in-process
 * transport: locks (Mutex exclusion and rising fencing tokens), leader (LeaderLatch hand-over),
 * group (GroupMember views), nodes (PersistentNode, ephemeral sequential), cache (TreeCache),
 * barriers (DoubleBarrier), counters (AtomicLong, SharedCount), queues (SimpleDistributedQueue)
 * and discovery (ServiceDiscovery + ServiceProvider). Two transports over one etcd and prefix
 * stand for two processes, so the recipes coordinate through etcd, not through one mirror.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CreateMode } from '@tenure/client';
import { DoubleBarrier } from '@tenure/barriers';
import { TreeCache } from '@tenure/cache';
import { AtomicLong, SharedCount } from '@tenure/counters';
import { ServiceDiscovery } from '@tenure/discovery';
import { etcdTransport, type EtcdTransport } from '@tenure/etcd';
import { GroupMember } from '@tenure/group';
import { LeaderLatch } from '@tenure/leader';
import { Mutex } from '@tenure/locks';
import { PersistentNode } from '@tenure/nodes';
import { SimpleDistributedQueue } from '@tenure/queues';
import { TestClients, TestingEtcd } from '@tenure/testing';

describe('recipes over etcdTransport', () => {
  let etcd: TestingEtcd;
  let a: EtcdTransport;
  let b: EtcdTransport;
  let clientsA: TestClients;
  let clientsB: TestClients;

  beforeAll(async () => {
    etcd = await TestingEtcd.start();
    const opts = { prefix: '/recipes', server: { tickMs: 1000, containerCheckIntervalMs: 200 } };
    a = etcdTransport(etcd.endpoint, opts);
    b = etcdTransport(etcd.endpoint, opts);
    clientsA = new TestClients(() => a);
    clientsB = new TestClients(() => b);
  });
  afterEach(async () => {
    await Promise.all([clientsA.closeAll(), clientsB.closeAll()]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await etcd?.close();
  });

  it('locks: 4 clients on two transports × 10 unsafe increments under a Mutex come to 40, fencing tokens rise', async () => {
    const admin = await clientsA.open();
    await admin.create('/counter', '0');
    const workers = [...(await clientsA.openMany(2)), ...(await clientsB.openMany(2))];
    const tokens: bigint[] = [];
    await Promise.all(
      workers.map(async (c) => {
        const mutex = new Mutex(c, '/locks/counter');
        for (let i = 0; i < 10; i++) {
          await using lease = await mutex.acquire({ timeoutMs: 30_000 });
          tokens.push(lease.fencingToken);
          const { data } = await c.getData('/counter');
          await c.setData('/counter', String(Number(data.toString()) + 1));
        }
        await mutex.close();
      }),
    );
    expect((await admin.getData('/counter')).data.toString()).toBe('40');
    expect(tokens).toEqual([...tokens].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
    expect(new Set(tokens).size).toBe(40);
    await admin.sync('/locks/counter');
    expect((await admin.getChildren('/locks/counter')).children).toEqual([]);
  });

  it('leader: a LeaderLatch on one transport hands over to one on the other when it closes', async () => {
    const [ca, cb] = [await clientsA.open(), await clientsB.open()];
    const first = new LeaderLatch(ca, '/election/etcd', { id: 'a' });
    await first.start();
    await first.await({ timeoutMs: 10_000 });
    const second = new LeaderLatch(cb, '/election/etcd', { id: 'b' });
    await second.start();
    expect(second.hasLeadership()).toBe(false);
    const token = first.leadership!.fencingToken;
    await first.close();
    await second.await({ timeoutMs: 10_000 });
    expect(second.leadership!.fencingToken).toBeGreaterThan(token);
    expect((await second.getLeader())?.id).toBe('b');
    await second.close();
  });

  it('group: two GroupMembers see each other, and one leaving', async () => {
    const [ca, cb] = [await clientsA.open(), await clientsB.open()];
    const m1 = new GroupMember(ca, '/group/etcd', 'one', 'p1');
    const m2 = new GroupMember(cb, '/group/etcd', 'two', 'p2');
    await m1.start();
    await m2.start();
    await m1.waitForJoined({ timeoutMs: 5000 });
    await m2.waitForJoined({ timeoutMs: 5000 });
    for await (const members of m1) if (members.size === 2) break;
    expect(m1.getCurrentMembers().get('two')?.toString()).toBe('p2');
    await m2.close();
    for await (const members of m1) if (members.size === 1) break;
    expect([...m1.getCurrentMembers().keys()]).toEqual(['one']);
    await m1.close();
  });

  it('nodes + cache: a PersistentNode (ephemeral sequential, protected) appears in a TreeCache on the other transport, and goes', async () => {
    const [ca, cb] = [await clientsA.open(), await clientsB.open()];
    await ca.create('/svc', '');
    await using cache = new TreeCache(cb, '/svc');
    await cache.start({ timeoutMs: 10_000 });
    const created = new Promise<string>((resolve) => cache.on('created', (n) => n.path !== '/svc' && resolve(n.path)));
    const node = new PersistentNode(ca, { path: '/svc/instance-', mode: CreateMode.EPHEMERAL_SEQUENTIAL, protection: true, data: 'x' });
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 5000 });
    const name = node.actualPath!.slice('/svc/'.length);
    expect(name).toMatch(/^_c_.*-instance-\d{10}$/);
    expect(await created).toBe(node.actualPath);
    expect(cache.get(node.actualPath!)?.data?.toString()).toBe('x');
    expect(cache.get(node.actualPath!)?.stat.ephemeralOwner).toBe(ca.sessionId);
    const path = node.actualPath!;
    const deleted = new Promise<string>((resolve) => cache.on('deleted', (n) => resolve(n.path)));
    await node.close();
    expect(await deleted).toBe(path);
    expect(cache.children('/svc')).toEqual([]);
  });

  it('barriers: a DoubleBarrier of 3 over two transports enters and leaves together', async () => {
    const clients = [await clientsA.open(), await clientsB.open(), await clientsA.open()];
    const barriers = clients.map((c) => new DoubleBarrier(c, '/barrier/etcd', 3));
    await Promise.all(barriers.map((x) => x.enter({ timeoutMs: 15_000 })));
    await Promise.all(barriers.map((x) => x.leave({ timeoutMs: 15_000 })));
    await Promise.all(barriers.map((x) => x.close()));
  });

  it('counters: AtomicLong increments from both transports are each applied once; SharedCount sees the other side', async () => {
    const [ca, cb] = [await clientsA.open(), await clientsB.open()];
    const la = new AtomicLong(ca, '/counters/etcd');
    const lb = new AtomicLong(cb, '/counters/etcd');
    const results = await Promise.all([...Array(10)].map((_, i) => (i % 2 === 0 ? la : lb).increment()));
    expect(results.every((r) => r.succeeded)).toBe(true);
    await ca.sync('/counters/etcd'); // the other transport's last increment may trail by a moment
    expect((await la.get()).postValue).toBe(10n);
    const sa = new SharedCount(ca, '/counters/shared', 1);
    const sb = new SharedCount(cb, '/counters/shared', 1);
    await sa.start();
    await sb.start();
    const changed = new Promise<number>((resolve) => sb.on('change', ({ value }) => value === 7 && resolve(value)));
    expect(await sa.trySetCount(7, sa.getVersionedValue())).toBe(true);
    expect(await changed).toBe(7);
    await Promise.all([sa.close(), sb.close(), la.close(), lb.close()]);
  });

  it('queues: items offered on one transport are taken once, in order, on the other', async () => {
    const [ca, cb] = [await clientsA.open(), await clientsB.open()];
    const producer = new SimpleDistributedQueue(ca, '/queue/etcd');
    const consumer = new SimpleDistributedQueue(cb, '/queue/etcd');
    for (const item of ['1', '2', '3']) await producer.offer(item);
    const taken: string[] = [];
    for (let i = 0; i < 3; i++) taken.push((await consumer.take({ timeoutMs: 5000 })).toString());
    expect(taken).toEqual(['1', '2', '3']);
    expect(await consumer.poll()).toBeNull();
    await Promise.all([producer.close(), consumer.close()]);
  });

  it('discovery: an instance registered on one transport is found by a provider on the other', async () => {
    const [ca, cb] = [await clientsA.open(), await clientsB.open()];
    const reg = new ServiceDiscovery(ca);
    await reg.start();
    await reg.registerService({ name: 'orders', address: '10.0.0.7', port: 8080 });
    const find = new ServiceDiscovery(cb);
    await find.start();
    // As on a ZooKeeper ensemble, another server's view may trail a write by a moment: a reader
    // that learned of the write out of band syncs first.
    await cb.sync('/services/orders');
    expect((await find.queryForInstances('orders')).map((i) => i.address)).toEqual(['10.0.0.7']);
    const provider = find.serviceProvider('orders');
    await provider.start();
    expect(provider.getInstance()?.port).toBe(8080);
    await find.close();
    await reg.close();
  });
});
