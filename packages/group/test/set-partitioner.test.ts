/**
 * SetPartitioner on the embedded server, everything on one ManualClock (the time boundary, session
 * expiry, pings and retries are manual time): kazoo's layout and split, the time boundary,
 * release before re-split, kazoo#392 (a lock held by a departed member is waited for, for at most
 * a session timeout), LOST as failure, and close() leaving nothing behind.
 */
import diagnostics from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CreateMode, RetryPolicies, type Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { KazooLock, kazooContenders } from '@tenure/locks';
import { ManualClock, TestClients, startTestServer, tapTransport } from '@tenure/testing';
import { OpCode } from '@tenure/protocol';
import {
  PARTITION_CHANNEL,
  PartitionFailedError,
  SetPartitioner,
  kazooPartition,
  type Allocation,
  type PartitionMessage,
} from '../src/index.js';

const PATH = '/work';
const ITEMS = Array.from({ length: 12 }, (_, i) => `item-${String(i).padStart(2, '0')}`);
const BOUNDARY = 2_000;
const SESSION = 6_000;
const TICK = 100;

let clock: ManualClock;
let server: EmbeddedServer;
let clients: TestClients;
let partitioners: SetPartitioner[];

beforeEach(() => {
  clock = new ManualClock();
  server = startTestServer({ clock, tickMs: TICK, maxSessionTimeoutMs: 60_000 });
  clients = new TestClients(() => server.transport());
  partitioners = [];
});

afterEach(async () => {
  await advancing(Promise.all(partitioners.map((p) => p.close())));
  await advancing(clients.closeAll());
  await server.close();
  expect(clock.pending).toBe(0);
});

/** Lets manual time run in 10 ms steps until `p` settles. */
async function advancing<T>(p: Promise<T>, maxMs = 60_000): Promise<T> {
  let done = false;
  const settled = p.finally(() => (done = true));
  settled.catch(() => {});
  await clock.advanceUntil(() => done, { maxMs });
  return settled;
}

const open = (): Promise<Client> => clients.open({ clock, sessionTimeoutMs: SESSION });

async function member(
  identifier: string,
  client?: Client,
  items: readonly string[] = ITEMS,
): Promise<{ p: SetPartitioner; log: Allocation[]; client: Client }> {
  const c = client ?? (await open());
  const p = new SetPartitioner(c, PATH, items, { identifier, timeBoundaryMs: BOUNDARY });
  partitioners.push(p);
  const log: Allocation[] = [];
  p.on('allocation', (a) => log.push(a));
  await p.start();
  return { p, log, client: c };
}

/** The identifier holding each item's kazoo lock (its first contender's data), from the server's tree. */
function holders(): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of server.node(`${PATH}/locks`)?.children ?? []) {
    const dir = `${PATH}/locks/${item}`;
    const first = kazooContenders(server.node(dir)?.children ?? [])[0];
    if (first !== undefined) out.set(item, server.node(`${dir}/${first}`)!.data!.toString());
  }
  return out;
}

const allAcquired = (ps: readonly SetPartitioner[]): boolean => ps.every((p) => p.allocation === 'acquired');

/** Exactly kazoo's split among `ids`: each item held by its one member, the union the whole set. */
function expectExactSplit(ps: readonly SetPartitioner[], ids: readonly string[]): void {
  const h = holders();
  for (const p of ps) {
    const expected = kazooPartition(p.identifier, ids, ITEMS);
    expect(p.items).toEqual(expected);
    for (const item of expected) expect(h.get(item)).toBe(p.identifier);
  }
  expect(ps.flatMap((p) => p.items).sort()).toEqual(ITEMS);
  expect([...h.keys()].sort()).toEqual(ITEMS);
}

describe('SetPartitioner', () => {
  it("lays out kazoo's nodes: a ShallowParty member <uuid hex>-<identifier>, persistent folders, a kazoo lock per item", async () => {
    const { p, client } = await member('solo');
    await clock.advanceUntil(() => p.allocation === 'acquired');
    const party = server.node(`${PATH}/party`)!.children;
    expect(party).toHaveLength(1);
    expect(party[0]).toMatch(/^[0-9a-f]{32}-solo$/);
    const node = server.node(`${PATH}/party/${party[0]}`)!;
    expect(node.data!.toString()).toBe('solo');
    expect(node.stat.ephemeralOwner).toBe(client.sessionId);
    for (const dir of [PATH, `${PATH}/party`, `${PATH}/locks`]) expect(server.node(dir)!.stat.ephemeralOwner).toBe(0n);
    for (const item of ITEMS) {
      const [lockNode, ...rest] = server.node(`${PATH}/locks/${item}`)!.children;
      expect(rest).toEqual([]);
      expect(lockNode).toMatch(/^[0-9a-f]{32}__lock__\d{10}$/);
    }
    expect(p.items).toEqual(ITEMS);
  });

  it('allocates only after the party has been unchanged for timeBoundaryMs, and releases before each re-split', async () => {
    const a = await member('a');
    const started = clock.now();
    await clock.advance(BOUNDARY - 10);
    expect(a.p.allocation).toBe('allocating');
    await clock.advanceUntil(() => a.p.allocation === 'acquired', { maxMs: 500 });
    expect(clock.now() - started).toBeGreaterThanOrEqual(BOUNDARY);
    expect(a.p.items).toEqual(ITEMS);

    // b joins: a goes to release, lets every lock go, and allocates again; both wait the boundary.
    const b = await member('b');
    const joined = clock.now();
    await clock.advanceUntil(() => a.p.allocation === 'allocating', { maxMs: 500 });
    expect(holders().size).toBe(0); // released before anyone re-splits
    await clock.advance(BOUNDARY - 200);
    expect(a.p.allocation).toBe('allocating');
    expect(b.p.allocation).toBe('allocating');
    await clock.advanceUntil(() => allAcquired([a.p, b.p]), { maxMs: 2_000 });
    expect(clock.now() - joined).toBeGreaterThanOrEqual(BOUNDARY);
    expect(a.log).toEqual(['acquired', 'release', 'allocating', 'acquired']);
    expect(b.log).toEqual(['acquired']);
    expectExactSplit([a.p, b.p], ['a', 'b']);

    // A change inside the boundary restarts it: c joins, d joins BOUNDARY/2 later.
    const c = await member('c');
    await clock.advance(BOUNDARY / 2);
    const d = await member('d');
    const lastJoin = clock.now();
    await clock.advanceUntil(() => allAcquired([a.p, b.p, c.p, d.p]), { maxMs: 5_000 });
    expect(clock.now() - lastJoin).toBeGreaterThanOrEqual(BOUNDARY);
    expectExactSplit([a.p, b.p, c.p, d.p], ['a', 'b', 'c', 'd']);

    // A clean leave: the rest re-split among three.
    await advancing(d.p.close());
    expect(d.p.allocation).toBe('failure');
    await clock.advanceUntil(() => allAcquired([a.p, b.p, c.p]) && holders().size === 12, { maxMs: 5_000 });
    expectExactSplit([a.p, b.p, c.p], ['a', 'b', 'c']);
  });

  it('kazoo#392: an item held by a departed member is waited for, and held by nobody alive for at most a session timeout', async () => {
    const a = await member('a');
    const b = await member('b');
    await clock.advanceUntil(() => allAcquired([a.p, b.p]));
    expectExactSplit([a.p, b.p], ['a', 'b']);
    const aItems = [...a.p.items];

    // a departs without a word: its connection goes silent, so the server expires it after its timeout.
    const departed = clock.now();
    server.silence(a.client.sessionId, 10 * SESSION);
    let freed: number | undefined;
    await clock.advanceUntil(
      () => {
        if (freed === undefined && aItems.every((i) => !holders().has(i))) freed = clock.now();
        return b.p.allocation === 'acquired' && b.p.items.length === 12;
      },
      { maxMs: 3 * SESSION },
    );
    // a's locks were held by nobody alive for at most a session timeout (plus the server's expiry tick).
    expect(freed! - departed).toBeLessThanOrEqual(SESSION + TICK);
    expect(b.p.items).toEqual(ITEMS);
    expect([...holders().values()].every((id) => id === 'b')).toBe(true);
  });

  it('kazoo#392, mid re-split: new owners wait on the locks a departed member still holds, for at most its session timeout', async () => {
    const a = await member('a');
    const b = await member('b');
    await clock.advanceUntil(() => allAcquired([a.p, b.p]));
    const aItems = [...a.p.items];
    // a goes silent, then c joins: b and c re-split three ways (a's party node is still there) and
    // some of their new items are locks a holds and will never release.
    const departed = clock.now();
    server.silence(a.client.sessionId, 10 * SESSION);
    const c = await member('c');
    await clock.advance(BOUNDARY + 500);
    const waitedOn = [...b.p.set].filter((i) => aItems.includes(i) && !kazooPartition('a', ['a', 'b', 'c'], ITEMS).includes(i));
    expect(waitedOn.length).toBeGreaterThan(0);
    expect(b.p.allocation).toBe('allocating');
    expect(c.p.allocation).toBe('allocating');
    // Each waits with a watch on a's node for the item: its lock node is queued behind a's.
    const queued = waitedOn.filter((i) => kazooContenders(server.node(`${PATH}/locks/${i}`)!.children).length === 2);
    expect(queued.length).toBeGreaterThan(0);
    let freed: number | undefined;
    await clock.advanceUntil(
      () => {
        if (freed === undefined && aItems.every((i) => holders().get(i) !== 'a')) freed = clock.now();
        return allAcquired([b.p, c.p]) && b.p.items.length + c.p.items.length === 12;
      },
      { maxMs: 4 * SESSION },
    );
    expect(freed! - departed).toBeLessThanOrEqual(SESSION + TICK);
    expectExactSplit([b.p, c.p], ['b', 'c']);
  });

  it('an item locked by a live non-member is waited for without polling, and taken as soon as it is free', async () => {
    const outsider = await open();
    const lock = new KazooLock(outsider, `${PATH}/locks/item-03`, { identifier: 'outsider' });
    const lease = await lock.acquire();
    let sent = 0;
    const tapped = tapTransport(server.transport(), { request: (r) => void (r.type !== OpCode.ping && sent++) });
    const b = await member('b', await clients.open({ clock, sessionTimeoutMs: SESSION, transport: tapped }));
    await clock.advance(BOUNDARY + 500);
    expect(b.p.allocation).toBe('allocating');
    // Waiting is a watch on the outsider's node: ten boundaries pass with b still allocating, sending nothing but pings.
    sent = 0;
    await clock.advance(10 * BOUNDARY);
    expect(b.p.allocation).toBe('allocating');
    expect(sent).toBe(0);
    await lease.release();
    await clock.advanceUntil(() => b.p.allocation === 'acquired', { maxMs: 1_000 });
    expect(b.p.items).toEqual(ITEMS);
    await lock.close();
  });

  it("a lost session is kazoo's failure: every lock and the party node go, waitForAcquire rejects", async () => {
    const a = await member('a');
    await clock.advanceUntil(() => a.p.allocation === 'acquired');
    server.expireSession(a.client.sessionId);
    await clock.advanceUntil(() => a.p.allocation === 'failure', { maxMs: 2 * SESSION });
    expect(a.p.items).toEqual([]);
    expect(a.log.at(-1)).toBe('failure');
    await expect(a.p.waitForAcquire()).rejects.toBeInstanceOf(PartitionFailedError);
    expect(holders().size).toBe(0);
    expect(server.node(`${PATH}/party`)!.children).toEqual([]);
  });

  it('close() releases every lock, leaves the party, and leaves no watch', async () => {
    const a = await member('a');
    const b = await member('b');
    await clock.advanceUntil(() => allAcquired([a.p, b.p]));
    await advancing(Promise.all([a.p.close(), b.p.close()]));
    expect(holders().size).toBe(0);
    expect(server.node(`${PATH}/party`)!.children).toEqual([]);
    const ephemerals = server.sessions().flatMap((s) => s.ephemerals);
    expect(ephemerals).toEqual([]);
    await advancing(Promise.all([a.client.sync('/'), b.client.sync('/')]));
    expect([...server.watchCounts().values()].every((n) => n === 0)).toBe(true);
    expect(a.p.state).toBe('closed');
  });

  it('a dropped connection (SUSPENDED ends the leases under the standard policy) releases, then allocates again on the same session', async () => {
    const a = await member('a');
    await clock.advanceUntil(() => a.p.allocation === 'acquired');
    const session = a.client.sessionId;
    server.dropConnection(session);
    await clock.advanceUntil(() => a.p.allocation !== 'acquired', { maxMs: 2_000 });
    await clock.advanceUntil(() => a.p.allocation === 'acquired', { maxMs: 3 * SESSION });
    expect(a.client.sessionId).toBe(session);
    expect(a.log).toEqual(['acquired', 'release', 'allocating', 'acquired']);
    expect(a.p.items).toEqual(ITEMS);
    expect([...holders().values()].every((id) => id === 'a')).toBe(true);
  });

  it('a failing step is reported and retried at the retry policy pace, on the client clock', async () => {
    const c = await open();
    await c.create('/eph', null, { mode: CreateMode.EPHEMERAL });
    // Children of an ephemeral are refused (NoChildrenForEphemerals): reported, then retried.
    const p = new SetPartitioner(c, '/eph/set', ['x'], { identifier: 'a', timeBoundaryMs: 10, retryPolicy: RetryPolicies.forever(500) });
    partitioners.push(p);
    const errors: Error[] = [];
    p.on('error', (e) => errors.push(e));
    await p.start();
    await clock.advance(1);
    expect(errors).toHaveLength(1);
    await clock.advance(498);
    expect(errors).toHaveLength(1);
    await clock.advance(2);
    expect(errors).toHaveLength(2);
    expect(p.allocation).toBe('allocating');
  });

  it('publishes each allocation change on its channel', async () => {
    const seen: PartitionMessage[] = [];
    const onMessage = (m: unknown): void => void seen.push(m as PartitionMessage);
    diagnostics.subscribe(PARTITION_CHANNEL, onMessage);
    try {
      const a = await member('traced', undefined, ['x', 'y']);
      await clock.advanceUntil(() => a.p.allocation === 'acquired');
      await advancing(a.p.close());
      expect(seen).toEqual([
        { path: PATH, identifier: 'traced', allocation: 'acquired', items: ['x', 'y'] },
        { path: PATH, identifier: 'traced', allocation: 'failure', items: [] },
      ]);
    } finally {
      diagnostics.unsubscribe(PARTITION_CHANNEL, onMessage);
    }
  });

  it("kazoo's partition function: sorted members, items round-robin, by code point", () => {
    expect(kazooPartition('b', ['c', 'a', 'b'], ['6', '1', '2', '3', '4', '5', '7'])).toEqual(['2', '5']);
    expect(kazooPartition('a', ['c', 'a', 'b'], ['6', '1', '2', '3', '4', '5', '7'])).toEqual(['1', '4', '7']);
    expect(kazooPartition('x', ['a'], ['1'])).toEqual([]);
    // Python orders by code point: U+FF5E before U+1F600, which JavaScript's default sort reverses.
    expect(kazooPartition('a', ['a'], ['\u{1F600}', '\uFF5E'])).toEqual(['\uFF5E', '\u{1F600}']);
  });

  it('refuses bad items and identifiers at once', async () => {
    const c = await open();
    expect(() => new SetPartitioner(c, PATH, ['a/b'])).toThrow(/node name/);
    expect(() => new SetPartitioner(c, PATH, ['a'], { identifier: '' })).toThrow(/identifier/);
    expect(() => new SetPartitioner(c, PATH, ['a'], { timeBoundaryMs: -1 })).toThrow(/timeBoundaryMs/);
  });
});
