/**
 * Tenure's Semaphore and Curator's InterProcessSemaphoreV2 (Debian's libcurator-recipes-java 5.4),
 * both on a SharedCount maximum, on one real ZooKeeper 3.8: same lease path, same count node. The
 * Java side is test/interop/semaphore-java/CuratorSemaphoreWorker.java, compiled by this suite.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { CreateMode, type Client } from '@tenure/client';
import { TestingServer, realZooKeeper } from '@tenure/testing';
import { SharedCount } from '@tenure/counters';
import { Semaphore } from '@tenure/locks';
import { Clients, sleep } from '../../packages/locks/test/harness.js';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

const zk = realZooKeeper();
const java = javaToolchain();
const WORKER = fileURLToPath(new URL('./semaphore-java/CuratorSemaphoreWorker.java', import.meta.url));

const pending = <T>(p: Promise<T>, ms = 300): Promise<T | 'waiting'> => Promise.race([p, sleep(ms).then(() => 'waiting' as const)]);

describe.skipIf(!zk.available || !java.available)('Curator semaphore on a SharedCount, interop on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let compiled: CompiledJava;
  let curator: JavaProgram;
  let clients: Clients;
  const counts: SharedCount[] = [];

  async function sharedCount(c: Client, path: string): Promise<SharedCount> {
    const count = new SharedCount(c, path, 1);
    await count.start();
    counts.push(count);
    return count;
  }

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava([WORKER]), TestingServer.start()]);
    curator = await JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorSemaphoreWorker', args: [server.connectString] },
      /^ready$/,
      60_000,
    );
    clients = new Clients(() => server.transport());
  });
  afterEach(async () => {
    await Promise.all(counts.splice(0).map((c) => c.close()));
    await clients.closeAll();
  });
  afterAll(async () => {
    await curator?.stop();
    await server?.close();
    compiled?.dispose();
  });

  it('4 Curator and 4 Tenure workers never hold more leases together than the count (2, then raised to 3)', async () => {
    const admin = await clients.open({ sessionTimeoutMs: 4000 });
    const max = await sharedCount(admin, '/isem/max');
    await max.setCount(2);
    await admin.create('/isem/inside', null, { createParentContainers: true });
    const tenure = await clients.openMany(4, { sessionTimeoutMs: 4000 });

    /**
     * Each Tenure worker: `times` leases; while holding one, counts everyone's markers under
     * /isem/inside. A holder that sees fewer than `count` looks again a few times before it lets go,
     * so that "the leases were used to the full" does not hang on the handoffs lining up by chance.
     */
    const churn = async (count: number, times: number): Promise<number> => {
      const seen = await Promise.all(
        tenure.map(async (c) => {
          const sem = new Semaphore(c, '/isem/sem', await sharedCount(c, '/isem/max'));
          let most = 0;
          for (let i = 0; i < times; i++) {
            await using _ = await sem.acquire({ timeoutMs: 30_000 });
            const mine = await c.create('/isem/inside/in-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
            for (let look = 0; look < 10; look++) {
              most = Math.max(most, (await c.getChildren('/isem/inside')).children.length);
              if (most >= count) break;
              await sleep(5);
            }
            await sleep(Math.random() * 4);
            await c.delete(mine.path);
          }
          await sem.close();
          return most;
        }),
      );
      return Math.max(...seen);
    };
    const mostOf = (line: string): number => Number(line.split(' ')[2]);

    for (const [count, times] of [
      [2, 40],
      [3, 40],
    ] as const) {
      if (count !== max.count) await max.setCount(count);
      const javaDone = curator.ask(
        `churn c${count} /isem/sem /isem/max /isem/inside 4 ${times}`,
        new RegExp(`^(churned|error) c${count}( |$)`),
        60_000,
      );
      const [javaMost, tenureMost] = await Promise.all([javaDone.then(mostOf), churn(count, times)]);
      expect(Math.max(javaMost, tenureMost)).toBeLessThanOrEqual(count);
      expect(Math.max(javaMost, tenureMost)).toBe(count); // the leases were used to the full
    }
    expect((await admin.getChildren('/isem/sem/leases').catch(() => ({ children: [] }))).children).toEqual([]);
  });

  it("a change of the count wakes the other side's waiters, and lowering it holds back new acquirers on both sides", async () => {
    const c = await clients.open({ sessionTimeoutMs: 4000 });
    const max = await sharedCount(c, '/isem2/max');
    const sem = new Semaphore(c, '/isem2/sem', max);
    const mine = await sem.acquire({ timeoutMs: 3000 });
    const curatorWaits = curator.ask('hold h1 /isem2/sem /isem2/max', /^(held|error) h1/);
    expect(await pending(curatorWaits)).toBe('waiting');
    await max.setCount(2); // Tenure raises it: Curator's waiter wakes
    expect(await curatorWaits).toMatch(/^held h1 _c_[0-9a-f-]{36}-lease-\d{10}$/);

    const tenureWaits = sem.acquire({ timeoutMs: 10_000 });
    expect(await pending(tenureWaits)).toBe('waiting');
    await curator.ask('setcount /isem2/max 3', /^count-set 3$/); // Curator raises it: Tenure's waiter wakes
    const third = await tenureWaits;

    await curator.ask('setcount /isem2/max 1', /^count-set 1$/);
    await expect(sem.acquire({ timeoutMs: 300 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(await curator.ask('try t1 /isem2/sem /isem2/max 300', /^(held|timeout|error) t1/)).toBe('timeout t1');
    await mine.release();
    await third.release();
    // One lease (Curator's) is left, at the count of 1: still no room for anyone.
    const tenureLast = sem.acquire({ timeoutMs: 10_000 });
    expect(await pending(tenureLast)).toBe('waiting');
    await curator.ask('release h1', /^released h1/);
    await (await tenureLast).release();
    await sem.close();
    expect(await sem.participantNodes()).toEqual([]);
  });
});
