/** Nodes that end on their own: ephemerals, containers and TTL nodes. */
import { describe, expect, test } from 'vitest';
import { CreateMode, EventType, OPEN_ACL_UNSAFE, OpCode } from '@tenure/protocol';
import { E, sleep, type RawSession } from './raw-session.js';
import type { SuiteContext } from './suite.js';

const createTTL = (s: RawSession, path: string, ttl: bigint, flags: number = CreateMode.PERSISTENT_WITH_TTL) =>
  s.send({ type: OpCode.createTTL, path, data: null, acl: [...OPEN_ACL_UNSAFE], flags, ttl });
const createContainer = (s: RawSession, path: string) =>
  s.send({ type: OpCode.createContainer, path, data: null, acl: [...OPEN_ACL_UNSAFE], flags: CreateMode.CONTAINER });

export function lifecycleTests(ctx: SuiteContext): void {
  const interval = () => ctx.target.containerCheckIntervalMs;

  describe('ephemeral nodes', () => {
    test('belong to their session and survive a re-attach', async () => {
      const root = await ctx.root();
      const s = await ctx.open({ timeoutMs: 10 * ctx.tickMs });
      const r = await s.create2(`${root}/e`, Buffer.from('x'), CreateMode.EPHEMERAL);
      expect(r.response!.stat.ephemeralOwner).toBe(s.id);
      s.conn.close();
      const again = await ctx.open({ sessionId: s.id, passwd: s.conn.passwd, timeoutMs: 10 * ctx.tickMs });
      expect((await again.stat(`${root}/e`)).ephemeralOwner).toBe(s.id);
      expect((await again.ok({ type: OpCode.getEphemerals, prefixPath: root })).ephemerals).toEqual([`${root}/e`]);
    });

    test('go with their session: every ephemeral at once, with their watches fired', async () => {
      const root = await ctx.root();
      const w = await ctx.open();
      const s = await ctx.open();
      for (let i = 0; i < 5; i++) await s.mkdir(`${root}/e${i}`, null, CreateMode.EPHEMERAL);
      for (let i = 0; i < 5; i++) await w.getData(`${root}/e${i}`, true);
      await s.closeSession();
      await w.eventCount(5);
      expect(w.eventList.map((e) => e.type)).toEqual(Array(5).fill(EventType.NodeDeleted));
      expect(w.eventList.map((e) => e.path).sort()).toEqual([0, 1, 2, 3, 4].map((i) => `${root}/e${i}`));
      expect(await w.children(root)).toEqual([]);
      // Their parent saw them go at one zxid.
      const stat = await w.stat(root);
      expect(stat.numChildren).toBe(0);
    });
  });

  describe('container nodes', () => {
    test('createContainer answers the path and a Stat (whose ephemeralOwner is 0)', async () => {
      const root = await ctx.root();
      const s = await ctx.open();
      const r = await createContainer(s, `${root}/c`);
      expect(r.err).toBe(0);
      expect(r.response!.path).toBe(`${root}/c`);
      // The container marker (0x8000000000000000) stays inside the server.
      expect(r.response!.stat.ephemeralOwner).toBe(0n);
      expect(await s.stat(`${root}/c`)).toEqual(r.response!.stat);
    });

    test('a container is deleted after its last child goes; watchers hear it', async () => {
      const root = await ctx.root();
      const s = await ctx.open();
      const w = await ctx.open();
      const c = `${root}/c`;
      await createContainer(s, c);
      await s.mkdir(`${c}/child`);
      await sleep(3 * interval());
      expect((await s.exists(c)).err).toBe(0);
      await w.exists(c, true);
      await s.delete(`${c}/child`);
      await w.eventCount(1, 30 * interval() + 10_000); // the empty container reaped
      expect((await s.exists(c)).err).toBe(E.NONODE);
      expect(w.eventList).toEqual([{ type: EventType.NodeDeleted, state: 3, path: c }]);
    });

    test('a container that never had a child stays', async () => {
      const root = await ctx.root();
      const s = await ctx.open();
      await createContainer(s, `${root}/never`);
      await sleep(5 * interval());
      expect((await s.exists(`${root}/never`)).err).toBe(0);
    });
  });

  describe('TTL nodes', () => {
    test('createTTL answers the path and a Stat (whose ephemeralOwner is 0); sequential TTL names get a suffix', async () => {
      const root = await ctx.root();
      const s = await ctx.open();
      const r = await createTTL(s, `${root}/t`, 60_000n);
      expect(r.err).toBe(0);
      // The TTL marker (0xFF00…|ttl) stays inside the server.
      expect(r.response!.stat.ephemeralOwner).toBe(0n);
      expect(r.response!.path).toBe(`${root}/t`);
      const seq = await createTTL(s, `${root}/t-`, 60_000n, CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL);
      expect(seq.response!.path).toBe(`${root}/t-0000000001`);
    });

    test('an idle childless TTL node is deleted after its TTL, not before', async () => {
      const root = await ctx.root();
      const s = await ctx.open();
      const p = `${root}/t`;
      const ttl = 1000;
      const created = performance.now();
      await createTTL(s, p, BigInt(ttl));
      await sleep(ttl / 2);
      expect((await s.exists(p, true)).err).toBe(0);
      await s.eventCount(1, ttl + 30 * interval() + 10_000); // the TTL node expired
      expect(performance.now() - created).toBeGreaterThanOrEqual(ttl);
      expect(s.eventList).toEqual([{ type: EventType.NodeDeleted, state: 3, path: p }]);
      expect((await s.exists(p)).err).toBe(E.NONODE);
    });

    test('a TTL node with a child stays; a write restarts its TTL', async () => {
      const root = await ctx.root();
      const s = await ctx.open();
      const parent = `${root}/parent`;
      const ttl = 400n;
      await createTTL(s, parent, ttl);
      await s.mkdir(`${parent}/child`);
      await sleep(Number(ttl) + 5 * interval());
      expect((await s.exists(parent)).err).toBe(0);
      const busy = `${root}/busy`;
      await createTTL(s, busy, 1500n);
      await sleep(1000);
      await s.setData(busy, Buffer.from('touch'));
      await sleep(1000);
      expect((await s.exists(busy)).err).toBe(0);
    });

    test('TTL arguments are checked: BADARGUMENTS', async () => {
      const root = await ctx.root();
      const s = await ctx.open();
      expect((await createTTL(s, `${root}/zero`, 0n)).err).toBe(E.BADARGUMENTS);
      expect((await createTTL(s, `${root}/big`, 0x10000000000n)).err).toBe(E.BADARGUMENTS);
      expect((await createTTL(s, `${root}/mode`, 1000n, CreateMode.PERSISTENT)).err).toBe(E.BADARGUMENTS);
      expect((await s.create(`${root}/plain`, null, CreateMode.PERSISTENT_WITH_TTL)).err).toBe(E.BADARGUMENTS);
      expect(await s.children(root)).toEqual([]);
    });
  });
}
