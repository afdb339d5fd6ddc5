/** Watches: one-shot data, exist and child watches, persistent and recursive watches, removal, SetWatches. */
import { describe, expect, test } from 'vitest';
import type { WatcherEvent } from '@tenure/protocol';
import { AddWatchMode, EventType, OpCode, WatcherType } from '@tenure/protocol';
import { E } from './raw-session.js';
import type { SuiteContext } from './suite.js';

const ev = (type: number, path: string): WatcherEvent => ({ type, state: 3, path });
const { NodeCreated, NodeDeleted, NodeDataChanged, NodeChildrenChanged } = EventType;

export function watchTests(ctx: SuiteContext): void {
  describe('watches', () => {
    test("getData sets a one-shot data watch: one NodeDataChanged with the node's path", async () => {
      const w = await ctx.open();
      const o = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/d`;
      await o.mkdir(p);
      await w.getData(p, true);
      await o.setData(p, Buffer.from('1'));
      expect(await w.eventCount(1)).toEqual([ev(NodeDataChanged, p)]);
      await o.setData(p, Buffer.from('2'));
      await w.barrier();
      expect(w.eventList).toHaveLength(1);
    });

    test("a data watch hears NodeDeleted; its own write's notification comes before the reply", async () => {
      const w = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/d`;
      await w.mkdir(p);
      await w.getData(p, true);
      const r = await w.delete(p);
      expect(r.err).toBe(0);
      expect(w.eventList).toEqual([ev(NodeDeleted, p)]);
    });

    test('exists on a missing node answers NONODE and sets a watch that hears NodeCreated', async () => {
      const w = await ctx.open();
      const o = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/later`;
      expect((await w.exists(p, true)).err).toBe(E.NONODE);
      await o.mkdir(p);
      expect(await w.eventCount(1)).toEqual([ev(NodeCreated, p)]);
      // An exists watch on an existing node hears data changes and deletion.
      expect((await w.exists(p, true)).err).toBe(0);
      await o.setData(p, Buffer.from('x'));
      await w.eventCount(2);
      expect((await w.exists(p, true)).err).toBe(0);
      await o.delete(p);
      expect(await w.eventCount(3)).toEqual([ev(NodeCreated, p), ev(NodeDataChanged, p), ev(NodeDeleted, p)]);
    });

    test('getData on a missing node sets no watch', async () => {
      const w = await ctx.open();
      const o = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/later`;
      expect((await w.getData(p, true)).err).toBe(E.NONODE);
      expect((await w.getChildren(p, true)).err).toBe(E.NONODE);
      await o.mkdir(p);
      await o.mkdir(`${p}/c`);
      await w.barrier();
      expect(w.eventList).toEqual([]);
    });

    test("getChildren sets a one-shot child watch: NodeChildrenChanged with the parent's path, not for data", async () => {
      const w = await ctx.open();
      const o = await ctx.open();
      const root = await ctx.root();
      await w.getChildren(root, true);
      await o.mkdir(`${root}/a`);
      expect(await w.eventCount(1)).toEqual([ev(NodeChildrenChanged, root)]);
      await o.mkdir(`${root}/b`);
      await w.barrier();
      expect(w.eventList).toHaveLength(1);
      await w.getChildren(root, true);
      await o.setData(`${root}/a`, Buffer.from('x'));
      await o.mkdir(`${root}/a/grandchild`);
      await w.barrier();
      expect(w.eventList).toHaveLength(1);
      await o.delete(`${root}/b`);
      expect(await w.eventCount(2)).toEqual([ev(NodeChildrenChanged, root), ev(NodeChildrenChanged, root)]);
    });

    test('deleting a node watched for data and children notifies its connection once', async () => {
      const w = await ctx.open();
      const o = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/both`;
      await o.mkdir(p);
      await w.getData(p, true);
      await w.getChildren(p, true);
      await o.delete(p);
      await w.eventCount(1);
      await w.barrier();
      expect(w.eventList).toEqual([ev(NodeDeleted, p)]);
    });

    test('every session that set a watch is notified', async () => {
      const a = await ctx.open();
      const b = await ctx.open();
      const o = await ctx.open();
      const root = await ctx.root();
      await a.exists(`${root}/n`, true);
      await b.exists(`${root}/n`, true);
      await o.mkdir(`${root}/n`);
      expect(await a.eventCount(1)).toEqual([ev(NodeCreated, `${root}/n`)]);
      expect(await b.eventCount(1)).toEqual([ev(NodeCreated, `${root}/n`)]);
    });

    test("addWatch PERSISTENT: the node's own events and its children changes, repeatedly", async () => {
      const w = await ctx.open();
      const o = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/p`;
      const r = await w.send({ type: OpCode.addWatch, path: p, mode: AddWatchMode.PERSISTENT });
      expect(r.err).toBe(0);
      await o.mkdir(p);
      await o.setData(p, Buffer.from('1'));
      await o.setData(p, Buffer.from('2'));
      await o.mkdir(`${p}/c`);
      await o.setData(`${p}/c`, Buffer.from('x'));
      await o.mkdir(`${p}/c/g`);
      await o.delete(`${p}/c/g`);
      await o.delete(`${p}/c`);
      await o.delete(p);
      await o.mkdir(p);
      expect(await w.eventCount(7)).toEqual([
        ev(NodeCreated, p),
        ev(NodeDataChanged, p),
        ev(NodeDataChanged, p),
        ev(NodeChildrenChanged, p),
        ev(NodeChildrenChanged, p),
        ev(NodeDeleted, p),
        ev(NodeCreated, p),
      ]);
      await w.barrier();
      expect(w.eventList).toHaveLength(7);
    });

    test('addWatch PERSISTENT_RECURSIVE: events of the node and every descendant, never NodeChildrenChanged', async () => {
      const w = await ctx.open();
      const o = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/r`;
      expect((await w.send({ type: OpCode.addWatch, path: p, mode: AddWatchMode.PERSISTENT_RECURSIVE })).err).toBe(0);
      await o.mkdir(p);
      await o.mkdir(`${p}/c`);
      await o.mkdir(`${p}/c/g`);
      await o.setData(`${p}/c/g`, Buffer.from('x'));
      await o.delete(`${p}/c/g`);
      await o.setData(p, Buffer.from('y'));
      await o.mkdir(`${root}/sibling`);
      expect(await w.eventCount(6)).toEqual([
        ev(NodeCreated, p),
        ev(NodeCreated, `${p}/c`),
        ev(NodeCreated, `${p}/c/g`),
        ev(NodeDataChanged, `${p}/c/g`),
        ev(NodeDeleted, `${p}/c/g`),
        ev(NodeDataChanged, p),
      ]);
      await w.barrier();
      expect(w.eventList).toHaveLength(6);
    });

    test('one watch mode per path: a getData watch after addWatch(PERSISTENT) makes the data side one-shot', async () => {
      const w = await ctx.open();
      const o = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/m`;
      await o.mkdir(p);
      await w.send({ type: OpCode.addWatch, path: p, mode: AddWatchMode.PERSISTENT });
      await w.getData(p, true);
      await o.setData(p, Buffer.from('1'));
      await o.setData(p, Buffer.from('2'));
      await o.mkdir(`${p}/c`);
      await o.delete(`${p}/c`);
      await o.delete(p);
      expect(await w.eventCount(4)).toEqual([
        ev(NodeDataChanged, p),
        ev(NodeChildrenChanged, p),
        ev(NodeChildrenChanged, p),
        ev(NodeDeleted, p),
      ]);
    });

    test('removeWatches and checkWatches; NOWATCHER when nothing matches', async () => {
      const w = await ctx.open();
      const o = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/rw`;
      await o.mkdir(p);
      const rm = (watcherType: number) => w.code({ type: OpCode.removeWatches, path: p, watcherType });
      const check = (watcherType: number) => w.code({ type: OpCode.checkWatches, path: p, watcherType });
      await w.getData(p, true);
      expect(await check(WatcherType.Data)).toBe(0);
      expect(await rm(WatcherType.Data)).toBe(0);
      expect(await rm(WatcherType.Data)).toBe(E.NOWATCHER);
      expect(await check(WatcherType.Any)).toBe(E.NOWATCHER);
      await w.getChildren(p, true);
      expect(await rm(WatcherType.Children)).toBe(0);
      await w.getData(p, true);
      await w.getChildren(p, true);
      expect(await rm(WatcherType.Any)).toBe(0);
      expect(await rm(WatcherType.Any)).toBe(E.NOWATCHER);
      await w.send({ type: OpCode.addWatch, path: p, mode: AddWatchMode.PERSISTENT });
      expect(await rm(WatcherType.Any)).toBe(0);
      await o.setData(p, Buffer.from('x'));
      await o.mkdir(`${p}/c`);
      await o.delete(`${p}/c`);
      await w.barrier();
      expect(w.eventList).toEqual([]);
      expect(await w.code({ type: OpCode.removeWatches, path: `${root}/none`, watcherType: WatcherType.Any })).toBe(E.NOWATCHER);
    });

    test('SetWatches on a new connection re-registers and catches up on changes after relativeZxid', async () => {
      const o = await ctx.open();
      const root = await ctx.root();
      const n = (x: string) => `${root}/${x}`;
      for (const x of ['a', 'b', 'c', 'e', 'f']) await o.mkdir(n(x));
      const s = await ctx.open({ timeoutMs: 10 * ctx.tickMs });
      const rel = (await s.exists(n('f'))).zxid;
      await o.setData(n('a'), Buffer.from('changed'));
      await o.delete(n('b'));
      await o.mkdir(n('d'));
      await o.mkdir(`${n('e')}/x`);
      s.conn.close();
      const again = await ctx.open({ sessionId: s.id, passwd: s.conn.passwd, timeoutMs: 10 * ctx.tickMs });
      const r = await again.send({
        type: OpCode.setWatches,
        relativeZxid: rel,
        dataWatches: [n('a'), n('b'), n('c')],
        existWatches: [n('d'), n('g')],
        childWatches: [n('e'), n('f')],
      });
      expect(r.err).toBe(0);
      // The catch-up events arrive before the reply.
      expect(again.eventList).toEqual([
        ev(NodeDataChanged, n('a')),
        ev(NodeDeleted, n('b')),
        ev(NodeCreated, n('d')),
        ev(NodeChildrenChanged, n('e')),
      ]);
      // The rest is registered as ordinary watches.
      await o.setData(n('c'), Buffer.from('x'));
      await o.mkdir(n('g'));
      await o.mkdir(`${n('f')}/y`);
      expect((await again.eventCount(7)).slice(4)).toEqual([
        ev(NodeDataChanged, n('c')),
        ev(NodeCreated, n('g')),
        ev(NodeChildrenChanged, n('f')),
      ]);
    });

    test('SetWatches2 re-registers persistent and recursive watches without catch-up events', async () => {
      const o = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/p`;
      const r = `${root}/r`;
      await o.mkdir(p);
      await o.mkdir(r);
      const s = await ctx.open();
      const rel = (await s.exists(p)).zxid;
      await o.setData(p, Buffer.from('before'));
      await o.mkdir(`${r}/before`);
      const res = await s.send({
        type: OpCode.setWatches2,
        relativeZxid: rel,
        dataWatches: [],
        existWatches: [],
        childWatches: [],
        persistentWatches: [p],
        persistentRecursiveWatches: [r],
      });
      expect(res.err).toBe(0);
      expect(s.eventList).toEqual([]);
      await o.setData(p, Buffer.from('after'));
      await o.mkdir(`${r}/after`);
      await o.setData(p, Buffer.from('again'));
      expect(await s.eventCount(3)).toEqual([ev(NodeDataChanged, p), ev(NodeCreated, `${r}/after`), ev(NodeDataChanged, p)]);
    });

    test("a connection's watches end with it; the session's next connection starts with none", async () => {
      const o = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/w`;
      await o.mkdir(p);
      const s = await ctx.open({ timeoutMs: 10 * ctx.tickMs });
      await s.getData(p, true);
      await s.send({ type: OpCode.addWatch, path: root, mode: AddWatchMode.PERSISTENT_RECURSIVE });
      s.conn.close();
      const again = await ctx.open({ sessionId: s.id, passwd: s.conn.passwd, timeoutMs: 10 * ctx.tickMs });
      await o.setData(p, Buffer.from('x'));
      await again.barrier();
      expect(again.eventList).toEqual([]);
      expect(s.eventList).toEqual([]);
    });
  });
}
