/**
 * The recipe inspection against the embedded server over TCP, with Tenure's recipes holding real
 * nodes: a Mutex with a holder and a waiter, a ReadWriteLock, a Semaphore, a LeaderLatch, a
 * LeaderSelector, a GroupMember, a discovery instance, queues; and sessions from `cons`/`dump`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CreateMode, createClient, RetryPolicies, type Client } from '@tenure/client';
import { GroupMember } from '@tenure/group';
import { LeaderLatch, LeaderSelector } from '@tenure/leader';
import { Mutex, ReadWriteLock, Semaphore, type Lease } from '@tenure/locks';
import { childrenUntil, eventually, TestingEmbeddedServer } from '@tenure/testing';
import { decodeData, sessionHex, inspectRecipes, inspectSessions, inspectWithWalk, parseCons, parseDump, serversOf } from '../src/index.js';

describe('recipe inspection (embedded server over TCP)', () => {
  let server: TestingEmbeddedServer;
  const clients: Client[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];

  async function open(): Promise<Client> {
    const c = createClient({
      connectString: server.connectString,
      sessionTimeoutMs: 4000,
      retryPolicy: RetryPolicies.exponentialBackoff(20, 5, 200),
    });
    clients.push(c);
    await c.start();
    return c;
  }

  beforeAll(async () => {
    server = await TestingEmbeddedServer.start();
  });
  afterEach(async () => {
    for (const f of cleanups.splice(0).reverse()) await f().catch(() => {});
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(() => server.close());

  it('decodes data as UTF-8 text or marked base64', () => {
    expect(decodeData(Buffer.from('holder-A'))).toEqual({ encoding: 'utf8', value: 'holder-A', bytes: 8 });
    expect(decodeData(Buffer.from([0xff, 0xfe]))).toEqual({ encoding: 'base64', value: '//4=', bytes: 2 });
    expect(decodeData(Buffer.from([0, 0, 0, 5])).encoding).toBe('base64');
    expect(decodeData(Buffer.alloc(0))).toEqual({ encoding: 'utf8', value: '', bytes: 0 });
  });

  it('parses connect strings into servers', () => {
    expect(serversOf('a:1,b/chroot')).toEqual(['a:1', 'b:2181']);
    expect(serversOf('[::1]:2182,::1')).toEqual(['[::1]:2182', '[::1]:2181']);
  });

  it('finds a mutex holder and its waiters in queue order, with session, data, token and held-for', async () => {
    const [a, b, c] = [await open(), await open(), await open()];
    const lease = await new Mutex(a, '/locks/orders', { data: 'holder-A' }).acquire();
    cleanups.push(() => lease.release());
    const waitB = new Mutex(b, '/locks/orders', { data: 'waiter-B' }).acquire();
    waitB.catch(() => {});
    const admin = await open();
    await childrenUntil(admin, '/locks/orders', (kids) => kids.length === 2);
    const waitC = new Mutex(c, '/locks/orders', { data: Buffer.from([0xc3, 0x28]) }).acquire();
    waitC.catch(() => {});
    await childrenUntil(admin, '/locks/orders', (kids) => kids.length === 3);

    const report = await inspectRecipes(admin, { path: '/locks' });
    expect(report.locks).toHaveLength(1);
    const lock = report.locks[0]!;
    expect(lock.path).toBe('/locks/orders');
    expect(lock.kind).toBe('mutex');
    expect(lock.holder?.data).toEqual({ encoding: 'utf8', value: 'holder-A', bytes: 8 });
    expect(lock.holder?.sessionId).toBe(sessionHex(a.sessionId));
    expect(lock.holder?.fencingToken).toBe(lease.fencingToken.toString());
    expect(lock.holder?.name).toMatch(/^_c_[0-9a-f-]{36}-lock-\d{10}$/);
    expect(lock.heldForMs).toBeGreaterThanOrEqual(0);
    expect(lock.waiters.map((w) => w.data.value)).toEqual(['waiter-B', Buffer.from([0xc3, 0x28]).toString('base64')]);
    expect(lock.waiters[1]!.data.encoding).toBe('base64');
    expect(lock.waiters.map((w) => w.sessionId)).toEqual([b, c].map((x) => sessionHex(x.sessionId)));
    // A LeaderSelector has the mutex layout: the same path shows as an election too.
    expect(report.elections.map((e) => [e.path, e.kind, e.leader?.id])).toEqual([['/locks/orders', 'leader-selector', 'holder-A']]);

    await lease.release();
    const leaseB = await waitB;
    cleanups.push(() => leaseB.release());
    const after = await inspectRecipes(admin, { path: '/locks/orders' });
    expect(after.locks[0]!.holder?.data.value).toBe('waiter-B');
    expect(after.locks[0]!.waiters).toHaveLength(1);
    await leaseB.release();
    await (await waitC).release();
  });

  it('held-for is exact only when the layout proves the holder took the lock at its creation', async () => {
    const [a, b, admin] = [await open(), await open(), await open()];
    const lease = await new Mutex(a, '/locks/held', { data: 'A' }).acquire();
    const alone = (await inspectRecipes(admin, { path: '/locks/held' })).locks[0]!;
    // Nothing changed under the lock since A's node was created: A holds since its ctime.
    expect([alone.holder?.data.value, alone.heldForExact]).toEqual(['A', true]);
    expect(alone.heldForMs).toBeGreaterThanOrEqual(0);
    const waitB = new Mutex(b, '/locks/held', { data: 'B' }).acquire();
    await childrenUntil(admin, '/locks/held', (kids) => kids.length === 2);
    // A waiter joined after A: the tree can no longer prove that nothing ahead of A left after it.
    expect((await inspectRecipes(admin, { path: '/locks/held' })).locks[0]!.heldForExact).toBe(false);
    await new Promise((r) => setTimeout(r, 50));
    await lease.release();
    const leaseB = await waitB;
    const handedOver = (await inspectRecipes(admin, { path: '/locks/held' })).locks[0]!;
    // B took over when A left, after its own creation: its node's age is only an upper bound.
    expect([handedOver.holder?.data.value, handedOver.heldForExact]).toEqual(['B', false]);
    expect(handedOver.heldForMs).toBeGreaterThanOrEqual(50);
    await leaseB.release();

    const latch = new LeaderLatch(a, '/elections/held', { id: 'alpha' });
    await latch.start();
    await latch.await({ timeoutMs: 5000 });
    const election = (await inspectRecipes(admin, { path: '/elections/held' })).elections[0]!;
    expect([election.leader?.id, election.leaderForExact]).toEqual(['alpha', true]);
    await latch.close();
  });

  it('shows read-write locks, semaphores, latches, selectors, groups, services and queues', async () => {
    const [a, b, c, admin] = [await open(), await open(), await open(), await open()];
    const rw1 = new ReadWriteLock(a, '/app/rw');
    const rw2 = new ReadWriteLock(b, '/app/rw');
    const r1 = await rw1.readLock.acquire();
    const r2 = await rw2.readLock.acquire();
    const w = rw1.writeLock.acquire();
    w.catch(() => {});
    cleanups.push(async () => {
      await r1.release();
      await r2.release();
      await (await w).release();
    });
    const sem = new Semaphore(c, '/app/sem', 2, { data: 'lease-data' });
    const leases: Lease[] = await sem.acquire(2);
    cleanups.push(() => Promise.all(leases.map((l) => l.release())));

    const alpha = new LeaderLatch(a, '/election', { id: 'alpha' });
    await alpha.start();
    const beta = new LeaderLatch(b, '/election', { id: 'beta' });
    await beta.start();
    cleanups.push(
      () => alpha.close(),
      () => beta.close(),
    );

    const selector = new LeaderSelector(c, '/selector', {
      id: 'sel-1',
      takeLeadership: (signal) => new Promise<void>((r) => signal.addEventListener('abort', () => r())),
    });
    await selector.start();
    cleanups.push(() => selector.close());

    const member = new GroupMember(a, '/groups/workers', 'w-1', 'payload-1');
    await member.start();
    cleanups.push(() => member.close());

    const instance = {
      name: 'orders',
      id: 'i-1',
      address: '10.0.0.1',
      port: 8080,
      sslPort: null,
      payload: null,
      registrationTimeUTC: 1_700_000_000_000,
      serviceType: 'DYNAMIC',
      uriSpec: null,
    };
    await b.create('/services/orders/i-1', JSON.stringify(instance), { mode: CreateMode.EPHEMERAL, createParentContainers: true });
    await admin.create('/queues/jobs', null, { createParents: true });
    for (const item of ['first', 'second', 'third'])
      await admin.create('/queues/jobs/queue-', item, { mode: CreateMode.PERSISTENT_SEQUENTIAL });
    await admin.create('/queues/simple/qn-', 'only', { mode: CreateMode.PERSISTENT_SEQUENTIAL, createParentContainers: true });

    await eventually(async () => {
      const report = await inspectRecipes(admin);
      expect(report.elections.find((e) => e.path === '/selector')?.leader?.id).toBe('sel-1');
      expect(report.locks.find((l) => l.path === '/app/rw')?.waiters).toHaveLength(1);
      return true;
    });
    const report = await inspectRecipes(admin);
    const rw = report.locks.find((l) => l.path === '/app/rw')!;
    expect(rw.kind).toBe('read-write');
    expect(rw.holders.map((h) => h.kind)).toEqual(['read', 'read']);
    expect(rw.waiters.map((h) => h.kind)).toEqual(['write']);
    const s = report.locks.find((l) => l.path === '/app/sem')!;
    expect(s.kind).toBe('semaphore');
    expect(s.holders.map((h) => [h.kind, h.data.value])).toEqual([
      ['lease', 'lease-data'],
      ['lease', 'lease-data'],
    ]);
    expect(s.holders.map((h) => h.fencingToken)).toEqual(leases.map((l) => l.fencingToken.toString()));
    expect(report.locks.some((l) => l.path === '/app/sem/locks')).toBe(false);

    const latch = report.elections.find((e) => e.path === '/election')!;
    expect(latch.kind).toBe('leader-latch');
    expect(latch.leader?.id).toBe('alpha');
    expect(latch.participants.map((p) => [p.id, p.isLeader])).toEqual([
      ['alpha', true],
      ['beta', false],
    ]);

    expect(report.groups).toEqual([
      {
        path: '/groups/workers',
        members: [
          expect.objectContaining({
            id: 'w-1',
            data: { encoding: 'utf8', value: 'payload-1', bytes: 9 },
            sessionId: sessionHex(a.sessionId),
          }),
        ],
      },
    ]);
    expect(report.services).toEqual([
      expect.objectContaining({
        name: 'orders',
        path: '/services/orders',
        basePath: '/services',
        instances: [expect.objectContaining({ id: 'i-1', address: '10.0.0.1', port: 8080, serviceType: 'DYNAMIC', enabled: true })],
      }),
    ]);
    expect(report.queues.map((q) => [q.path, q.kind, q.depth, q.oldest?.data.value])).toEqual([
      ['/queues/jobs', 'distributed', 3, 'first'],
      ['/queues/simple', 'simple', 1, 'only'],
    ]);
    expect(report.walk.truncated).toBe(false);
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
  });

  it('stops at the limit and says so', async () => {
    const admin = await open();
    for (let i = 0; i < 30; i++) await admin.create(`/wide/n${i}`, null, { createParents: true });
    const report = await inspectRecipes(admin, { path: '/wide', limit: 10 });
    expect(report.walk).toMatchObject({ visited: 10, limit: 10, truncated: true });
    cleanups.push(() => admin.delete('/wide', { deletingChildren: true }));
  });

  it('reads sessions from cons and dump, with addresses, timeouts and ephemerals', async () => {
    const a = await open();
    await a.create('/eph-a', 'x', { mode: CreateMode.EPHEMERAL });
    const sessions = await inspectSessions({ connectString: server.connectString });
    expect(sessions.source).toBe('four-letter-words');
    const mine = sessions.sessions.find((s) => s.sessionId === sessionHex(a.sessionId))!;
    expect(mine.ephemerals).toEqual(['/eph-a']);
    expect(mine.clientAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(mine.timeoutMs).toBe(a.negotiatedTimeoutMs);
    expect(mine.server).toBe(server.connectString);
  });

  it('falls back to the tree when the words cannot be had, and says why', async () => {
    const a = await open();
    await a.create('/eph-b', 'x', { mode: CreateMode.EPHEMERAL });
    const { walk } = await inspectWithWalk(a);
    const sessions = await inspectSessions({ connectString: '127.0.0.1:1' }, { walk, timeoutMs: 1000 });
    expect(sessions.source).toBe('tree');
    expect(sessions.problems[0]!.reason).toMatch(/127\.0\.0\.1:1/);
    expect(sessions.sessions.find((s) => s.sessionId === sessionHex(a.sessionId))?.ephemerals).toEqual(['/eph-b']);
  });

  it('parses ZooKeeper 3.8 cons and dump answers', () => {
    const cons =
      ' /127.0.0.1:40922[1](queued=0,recved=6,sent=6,sid=0x100004a9a2b0001,lop=PING,est=1700000000000,to=4000,lcxid=0x3,lzxid=0x5,lresp=1,llat=0,minlat=0,avglat=0,maxlat=1)\n' +
      ' /127.0.0.1:40930[0](queued=0,recved=1,sent=0)\n\n';
    expect(parseCons(cons)).toEqual([
      { sessionId: '0x100004a9a2b0001', clientAddress: '127.0.0.1:40922', timeoutMs: 4000, lastOperation: 'PING' },
    ]);
    const dump =
      'SessionTracker dump:\nSession Sets (2)/(2):\n0 expire at Thu Jan 01 00:00:00 UTC 1970:\n1 expire at Tue Dec 01 11:00:04 UTC 2026:\n\t0x100004a9a2b0001\n' +
      '1 expire at Tue Dec 01 11:00:06 UTC 2026:\n\t0x100004a9a2b0002\nephemeral nodes dump:\nSessions with Ephemerals (1):\n0x100004a9a2b0001:\n\t/b\n\t/a\n' +
      'Connections dump:\nConnections Sets (1)/(1):\n';
    expect([...parseDump(dump)]).toEqual([
      ['0x100004a9a2b0001', ['/a', '/b']],
      ['0x100004a9a2b0002', []],
    ]);
  });
});
