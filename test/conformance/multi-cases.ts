/** multi and multiRead: atomicity, per-op results, ZooKeeper's failure results. */
import { describe, expect, test } from 'vitest';
import type { CreateRequest, MultiOp } from '@tenure/protocol';
import { CreateMode, EventType, OPEN_ACL_UNSAFE, OpCode } from '@tenure/protocol';
import { E } from './raw-session.js';
import type { SuiteContext } from './suite.js';

const create = (path: string, flags = 0, type: 1 | 15 | 19 = OpCode.create): CreateRequest => ({
  type,
  path,
  data: null,
  acl: [...OPEN_ACL_UNSAFE],
  flags,
});
const setData = (path: string, data: string, version = -1): MultiOp => ({ type: OpCode.setData, path, data: Buffer.from(data), version });
const del = (path: string, version = -1): MultiOp => ({ type: OpCode.delete, path, version });
const check = (path: string, version: number): MultiOp => ({ type: OpCode.check, path, version });
const failure = (codes: number[]) => codes.map((err) => ({ type: OpCode.error, err }));

export function multiTests(ctx: SuiteContext): void {
  describe('multi', () => {
    test('applies every op at one zxid and answers one result per op', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      await s.mkdir(`${root}/old`);
      const r = await s.multi([
        create(`${root}/a`),
        create(`${root}/b`, 0, OpCode.create2),
        setData(`${root}/a`, 'x', 0),
        check(`${root}/a`, 1),
        del(`${root}/old`),
        create(`${root}/box`, CreateMode.CONTAINER, OpCode.createContainer),
      ]);
      expect(r.err).toBe(0);
      const results = r.response!.results;
      expect(results).toHaveLength(6);
      expect(results[0]).toEqual({ type: OpCode.create, path: `${root}/a` });
      // Inside multi ZooKeeper 3.8 answers a create2 sub-op like create: the path alone.
      expect(results[1]).toEqual({ type: OpCode.create, path: `${root}/b` });
      expect(results[2]).toMatchObject({ type: OpCode.setData, stat: { version: 1, mzxid: r.zxid, czxid: r.zxid } });
      expect(results[3]).toEqual({ type: OpCode.check });
      expect(results[4]).toEqual({ type: OpCode.delete });
      expect(results[5]).toMatchObject({
        type: OpCode.create2,
        path: `${root}/box`,
        // A Stat never shows a container's marker: ephemeralOwner is 0.
        stat: { czxid: r.zxid, ephemeralOwner: 0n },
      });
      expect(await s.children(root)).toEqual(['a', 'b', 'box']);
      expect((await s.getData(`${root}/a`)).response!.data).toEqual(Buffer.from('x'));
    });

    test('a failing op applies nothing: [0…, its code, -2…] with reply err 0', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      await s.mkdir(`${root}/a`);
      const r = await s.multi([create(`${root}/x`), setData(`${root}/a`, 'v', 99), create(`${root}/y`)]);
      expect(r.err).toBe(0);
      expect(r.response!.results).toEqual(failure([0, E.BADVERSION, E.RUNTIMEINCONSISTENCY]));
      expect(await s.children(root)).toEqual(['a']);
      expect((await s.stat(`${root}/a`)).version).toBe(0);
    });

    test('each kind of failure inside multi carries its own code', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      await s.mkdir(`${root}/p`);
      await s.mkdir(`${root}/p/c`);
      await s.mkdir(`${root}/eph`, null, CreateMode.EPHEMERAL);
      const one = async (op: MultiOp) => (await s.multiResults([op]))[0];
      expect(await one(create(`${root}/missing/x`))).toEqual({ type: OpCode.error, err: E.NONODE });
      expect(await one(create(`${root}/p`))).toEqual({ type: OpCode.error, err: E.NODEEXISTS });
      expect(await one(create(`${root}/eph/x`))).toEqual({ type: OpCode.error, err: E.NOCHILDRENFOREPHEMERALS });
      expect(await one(del(`${root}/p`))).toEqual({ type: OpCode.error, err: E.NOTEMPTY });
      expect(await one(del(`${root}/p/c`, 3))).toEqual({ type: OpCode.error, err: E.BADVERSION });
      expect(await one(check(`${root}/p`, 5))).toEqual({ type: OpCode.error, err: E.BADVERSION });
      expect(await one(check(`${root}/missing`, -1))).toEqual({ type: OpCode.error, err: E.NONODE });
      expect(await one({ ...create(`${root}/acl`), acl: [] })).toEqual({ type: OpCode.error, err: E.INVALIDACL });
    });

    test('later ops see earlier ones; a failure after them rolls them all back', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      const ok = await s.multiResults([create(`${root}/a`), create(`${root}/a/b`), setData(`${root}/a/b`, '1', 0), del(`${root}/a/b`, 1)]);
      expect(ok.map((x) => x.type)).toEqual([OpCode.create, OpCode.create, OpCode.setData, OpCode.delete]);
      const bad = await s.multiResults([del(`${root}/a`), create(`${root}/z`), create(`${root}/a/b`)]);
      expect(bad).toEqual(failure([0, 0, E.NONODE]));
      expect(await s.children(root)).toEqual(['a']);
    });

    test('sequential creates in one multi are numbered in order; a failed multi uses no numbers', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      const failed = await s.multiResults([create(`${root}/s-`, CreateMode.PERSISTENT_SEQUENTIAL), check(`${root}/missing`, -1)]);
      expect(failed).toEqual(failure([0, E.NONODE]));
      expect((await s.stat(root)).cversion).toBe(0);
      const ok = await s.multiResults([
        create(`${root}/s-`, CreateMode.PERSISTENT_SEQUENTIAL),
        create(`${root}/s-`, CreateMode.PERSISTENT_SEQUENTIAL),
      ]);
      expect(ok).toEqual([
        { type: OpCode.create, path: `${root}/s-0000000000` },
        { type: OpCode.create, path: `${root}/s-0000000001` },
      ]);
    });

    test('a failed multi fires no watch; a successful one fires every watch it touches', async () => {
      const w = await ctx.open();
      const s = await ctx.open();
      const root = await ctx.root();
      await s.mkdir(`${root}/a`);
      await w.getData(`${root}/a`, true);
      await w.getChildren(root, true);
      await s.multi([setData(`${root}/a`, '1'), create(`${root}/b`), check(`${root}/a`, 7)]);
      await w.barrier();
      expect(w.eventList).toEqual([]);
      await s.multi([setData(`${root}/a`, '1'), create(`${root}/b`)]);
      await w.eventCount(2);
      expect(w.eventList).toEqual([
        { type: EventType.NodeDataChanged, state: 3, path: `${root}/a` },
        { type: EventType.NodeChildrenChanged, state: 3, path: root },
      ]);
    });

    test('an empty multi succeeds with no results', async () => {
      const s = await ctx.open();
      const r = await s.multi([]);
      expect(r.err).toBe(0);
      expect(r.response!.results).toEqual([]);
    });

    test('multiRead answers each read on its own', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      await s.mkdir(`${root}/d`, Buffer.from('data'));
      await s.mkdir(`${root}/d/c`);
      const r = await s.send({
        type: OpCode.multiRead,
        ops: [
          { type: OpCode.getData, path: `${root}/d`, watch: false },
          { type: OpCode.getChildren, path: `${root}/missing`, watch: false },
          { type: OpCode.getChildren, path: `${root}/d`, watch: false },
          { type: OpCode.getData, path: `${root}/missing`, watch: false },
        ],
      });
      expect(r.err).toBe(0);
      const [a, b, c, d] = r.response!.results;
      expect(a).toMatchObject({ type: OpCode.getData, data: Buffer.from('data'), stat: { numChildren: 1 } });
      expect(b).toEqual({ type: OpCode.error, err: E.NONODE });
      expect(c).toEqual({ type: OpCode.getChildren, children: ['c'] });
      expect(d).toEqual({ type: OpCode.error, err: E.NONODE });
    });
  });
}
