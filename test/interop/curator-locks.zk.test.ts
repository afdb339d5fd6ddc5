/**
 * Tenure's locks and Apache Curator's (Debian's libcurator-recipes-java 5.4) on one real ZooKeeper,
 * on the same paths: one queue, one protocol. The Java side is test/interop/java/CuratorLockWorker.java,
 * compiled by this suite and driven line by line.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { TestingServer, realZooKeeper } from '@tenure/testing';
import { Mutex, ReadWriteLock, Revoker, Semaphore, SemaphoreMutex, type Lease } from '@tenure/locks';
import { Clients, sleep } from '../../packages/locks/test/harness.js';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

const zk = realZooKeeper();
const java = javaToolchain();
const WORKER = fileURLToPath(new URL('./java/CuratorLockWorker.java', import.meta.url));

const pending = <T>(p: Promise<T>, ms = 300): Promise<T | 'waiting'> => Promise.race([p, sleep(ms).then(() => 'waiting' as const)]);
const nodeOf = (line: string): string => line.split(' ')[2]!;

describe.skipIf(!zk.available || !java.available)('Curator interop on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let compiled: CompiledJava;
  let curator: JavaProgram;
  let clients: Clients;

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava([WORKER]), TestingServer.start()]);
    curator = await JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorLockWorker', args: [server.connectString] },
      /^ready$/,
    );
    clients = new Clients(() => server.transport());
  });
  afterEach(async () => {
    await clients.closeAll();
  });
  afterAll(async () => {
    await curator?.stop();
    await server?.close();
    compiled?.dispose();
  });

  it('Curator and Tenure workers on one lock path: 4 + 4 workers x 100 unsafe increments = exactly 800', async () => {
    const admin = await clients.open({ sessionTimeoutMs: 4000 });
    await admin.create('/counter', '0');
    const tenure = await clients.openMany(4, { sessionTimeoutMs: 4000 });
    const javaDone = curator.ask('count c1 /locks/shared /counter 4 100', /^counted c1 /, 60_000);
    const tenureDone = Promise.all(
      tenure.map(async (c) => {
        const mutex = new Mutex(c, '/locks/shared');
        for (let i = 0; i < 100; i++) {
          await using _ = await mutex.acquire();
          const { data } = await c.getData('/counter');
          await c.setData('/counter', String(Number(data.toString()) + 1));
        }
      }),
    );
    await Promise.all([javaDone, tenureDone]);
    expect((await admin.getData('/counter')).data.toString()).toBe('800');
    expect((await admin.getChildren('/locks/shared').catch(() => ({ children: [] }))).children).toEqual([]);
  });

  it("a mutex held by Curator blocks Tenure's acquire, and one held by Tenure blocks Curator's", async () => {
    const c = await clients.open({ sessionTimeoutMs: 4000 });
    const mutex = new Mutex(c, '/locks/block');
    const held = await curator.ask('hold h1 mutex /locks/block', /^held h1 /);
    const curatorNode = nodeOf(held);
    expect(curatorNode).toMatch(/^\/locks\/block\/_c_[0-9a-f-]{36}-lock-\d{10}$/);
    expect(await mutex.participantNodes()).toEqual([curatorNode]);
    await expect(mutex.acquire({ timeoutMs: 300 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(await mutex.participantNodes()).toEqual([curatorNode]); // the timed-out wait left nothing
    const curatorCzxid = (await c.exists(curatorNode))!.czxid;
    const waiting = mutex.acquire();
    expect(await pending(waiting)).toBe('waiting');
    await curator.ask('release h1', /^released h1/);
    const lease = await waiting;
    expect(lease.fencingToken > curatorCzxid).toBe(true);

    // Curator sees our node first in the queue, and waits behind it.
    const parts = await curator.ask('participants /locks/block', /^participants /);
    expect(parts).toBe(`participants ${lease.path}`);
    expect(await curator.ask('try h2 mutex /locks/block 300', /^(held|timeout) h2/)).toBe('timeout h2');
    const curatorWaits = curator.ask('hold h3 mutex /locks/block', /^held h3 /);
    expect(await pending(curatorWaits)).toBe('waiting');
    await lease.release();
    await curatorWaits;
    await curator.ask('release h3', /^released h3/);
  });

  it('read-write lock: Curator and Tenure readers share; writers on either side exclude', async () => {
    const c = await clients.open({ sessionTimeoutMs: 4000 });
    const rw = new ReadWriteLock(c, '/locks/rw');
    await curator.ask('hold r1 read /locks/rw', /^held r1 /);
    const tRead = await rw.readLock.acquire({ timeoutMs: 3000 }); // shared with Curator's reader
    expect(tRead.path).toMatch(/-__READ__\d{10}$/);
    await expect(rw.writeLock.acquire({ timeoutMs: 300 })).rejects.toMatchObject({ name: 'TimeoutError' });
    await tRead.release();
    const tWrite = rw.writeLock.acquire();
    expect(await pending(tWrite)).toBe('waiting');
    await curator.ask('release r1', /^released r1/);
    const w = await tWrite;
    expect(await curator.ask('try r2 read /locks/rw 300', /^(held|timeout) r2/)).toBe('timeout r2');
    expect(await curator.ask('try w2 write /locks/rw 300', /^(held|timeout) w2/)).toBe('timeout w2');
    const curatorWriter = curator.ask('hold w3 write /locks/rw', /^held w3 /);
    expect(await pending(curatorWriter)).toBe('waiting');
    await w.release();
    expect(nodeOf(await curatorWriter)).toMatch(/-__WRIT__\d{10}$/);
    await expect(rw.readLock.acquire({ timeoutMs: 300 })).rejects.toMatchObject({ name: 'TimeoutError' });
    await curator.ask('release w3', /^released w3/);
  });

  it('semaphore (InterProcessSemaphoreV2): Curator and Tenure leases count against one limit', async () => {
    const c = await clients.open({ sessionTimeoutMs: 4000 });
    const sem = new Semaphore(c, '/locks/sem', 3);
    await curator.ask('hold s1 semaphore /locks/sem 3', /^held s1 /);
    const two = await sem.acquire(2, { timeoutMs: 3000 });
    expect(two[0]!.path).toMatch(/^\/locks\/sem\/leases\/_c_[0-9a-f-]{36}-lease-\d{10}$/);
    await expect(sem.acquire({ timeoutMs: 300 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(await curator.ask('try s2 semaphore /locks/sem 300 3', /^(held|timeout) s2/)).toBe('timeout s2');
    const curatorWaits = curator.ask('hold s3 semaphore /locks/sem 3', /^held s3 /);
    expect(await pending(curatorWaits)).toBe('waiting');
    await two[0]!.release();
    await curatorWaits;
    await curator.ask('release s1', /^released s1/);
    const again: Lease = await sem.acquire({ timeoutMs: 3000 });
    for (const l of [again, two[1]!]) await l.release();
    await curator.ask('release s3', /^released s3/);
    expect(await sem.participantNodes()).toEqual([]);
  });

  it('semaphore mutex (InterProcessSemaphoreMutex): each side blocks the other', async () => {
    const c = await clients.open({ sessionTimeoutMs: 4000 });
    const m = new SemaphoreMutex(c, '/locks/smutex');
    await curator.ask('hold m1 smutex /locks/smutex', /^held m1 /);
    await expect(m.acquire({ timeoutMs: 300 })).rejects.toMatchObject({ name: 'TimeoutError' });
    await curator.ask('release m1', /^released m1/);
    const l = await m.acquire({ timeoutMs: 3000 });
    expect(await curator.ask('try m2 smutex /locks/smutex 300', /^(held|timeout) m2/)).toBe('timeout m2');
    await l.release();
    await curator.ask('try m3 smutex /locks/smutex 3000', /^held m3/);
    await curator.ask('release m3', /^released m3/);
  });

  it("revocation works both ways: Tenure's Revoker releases a revocable Curator holder, Curator's releases a Tenure holder", async () => {
    const c = await clients.open({ sessionTimeoutMs: 4000 });
    const mutex = new Mutex(c, '/locks/revoke');
    const held = await curator.ask('revocable v1 /locks/revoke', /^held v1 /);
    const waiting = mutex.acquire();
    const revoked = curator.waitFor(/^revoked v1$/, 10_000);
    await Revoker.attemptRevoke(c, nodeOf(held));
    await revoked;
    const lease = await waiting;

    const mine = new Mutex(c, '/locks/revoke2');
    let asked = 0;
    mine.makeRevocable((l) => {
      asked++;
      void l.release();
    });
    const l2 = await mine.acquire();
    const curatorWaits = curator.ask('hold v2 mutex /locks/revoke2', /^held v2 /);
    expect(await pending(curatorWaits)).toBe('waiting');
    await curator.ask(`revoke ${l2.path}`, /^revoke-sent$/);
    await curatorWaits;
    expect(asked).toBe(1);
    expect(l2.isHeld()).toBe(false);
    await curator.ask('release v2', /^released v2/);
    await lease.release();
  });
});
