/** KazooLock on the embedded server: kazoo's node names and order, exclusion, fencing, waits that give up. */
import { afterEach, describe, expect, it } from 'vitest';
import { CreateMode, TimeoutError } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { KazooLock, kazooContenders } from '../src/index.js';
import { Clients, ephemeralsUnder, eventually, roundTrip, startServer } from './harness.js';

let server: EmbeddedServer;
let clients: Clients;
function setup(): void {
  server = startServer();
  clients = new Clients(() => server.transport());
}
afterEach(async () => {
  await clients.closeAll();
  await server.close();
});

const noWatches = (): boolean => server.sessions().every((s) => s.watches === 0);

describe('KazooLock', () => {
  it("lays out kazoo's nodes: <uuid hex>__lock__<seq>, the identifier as data, a persistent parent, the czxid as token", async () => {
    setup();
    const c = await clients.open();
    const lock = new KazooLock(c, '/k/layout', { identifier: 'worker-1' });
    const lease = await lock.acquire();
    expect(lease.path).toMatch(/^\/k\/layout\/[0-9a-f]{32}__lock__\d{10}$/);
    const node = server.node(lease.path)!;
    expect(node.data?.toString()).toBe('worker-1');
    expect(node.stat.ephemeralOwner).toBe(c.sessionId);
    expect(node.stat.czxid).toBe(lease.fencingToken);
    // kazoo's ensure_path: persistent, so it is never reaped between kazoo's ensure_path and its create.
    expect(server.node('/k/layout')!.stat.ephemeralOwner).toBe(0n);
    expect(await lock.contenders()).toEqual(['worker-1']);
    await lease.release();
    await lock.close();
    expect(server.node('/k/layout')).toBeDefined();
    expect(ephemeralsUnder(server, '/k')).toEqual([]);
  });

  it('orders by the sequence after __lock__ and ignores other children (a lease record, Curator lock- nodes)', () => {
    const children = [
      'lease_holder',
      'bbbb__lock__0000000003',
      '_c_0e5c3a7e-6c6b-4f1a-9b65-0d2f5e1f4a11-lock-0000000000',
      'aaaa__lock__0000000007',
      'cccc__lock__0000000001',
    ];
    expect(kazooContenders(children)).toEqual(['cccc__lock__0000000001', 'bbbb__lock__0000000003', 'aaaa__lock__0000000007']);
  });

  it('a lease_holder child does not stand in the queue', async () => {
    setup();
    const c = await clients.open();
    await c.create('/k/with-record/lease_holder', '{}', { createParents: true });
    const lease = await new KazooLock(c, '/k/with-record').acquire({ timeoutMs: 2000 });
    expect(lease.isHeld()).toBe(true);
    await lease.release();
  });

  it("a create whose reply was lost leaves a duplicate of ours: kazoo's uuid trick deletes it instead of waiting on it", async () => {
    setup();
    const c = await clients.open();
    await c.create('/k/lost', null, { createParents: true });
    // The create is applied, then the connection drops before its reply: the client creates again.
    server.loseNextReply(c.sessionId);
    const lease = await new KazooLock(c, '/k/lost', { identifier: 'x' }).acquire({ timeoutMs: 5000 });
    expect(lease.isHeld()).toBe(true);
    // Ours is the second create (the first, sequence 0, is the duplicate ahead of us).
    expect(lease.path).toMatch(/__lock__0000000001$/);
    await eventually(() => ephemeralsUnder(server, '/k/lost').length === 1);
    expect(ephemeralsUnder(server, '/k/lost')).toEqual([lease.path]);
    await lease.release();
    expect(ephemeralsUnder(server, '/k/lost')).toEqual([]);
  });

  it('5 clients x 20 unsafe increments inside the lock come to exactly 100, with rising tokens', async () => {
    setup();
    const admin = await clients.open();
    await admin.create('/counter', '0');
    const workers = await clients.openMany(5);
    const tokens: bigint[] = [];
    await Promise.all(
      workers.map(async (c, i) => {
        const lock = new KazooLock(c, '/k/counter', { identifier: `w${i}` });
        for (let n = 0; n < 20; n++) {
          await using lease = await lock.acquire();
          tokens.push(lease.fencingToken);
          const { data } = await c.getData('/counter');
          await c.sync('/counter');
          await c.setData('/counter', String(Number(data.toString()) + 1));
        }
      }),
    );
    expect((await admin.getData('/counter')).data.toString()).toBe('100');
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]! > tokens[i - 1]!).toBe(true);
    expect(ephemeralsUnder(server, '/k')).toEqual([]);
    await roundTrip(admin, ...workers);
    expect(noWatches()).toBe(true);
  });

  it('a waiter behind a node kazoo made waits for it, and a timed-out waiter leaves no node and no watch', async () => {
    setup();
    const [kazooLike, c] = await clients.openMany(2);
    // A contender as kazoo writes it.
    await kazooLike!.create('/k/foreign', null, { createParents: true });
    const foreign = await kazooLike!.create('/k/foreign/0123456789abcdef0123456789abcdef__lock__', 'kazoo', {
      mode: CreateMode.EPHEMERAL_SEQUENTIAL,
    });
    const lock = new KazooLock(c!, '/k/foreign', { identifier: 'tenure' });
    await expect(lock.acquire({ timeoutMs: 200 })).rejects.toBeInstanceOf(TimeoutError);
    expect(ephemeralsUnder(server, '/k/foreign')).toEqual([foreign.path]);
    await roundTrip(c!);
    expect(server.watchCounts().get(c!.sessionId) ?? 0).toBe(0);
    const queued = clients.waiting(c!, '/k/foreign');
    const waiting = lock.acquire();
    await queued;
    expect(await lock.contenders()).toEqual(['kazoo', 'tenure']);
    await kazooLike!.delete(foreign.path);
    const lease = await waiting;
    expect(lease.isHeld()).toBe(true);
    await lock.close();
    expect(lease.isHeld()).toBe(false);
    expect(ephemeralsUnder(server, '/k/foreign')).toEqual([]);
  });
});
