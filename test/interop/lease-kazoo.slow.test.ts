/**
 * kazoo's NonBlockingLease (python3-kazoo, kazoo/lease_worker.py) and Tenure's contend for one
 * lease on a real ZooKeeper 3.8, over several periods of wall time (the lease is the writers' wall
 * clocks, so these periods are real seconds): each side reads the other's record (holder, end) and
 * refuses while it runs, the bytes are the same both ways, each renews its own, and when kazoo and
 * Tenure contenders try at once there is at most one holder per period.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@tenure/client';
import { KazooLock, NonBlockingLease, encodeLeaseRecord, formatKazooTime, type LeaseResult } from '@tenure/locks';
import { TestClients, TestingServer, realZooKeeper, sleep } from '@tenure/testing';
import { LineProcess, hasKazoo } from './kazoo-process.js';

const zk = realZooKeeper();
const ci = process.env.CI === 'true' || process.env.CI === '1';
if (ci && !hasKazoo()) throw new Error('kazoo is missing: apt-get install python3-kazoo');

const PATH = '/kazoo-interop/lease';
const PERIOD_S = 2;
const CONTENDED_ROUNDS = 4;

interface KazooRace {
  results: { id: string; obtained: boolean }[];
}
interface KazooRead {
  holder: string;
  end: string;
  raw: string;
}

describe.skipIf(!zk.available || !hasKazoo())("kazoo's NonBlockingLease and Tenure's contend for one lease (ZooKeeper 3.8)", () => {
  let server: TestingServer;
  let clients: TestClients;
  let kazoo: LineProcess;
  let tenure: Client[];

  beforeAll(async () => {
    server = await TestingServer.start();
    clients = new TestClients(() => server.transport());
    tenure = await clients.openMany(2);
    kazoo = LineProcess.python('kazoo-leases', 'lease_worker.py', [server.connectString]);
    await kazoo.next((l) => l.ready === true);
  }, 120_000);

  afterAll(async () => {
    if (kazoo) {
      kazoo.send('quit');
      await kazoo.stop();
    }
    await clients?.closeAll();
    await server?.close();
  });

  const race = async (...ids: string[]): Promise<KazooRace['results']> =>
    ((await kazoo.ask(`race ${PATH} ${PERIOD_S} ${ids.join(' ')}`, (l) => Array.isArray(l.results))) as unknown as KazooRace).results;
  const read = async (): Promise<KazooRead> => (await kazoo.ask(`read ${PATH}`, (l) => typeof l.raw === 'string')) as unknown as KazooRead;
  const obtain = (c: Client, identifier: string): Promise<LeaseResult> => NonBlockingLease.obtain(c, PATH, PERIOD_S * 1000, { identifier });
  /** Waits (wall time: the lease's own clock) until the period ending at `end` is over on every writer's clock. */
  const pastEnd = async (end: Date): Promise<void> => {
    const ms = end.getTime() - Date.now() + 1100;
    if (ms > 0) await sleep(ms);
  };

  it("each side reads the other's record and refuses while it runs; the bytes are the same both ways; each renews its own", async () => {
    // kazoo holds: Tenure reads kazoo's record, and writes the same bytes for the same record.
    expect(await race('kazoo-a')).toEqual([{ id: 'kazoo-a', obtained: true }]);
    const refused = await obtain(tenure[0]!, 'tenure-a');
    expect(refused.obtained).toBe(false);
    expect(refused.holder).toBe('kazoo-a');
    const fromKazoo = await read();
    expect(fromKazoo.end).toBe(formatKazooTime(refused.endsAt));
    expect(encodeLeaseRecord('kazoo-a', refused.endsAt).toString()).toBe(fromKazoo.raw);
    // kazoo renews its own.
    expect(await race('kazoo-a')).toEqual([{ id: 'kazoo-a', obtained: true }]);
    const renewed = await obtain(tenure[1]!, 'tenure-b');
    expect(renewed.obtained).toBe(false);
    await pastEnd(renewed.endsAt);

    // Tenure holds: kazoo parses Tenure's record and refuses; Tenure renews its own.
    const ours = await obtain(tenure[0]!, 'tenure-a');
    expect(ours.obtained).toBe(true);
    const seen = await read();
    expect(seen.holder).toBe('tenure-a');
    expect(seen.end).toBe(formatKazooTime(ours.endsAt));
    expect(seen.raw).toBe(encodeLeaseRecord('tenure-a', ours.endsAt).toString());
    expect(await race('kazoo-a')).toEqual([{ id: 'kazoo-a', obtained: false }]);
    const again = await obtain(tenure[0]!, 'tenure-a');
    expect(again.obtained).toBe(true);
    await pastEnd(again.endsAt);
  });

  it("the lock under the lease: kazoo's Lock and KazooLock exclude each other (2 + 2 workers x 25 unsafe increments = 100)", async () => {
    const counter = '/kazoo-interop/counter';
    const lockPath = '/kazoo-interop/lock';
    await tenure[0]!.create(counter, '0', { createParents: true });
    const fromKazoo = kazoo.ask(`increment ${lockPath} ${counter} 25 kazoo-w1 kazoo-w2`, (l) => typeof l.incremented === 'number', 120_000);
    const tokens: bigint[] = [];
    await Promise.all(
      tenure.map(async (c, i) => {
        const lock = new KazooLock(c, lockPath, { identifier: `tenure-w${i}` });
        for (let n = 0; n < 25; n++) {
          await using held = await lock.acquire();
          tokens.push(held.fencingToken);
          const { data } = await c.getData(counter);
          await c.sync(counter);
          await c.setData(counter, String(Number(data.toString()) + 1));
        }
        await lock.close();
      }),
    );
    await fromKazoo;
    expect((await tenure[0]!.getData(counter)).data.toString()).toBe('100');
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]! > tokens[i - 1]!).toBe(true);
  });

  it(`kazoo and Tenure contenders at once: at most one holder per period, over ${CONTENDED_ROUNDS} periods`, async () => {
    const winners: string[] = [];
    for (let round = 0; round < CONTENDED_ROUNDS; round++) {
      const ids = [`kazoo-x${round}`, `kazoo-y${round}`, `tenure-x${round}`, `tenure-y${round}`];
      // Python's threads start later than our calls: in odd rounds Tenure's contenders start a little later, so both sides win some.
      const lag = round % 2 === 1 ? 150 : 0;
      const late = (c: Client, id: string): Promise<LeaseResult> => sleep(lag).then(() => obtain(c, id));
      const [fromKazoo, x, y] = await Promise.all([race(ids[0]!, ids[1]!), late(tenure[0]!, ids[2]!), late(tenure[1]!, ids[3]!)]);
      const obtained = [
        ...fromKazoo.filter((r) => r.obtained).map((r) => r.id),
        ...(x.obtained ? [ids[2]!] : []),
        ...(y.obtained ? [ids[3]!] : []),
      ];
      // The period before has ended, so exactly one of the four gets this one.
      expect(obtained).toHaveLength(1);
      const holder = (await read()).holder;
      expect(holder).toBe(obtained[0]);
      // A refused Tenure contender names that holder.
      for (const r of [x, y]) if (!r.obtained) expect(r.holder).toBe(holder);
      winners.push(holder);
      await pastEnd(x.endsAt.getTime() > y.endsAt.getTime() ? x.endsAt : y.endsAt);
    }
    console.log(`holders per period: ${winners.join(', ')}`);
    expect(new Set(winners).size).toBe(CONTENDED_ROUNDS);
  });
});
