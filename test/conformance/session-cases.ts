/** Sessions: handshake, timeout negotiation, re-attach, the zero-timeout answer, ping, close, expiry. */
import { describe, expect, test } from 'vitest';
import { CreateMode, EventType, OpCode } from '@tenure/protocol';
import { E } from './raw-session.js';
import type { SuiteContext } from './suite.js';

export function sessionTests(ctx: SuiteContext): void {
  describe('sessions', () => {
    test('a new session gets a non-zero id, a 16-byte password and a timeout clamped to [2, 20] ticks', async () => {
      const tick = ctx.tickMs;
      const low = await ctx.open({ timeoutMs: 1 });
      const high = await ctx.open({ timeoutMs: 1_000_000 });
      const mid = await ctx.open({ timeoutMs: 5 * tick });
      expect(low.id).not.toBe(0n);
      expect(new Set([low.id, high.id, mid.id]).size).toBe(3);
      expect(low.conn.passwd.length).toBe(16);
      expect(low.conn.passwd.equals(Buffer.alloc(16))).toBe(false);
      expect(low.conn.negotiatedTimeoutMs).toBe(2 * tick);
      expect(high.conn.negotiatedTimeoutMs).toBe(20 * tick);
      expect(mid.conn.negotiatedTimeoutMs).toBe(5 * tick);
      expect(low.conn.readOnly).toBe(false);
      expect(low.conn.closed).toBe(false);
    });

    test('re-attaching keeps the session and its ephemerals and closes the previous connection', async () => {
      const root = await ctx.root();
      const first = await ctx.open({ timeoutMs: 10 * ctx.tickMs });
      await first.mkdir(`${root}/e`, null, CreateMode.EPHEMERAL);
      const second = await ctx.open({ sessionId: first.id, passwd: first.conn.passwd, timeoutMs: 10 * ctx.tickMs });
      expect(second.id).toBe(first.id);
      expect(second.conn.passwd.equals(first.conn.passwd)).toBe(true);
      await first.closed;
      expect(first.conn.closed).toBe(true);
      const stat = await second.stat(`${root}/e`);
      expect(stat.ephemeralOwner).toBe(first.id);
      expect((await second.ping()).err).toBe(0);
    });

    test('a wrong password, an unknown id and a closed session all get the zero-timeout answer', async () => {
      const victim = await ctx.open();
      const wrong = Buffer.from(victim.conn.passwd);
      wrong[0] = wrong[0]! ^ 0xff;
      expect(await ctx.tryOpen({ sessionId: victim.id, passwd: wrong })).toBe('expired');
      expect(await ctx.tryOpen({ sessionId: 0x0123456789abcdefn, passwd: Buffer.alloc(16, 7) })).toBe('expired');
      const closed = await ctx.open();
      await closed.ok({ type: OpCode.closeSession });
      expect(await ctx.tryOpen({ sessionId: closed.id, passwd: closed.conn.passwd })).toBe('expired');
    });

    test('a client that has seen a later zxid is refused without an answer', async () => {
      await expect(ctx.tryOpen({ lastZxidSeen: 1n << 60n })).rejects.toMatchObject({ keeperCode: E.CONNECTIONLOSS });
    });

    test('ping answers err 0 with the last zxid', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      const created = await s.create(`${root}/p`);
      const ping = await s.ping();
      expect(ping.err).toBe(0);
      expect(ping.response).toBeUndefined();
      expect(ping.zxid).toBeGreaterThanOrEqual(created.zxid);
    });

    test('closeSession answers, closes the connection and deletes the ephemerals at once', async () => {
      const root = await ctx.root();
      const watcher = await ctx.open();
      const s = await ctx.open();
      await s.mkdir(`${root}/e1`, null, CreateMode.EPHEMERAL);
      await s.mkdir(`${root}/e2`, null, CreateMode.EPHEMERAL_SEQUENTIAL);
      expect((await watcher.exists(`${root}/e1`, true)).err).toBe(0);
      await watcher.getChildren(root, true);
      const r = await s.send({ type: OpCode.closeSession });
      expect(r.err).toBe(0);
      expect(r.zxid).toBeGreaterThan(0n);
      await s.closed;
      await watcher.eventCount(2);
      expect(watcher.eventList).toEqual(
        expect.arrayContaining([
          { type: EventType.NodeDeleted, state: 3, path: `${root}/e1` },
          { type: EventType.NodeChildrenChanged, state: 3, path: root },
        ]),
      );
      expect(await watcher.children(root)).toEqual([]);
      expect(await ctx.tryOpen({ sessionId: s.id, passwd: s.conn.passwd })).toBe('expired');
    });

    test('a silent session expires after its timeout: ephemerals go, watchers hear it, its connection closes', async () => {
      const tick = ctx.tickMs;
      const root = await ctx.root();
      const watcher = await ctx.open({ timeoutMs: 20 * tick });
      const victim = await ctx.open({ timeoutMs: 2 * tick });
      const timeout = victim.conn.negotiatedTimeoutMs;
      expect(timeout).toBe(2 * tick);
      const lastSent = performance.now();
      await victim.mkdir(`${root}/e`, null, CreateMode.EPHEMERAL);
      expect((await watcher.exists(`${root}/e`, true)).err).toBe(0);
      // The victim sends nothing more: no request, no ping.
      await watcher.until(() => watcher.events.length > 0, 'the ephemeral to go', timeout + 2 * tick + 5000);
      const expiredAfter = watcher.events[0]!.at - lastSent;
      expect(watcher.eventList[0]).toEqual({ type: EventType.NodeDeleted, state: 3, path: `${root}/e` });
      expect(expiredAfter).toBeGreaterThanOrEqual(timeout - 25);
      expect(expiredAfter).toBeLessThan(timeout + 2 * tick + 4000);
      await victim.closed;
      expect(await ctx.tryOpen({ sessionId: victim.id, passwd: victim.conn.passwd })).toBe('expired');
      expect((await watcher.exists(`${root}/e`)).err).toBe(E.NONODE);
    });

    test('requests keep a session alive past its timeout', async () => {
      const tick = ctx.tickMs;
      const root = await ctx.root();
      const s = await ctx.open({ timeoutMs: 2 * tick });
      await s.mkdir(`${root}/e`, null, CreateMode.EPHEMERAL);
      const until = performance.now() + 3 * s.conn.negotiatedTimeoutMs;
      while (performance.now() < until) {
        expect((await s.ping()).err).toBe(0);
        await new Promise((r) => setTimeout(r, tick / 2));
      }
      expect((await s.exists(`${root}/e`)).err).toBe(0);
    });
  });
}
