/**
 * kazoo's SetPartitioner (python3-kazoo) and Tenure's on one real ZooKeeper 3.8, sharing one set:
 * 2 kazoo members (kazoo/partitioner_member.py, kazoo's documented loop) and 2 Tenure members
 * (one in this process, one a child process: kazoo/tenure-partitioner-member.ts) split 12 items.
 * When stable, every item's lock is held by exactly one member (the one contender of its kazoo
 * Lock, owned by that member's session), in kazoo's split, and the union is the set. Then one
 * kazoo member leaves cleanly (finish()) and the Tenure child is SIGKILLed; once its session
 * expires the two left re-split, exact again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@tenure/client';
import { SetPartitioner, kazooPartition, type Allocation } from '@tenure/group';
import { kazooContenders } from '@tenure/locks';
import { TestClients, TestingServer, realZooKeeper } from '@tenure/testing';
import { LineProcess, hasKazoo, type Line } from './kazoo-process.js';

const zk = realZooKeeper();
const ci = process.env.CI === 'true' || process.env.CI === '1';
if (ci && !hasKazoo()) throw new Error('kazoo is missing: apt-get install python3-kazoo');

const PATH = '/kazoo-interop/partitioned';
const ITEMS = Array.from({ length: 12 }, (_, i) => `queue-${String(i).padStart(2, '0')}`);
const BOUNDARY_S = 1;
/** TestingServer's tickTime is 200 ms: ZooKeeper caps a session at 20 ticks. */
const SESSION_MS = 4000;

/** What one member last said: its session, allocation and items. */
interface Member {
  id: string;
  session: bigint;
  state(): { state: Allocation; items: string[] } | undefined;
}

function processMember(id: string, proc: LineProcess, session: bigint): Member {
  return {
    id,
    session,
    state: () => {
      const last = [...proc.lines].reverse().find((l) => typeof l.state === 'string');
      return last ? { state: String(last.state).toLowerCase() as Allocation, items: last.items as string[] } : undefined;
    },
  };
}

describe.skipIf(!zk.available || !hasKazoo())("kazoo's SetPartitioner and Tenure's share one set (ZooKeeper 3.8)", () => {
  let server: TestingServer;
  let clients: TestClients;
  let observer: Client;
  const procs: LineProcess[] = [];
  const partitioners: SetPartitioner[] = [];

  beforeAll(async () => {
    server = await TestingServer.start();
    clients = new TestClients(() => server.transport());
    observer = await clients.open();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill()));
    await Promise.all(partitioners.map((p) => p.close()));
    await clients?.closeAll();
    await server?.close();
  });

  /** Item → the session owning the one contender of its lock; throws if an item has none or more than one. */
  async function lockOwners(): Promise<Map<string, bigint>> {
    const owners = new Map<string, bigint>();
    for (const item of ITEMS) {
      const dir = `${PATH}/locks/${item}`;
      const contenders = kazooContenders((await observer.getChildren(dir)).children);
      expect(contenders, `${item}: one contender`).toHaveLength(1);
      const stat = await observer.exists(`${dir}/${contenders[0]}`);
      owners.set(item, stat!.ephemeralOwner);
    }
    return owners;
  }

  /** Resolves once every member says acquired with kazoo's split among `members`; checked on each line or event. */
  function stableSplit(
    members: readonly Member[],
    sources: readonly { on(e: string, f: () => void): unknown; off(e: string, f: () => void): unknown }[],
    timeoutMs: number,
  ): Promise<void> {
    const ids = members.map((m) => m.id);
    const done = (): boolean =>
      members.every((m) => {
        const s = m.state();
        return s?.state === 'acquired' && JSON.stringify(s.items) === JSON.stringify(kazooPartition(m.id, ids, ITEMS));
      });
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!done()) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(
            `no stable split among ${ids.join(', ')} within ${timeoutMs} ms: ${JSON.stringify(members.map((m) => [m.id, m.state()]))}`,
          ),
        );
      }, timeoutMs);
      const events = ['line', 'allocation'];
      const finish = (): void => {
        clearTimeout(timer);
        for (const s of sources) for (const e of events) s.off(e, check);
      };
      for (const s of sources) for (const e of events) s.on(e, check);
      check();
    });
  }

  /** Each item held by exactly one member, the one kazoo's split names; the union is the set. */
  async function expectExact(members: readonly Member[]): Promise<void> {
    const ids = members.map((m) => m.id);
    const owners = await lockOwners();
    const union: string[] = [];
    for (const m of members) {
      const mine = kazooPartition(m.id, ids, ITEMS);
      expect(m.state()!.items).toEqual(mine);
      for (const item of mine) expect(owners.get(item), `${item} is ${m.id}'s`).toBe(m.session);
      union.push(...mine);
    }
    expect(union.sort()).toEqual(ITEMS);
  }

  it('2 kazoo + 2 Tenure members: exact split; a kazoo member leaves cleanly and a Tenure one is SIGKILLed, and the two left re-split exactly', async () => {
    const kazoo = ['kazoo-1', 'kazoo-2'].map((id) =>
      LineProcess.python(id, 'partitioner_member.py', [server.connectString, PATH, id, String(BOUNDARY_S), ...ITEMS]),
    );
    const child = LineProcess.tenure('tenure-2', 'tenure-partitioner-member.ts', [
      server.connectString,
      String(SESSION_MS),
      PATH,
      'tenure-2',
      String(BOUNDARY_S * 1000),
      JSON.stringify(ITEMS),
    ]);
    procs.push(...kazoo, child);
    const sessionOf = async (p: LineProcess): Promise<bigint> =>
      BigInt(`0x${String((await p.next((l: Line) => typeof l.session === 'string')).session)}`);
    const [k1, k2, t2] = await Promise.all([
      sessionOf(kazoo[0]!).then((s) => processMember('kazoo-1', kazoo[0]!, s)),
      sessionOf(kazoo[1]!).then((s) => processMember('kazoo-2', kazoo[1]!, s)),
      sessionOf(child).then((s) => processMember('tenure-2', child, s)),
    ]);
    const client = await clients.open({ sessionTimeoutMs: SESSION_MS });
    const local = new SetPartitioner(client, PATH, ITEMS, { identifier: 'tenure-1', timeBoundaryMs: BOUNDARY_S * 1000 });
    partitioners.push(local);
    const errors: Error[] = [];
    local.on('error', (e) => errors.push(e));
    await local.start();
    const t1: Member = { id: 'tenure-1', session: client.sessionId, state: () => ({ state: local.allocation, items: [...local.items] }) };

    const all = [k1!, k2!, t1, t2!];
    await stableSplit(all, [...procs, local], 90_000);
    await expectExact(all);

    // kazoo-1 finishes (releases, leaves the party); tenure-2 dies without a word.
    const left = kazoo[0]!.ask('leave', (l) => l.left === true);
    const killedAt = Date.now();
    await child.kill();
    await left;
    const rest = [k2!, t1];
    await stableSplit(rest, [...procs, local], 60_000);
    const resplitMs = Date.now() - killedAt;
    await expectExact(rest);
    // The dead member's items waited for its session to expire, not longer (generous: the boundary twice over, and a noisy machine).
    // Not before the session could have expired (its last ping was at most a third of the timeout before the kill).
    expect(resplitMs).toBeGreaterThanOrEqual((SESSION_MS * 2) / 3 - 200);
    expect(resplitMs).toBeLessThan(SESSION_MS + 4 * BOUNDARY_S * 1000 + 15_000);
    expect(errors).toEqual([]);
    console.log(`re-split after the SIGKILL in ${resplitMs} ms (session ${SESSION_MS} ms, boundary ${BOUNDARY_S * 1000} ms)`);

    // Everyone out: nothing of the members is left but the persistent folders.
    await local.close();
    await kazoo[1]!.ask('leave', (l) => l.left === true);
    expect((await observer.getChildren(`${PATH}/party`)).children).toEqual([]);
    for (const item of ITEMS) expect(kazooContenders((await observer.getChildren(`${PATH}/locks/${item}`)).children)).toEqual([]);
  });
});
