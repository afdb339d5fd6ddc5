/**
 * kazoo's whole recipe set (python3-kazoo 2.8) on two tenure-server front ends over one etcd
 * (`--etcd`): each recipe's kazoo clients alternate between the front ends. One python script
 * (test/interop/kazoo/recipes_check.py) runs every recipe and prints one JSON line each; a test per
 * recipe asserts its line. The same script and assertions run on ZooKeeper 3.8 first, the reference
 * that says these are ZooKeeper's answers. Python and the recipes' own waits make this a slow file.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TestingServer, realZooKeeper } from '@tenure/testing';
import { LineProcess, hasKazoo, type Line } from '../interop/kazoo-process.js';
import { startFrontEnds, type FrontEnds } from './front-ends.js';

const ci = process.env.CI === 'true' || process.env.CI === '1';
if (ci && !hasKazoo()) throw new Error('kazoo is missing: apt-get install python3-kazoo');

const zk = realZooKeeper();
const sorted = (xs: unknown): unknown[] => [...(xs as unknown[])].sort();

/** What each recipe's line must say. */
const RECIPES: [string, (r: Line) => void][] = [
  [
    'Lock',
    (r) => {
      // Two kazoo clients, one per front end, 25 unsafe increments each inside the Lock.
      expect(r).toMatchObject({ finished: true, counter: 50, most_inside: 1 });
    },
  ],
  [
    'ReadLock/WriteLock',
    (r) => {
      expect(r).toMatchObject({
        readers_together: true,
        writer_blocked_by_readers: true,
        writer_after_readers: true,
        reader_blocked_by_writer: true,
        reader_after_writer: true,
      });
    },
  ],
  [
    'Semaphore',
    (r) => {
      // Four contenders, max_leases = 2: two at once, never three.
      expect(r).toMatchObject({ finished: true, most_inside: 2 });
      expect(r.most_holders_listed).toBeLessThanOrEqual(2);
    },
  ],
  ['Barrier', (r) => expect(r).toMatchObject({ blocked_while_up: true, passed_after_remove: true })],
  [
    'DoubleBarrier',
    (r) => {
      // Nobody passes enter() before all three arrived, nor leave() before all three left.
      expect(r).toMatchObject({ finished: true, arrived_when_entered: [3, 3, 3], leaving_when_left: [3, 3, 3] });
    },
  ],
  [
    'Queue',
    (r) => {
      // FIFO within a priority; a lower priority number first.
      expect(r).toMatchObject({ got: ['urgent', 'first', 'second', 'third'], empty_after: true });
    },
  ],
  [
    'LockingQueue',
    (r) => {
      expect(r).toMatchObject({
        first: 'x',
        second_while_first_locked: 'y',
        released: true,
        after_release: 'x',
        consumed: true,
        left: 0,
      });
    },
  ],
  [
    'Party',
    (r) => {
      expect(r).toMatchObject({ joined: ['member-0', 'member-1', 'member-2'], after_leave: ['member-1', 'member-2'] });
    },
  ],
  [
    'TreeCache',
    (r) => {
      // Writes through front end a, each event seen by a TreeCache on front end b before the next write.
      expect(r.events).toEqual([
        ['NODE_ADDED', expect.stringMatching(/\/x$/), 'one'],
        ['NODE_UPDATED', expect.stringMatching(/\/x$/), 'two'],
        ['NODE_ADDED', expect.stringMatching(/\/x\/y$/), 'deep'],
        ['NODE_REMOVED', expect.stringMatching(/\/x\/y$/), 'deep'],
        ['NODE_REMOVED', expect.stringMatching(/\/x$/), 'two'],
      ]);
    },
  ],
  ['Counter', (r) => expect(r).toMatchObject({ finished: true, value: 100 })],
  [
    'Election',
    (r) => {
      // Three contenders: each leads once, one at a time; a leader's return hands over
      // to the next, which sees one contender fewer.
      expect(r).toMatchObject({ finished: true, leaders: ['c0', 'c1', 'c2'], most_leaders_at_once: 1, contenders_seen: [3, 2, 1] });
    },
  ],
  [
    'transaction',
    (r) => {
      expect(r.ok).toEqual([expect.stringMatching(/\/t1$/), 'ZnodeStat', true, expect.stringMatching(/\/t2$/), true]);
      // The failing transaction applies nothing: its create is rolled back.
      expect(r.failed).toEqual(['RolledBackError', 'BadVersionError']);
      expect(r.base).toEqual(['v1', 1]);
      expect(sorted(r.children)).toEqual(['base', 't1']);
    },
  ],
  [
    'digest ACL',
    (r) => {
      expect(r).toMatchObject({
        authed_read: 'private',
        unauthed: 'NoAuthError',
        unauthed_write: 'NoAuthError',
        wrong_password: 'NoAuthError',
        wrong_password_write: 'NoAuthError',
      });
      expect(r.acl_read_back).toEqual(r.expected_acl);
    },
  ],
  [
    'NonBlockingLease',
    (r) => expect(r).toEqual(expect.objectContaining({ a_obtains: true, b_refused: true, a_renews: true, b_after_end: true })),
  ],
  [
    'SetPartitioner',
    (r) => {
      // Two members, one per front end, split the six items between them: disjoint, complete.
      const parts = r.parts as number[][] | null;
      expect(parts).not.toBeNull();
      expect(parts!.every((p) => p.length > 0)).toBe(true);
      expect([...parts![0]!, ...parts![1]!].sort((a, b) => a - b)).toEqual(r.items);
    },
  ],
];

/** Where the script runs: two ZooKeeper servers (or front ends) of one namespace, and how to stop them. */
interface Target {
  hosts: [string, string];
  stop(): Promise<void>;
}

const TARGETS: { name: string; skip: boolean; start: () => Promise<Target> }[] = [
  {
    name: 'ZooKeeper 3.8 (the reference; both hosts one server)',
    skip: !zk.available,
    start: async () => {
      const server = await TestingServer.start();
      return { hosts: [server.connectString, server.connectString], stop: () => server.close() };
    },
  },
  {
    name: 'two tenure-server front ends over one etcd',
    skip: false,
    start: async () => {
      const frontEnds: FrontEnds = await startFrontEnds('/kazoo-recipes');
      const [a, b] = frontEnds.servers.map((s) => s.connectString) as [string, string];
      return { hosts: [a, b], stop: () => frontEnds.stop() };
    },
  },
];

describe.skipIf(!hasKazoo()).each(TARGETS)("kazoo's recipes on $name", ({ skip, start }) => {
  let target: Target | undefined;
  const results = new Map<string, Line>();

  beforeAll(async () => {
    if (skip) return;
    target = await start();
    const kazoo = LineProcess.python('kazoo-recipes', 'recipes_check.py', [...target.hosts, '/recipes']);
    try {
      await kazoo.next((l) => l.done === true, 300_000);
    } finally {
      await kazoo.stop();
    }
    for (const line of kazoo.lines) if (typeof line.recipe === 'string') results.set(line.recipe, line);
  }, 360_000);
  afterAll(async () => {
    await target?.stop();
  });

  test.skipIf(skip).each(RECIPES)('%s', (name, check) => {
    const line = results.get(name);
    expect(line, `no line for ${name}`).toBeDefined();
    expect(line!.error, String(line!.trace)).toBeUndefined();
    check(line!);
  });
});
