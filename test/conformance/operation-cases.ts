/** Single operations: answers, Stats, versions, errors, sequential names, system nodes. */
import { describe, expect, test } from 'vitest';
import { CreateMode, OPEN_ACL_UNSAFE, OpCode, Perms } from '@tenure/protocol';
import { E } from './raw-session.js';
import type { SuiteContext } from './suite.js';

export function operationTests(ctx: SuiteContext): void {
  describe('operations', () => {
    test("create answers the path; create2 and exists answer the new node's Stat", async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      const before = Date.now();
      const c = await s.create(`${root}/a`, Buffer.from('hello'));
      expect(c).toEqual({ zxid: c.zxid, err: 0, response: { path: `${root}/a` } });
      const c2 = await s.create2(`${root}/b`, Buffer.from('xy'));
      expect(c2.err).toBe(0);
      const stat = c2.response!.stat;
      expect(c2.response!.path).toBe(`${root}/b`);
      expect(stat).toMatchObject({
        czxid: c2.zxid,
        mzxid: c2.zxid,
        pzxid: c2.zxid,
        version: 0,
        cversion: 0,
        aversion: 0,
        ephemeralOwner: 0n,
        dataLength: 2,
        numChildren: 0,
      });
      expect(stat.mtime).toBe(stat.ctime);
      expect(stat.ctime).toBeGreaterThanOrEqual(before - 5000);
      expect(stat.ctime).toBeLessThanOrEqual(Date.now() + 5000);
      expect(await s.stat(`${root}/b`)).toEqual(stat);
      const d = await s.getData(`${root}/a`);
      expect(d.response!.data).toEqual(Buffer.from('hello'));
      expect(d.response!.stat.czxid).toBe(c.zxid);
    });

    test('null and empty data are distinct', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      await s.mkdir(`${root}/null`, null);
      await s.mkdir(`${root}/empty`, Buffer.alloc(0));
      const n = await s.getData(`${root}/null`);
      const e = await s.getData(`${root}/empty`);
      expect(n.response!.data).toBeNull();
      expect(n.response!.stat.dataLength).toBe(0);
      expect(e.response!.data).toEqual(Buffer.alloc(0));
    });

    test('setData bumps the version and mzxid; a wrong version is BADVERSION', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/v`;
      const created = await s.create(p, Buffer.from('1'));
      const r1 = await s.setData(p, Buffer.from('22'), 0);
      expect(r1.err).toBe(0);
      expect(r1.response!.stat).toMatchObject({ version: 1, mzxid: r1.zxid, czxid: created.zxid, dataLength: 2 });
      expect(r1.zxid).toBeGreaterThan(created.zxid);
      expect((await s.setData(p, Buffer.from('3'), 0)).err).toBe(E.BADVERSION);
      const r2 = await s.setData(p, null, -1);
      expect(r2.response!.stat).toMatchObject({ version: 2, dataLength: 0 });
      expect((await s.getData(p)).response!.data).toBeNull();
      expect((await s.setData(`${root}/missing`, null)).err).toBe(E.NONODE);
    });

    test('delete: NONODE, NOTEMPTY, BADVERSION, then success with the right or any version', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      expect((await s.delete(`${root}/missing`)).err).toBe(E.NONODE);
      await s.mkdir(`${root}/p`);
      await s.mkdir(`${root}/p/c`);
      await s.setData(`${root}/p/c`, Buffer.from('x'));
      expect((await s.delete(`${root}/p`)).err).toBe(E.NOTEMPTY);
      expect((await s.delete(`${root}/p/c`, 0)).err).toBe(E.BADVERSION);
      expect((await s.delete(`${root}/p/c`, 1)).err).toBe(0);
      expect((await s.delete(`${root}/p`, -1)).err).toBe(0);
      expect((await s.exists(`${root}/p`)).err).toBe(E.NONODE);
    });

    test('create errors: NONODE, NODEEXISTS, NOCHILDRENFOREPHEMERALS, INVALIDACL, BADARGUMENTS', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      expect((await s.create(`${root}/missing/x`)).err).toBe(E.NONODE);
      await s.mkdir(`${root}/x`);
      expect((await s.create(`${root}/x`)).err).toBe(E.NODEEXISTS);
      await s.mkdir(`${root}/eph`, null, CreateMode.EPHEMERAL);
      expect((await s.create(`${root}/eph/child`)).err).toBe(E.NOCHILDRENFOREPHEMERALS);
      expect((await s.create(`${root}/eph/child`, null, CreateMode.EPHEMERAL)).err).toBe(E.NOCHILDRENFOREPHEMERALS);
      expect((await s.create(`${root}/noacl`, null, 0, [])).err).toBe(E.INVALIDACL);
      expect((await s.create(`${root}/flags`, null, 9)).err).toBe(E.BADARGUMENTS);
      expect((await s.create('relative')).err).toBe(E.BADARGUMENTS);
      expect((await s.create(`${root}/.`)).err).toBe(E.BADARGUMENTS);
      expect((await s.create(`${root}/bad\u0001char`)).err).toBe(E.BADARGUMENTS);
      expect((await s.create(`${root}/x/`)).err).toBe(E.BADARGUMENTS);
      // ZooKeeper looks the parent up first: a trailing '/' under a missing parent is NONODE.
      expect((await s.create(`${root}/nope/`)).err).toBe(E.NONODE);
      expect(await s.children(root)).toEqual(['eph', 'x']);
    });

    test('reads of a missing node answer NONODE', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      const m = `${root}/missing`;
      expect((await s.exists(m)).err).toBe(E.NONODE);
      expect((await s.getData(m)).err).toBe(E.NONODE);
      expect((await s.getChildren(m)).err).toBe(E.NONODE);
      expect((await s.send({ type: OpCode.getChildren2, path: m, watch: false })).err).toBe(E.NONODE);
      expect((await s.send({ type: OpCode.getACL, path: m })).err).toBe(E.NONODE);
      expect((await s.send({ type: OpCode.getAllChildrenNumber, path: m })).err).toBe(E.NONODE);
    });

    test("a parent's cversion counts child creates and deletes; pzxid is the zxid of the last of them", async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/p`;
      const created = await s.create(p);
      expect(await s.stat(p)).toMatchObject({ cversion: 0, numChildren: 0, pzxid: created.zxid });
      const a = await s.create(`${p}/a`);
      expect(await s.stat(p)).toMatchObject({ cversion: 1, numChildren: 1, pzxid: a.zxid, mzxid: created.zxid });
      await s.create(`${p}/b`);
      const del = await s.delete(`${p}/a`);
      expect(await s.stat(p)).toMatchObject({ cversion: 3, numChildren: 1, pzxid: del.zxid, version: 0 });
    });

    test("sequential names append the count of the parent's child creates as %010d", async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      expect(await s.mkdir(`${root}/s-`, null, CreateMode.PERSISTENT_SEQUENTIAL)).toBe(`${root}/s-0000000000`);
      await s.mkdir(`${root}/plain`);
      expect(await s.mkdir(`${root}/s-`, null, CreateMode.PERSISTENT_SEQUENTIAL)).toBe(`${root}/s-0000000002`);
      // Deletes do not count (though they move the Stat's cversion).
      await s.delete(`${root}/plain`);
      expect(await s.mkdir(`${root}/s-`, null, CreateMode.PERSISTENT_SEQUENTIAL)).toBe(`${root}/s-0000000003`);
      // A sequential path may end in '/': the name is the number alone.
      expect(await s.mkdir(`${root}/`, null, CreateMode.PERSISTENT_SEQUENTIAL)).toBe(`${root}/0000000004`);
      const eph = await s.create2(`${root}/e-`, null, CreateMode.EPHEMERAL_SEQUENTIAL);
      expect(eph.response!.path).toBe(`${root}/e-0000000005`);
      expect(eph.response!.stat.ephemeralOwner).toBe(s.id);
      // A failed create does not consume a number.
      expect((await s.create(`${root}/missing/s-`, null, CreateMode.PERSISTENT_SEQUENTIAL)).err).toBe(E.NONODE);
      expect(await s.mkdir(`${root}/s-`, null, CreateMode.PERSISTENT_SEQUENTIAL)).toBe(`${root}/s-0000000006`);
    });

    test("getChildren answers names; getChildren2 adds the parent's Stat", async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      for (const n of ['c', 'a', 'b']) await s.mkdir(`${root}/${n}`);
      await s.mkdir(`${root}/a/deep`);
      const r = await s.getChildren(root);
      expect(r.response!.children.slice().sort()).toEqual(['a', 'b', 'c']);
      const r2 = await s.send({ type: OpCode.getChildren2, path: root, watch: false });
      expect(r2.response!.children.slice().sort()).toEqual(['a', 'b', 'c']);
      expect(r2.response!.stat).toEqual(await s.stat(root));
      expect(r2.response!.stat).toMatchObject({ numChildren: 3, cversion: 3 });
    });

    test('getACL and setACL: the ACL, aversion and BADVERSION', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      const p = `${root}/acl`;
      await s.mkdir(p);
      const g = await s.send({ type: OpCode.getACL, path: p });
      expect(g.response!.acl).toEqual([...OPEN_ACL_UNSAFE]);
      expect(g.response!.stat.aversion).toBe(0);
      const acl = [{ perms: Perms.READ | Perms.WRITE | Perms.ADMIN, id: { scheme: 'world', id: 'anyone' } }];
      const set = await s.send({ type: OpCode.setACL, path: p, acl, version: 0 });
      expect(set.err).toBe(0);
      expect(set.response!.stat).toMatchObject({ aversion: 1, version: 0, mzxid: g.response!.stat.mzxid });
      expect((await s.send({ type: OpCode.setACL, path: p, acl, version: 0 })).err).toBe(E.BADVERSION);
      expect((await s.send({ type: OpCode.setACL, path: p, acl: [], version: -1 })).err).toBe(E.INVALIDACL);
      expect((await s.send({ type: OpCode.setACL, path: `${root}/missing`, acl, version: -1 })).err).toBe(E.NONODE);
      const g2 = await s.send({ type: OpCode.getACL, path: p });
      expect(g2.response!.acl).toEqual(acl);
      expect(g2.response!.stat.aversion).toBe(1);
      // The node no longer grants CREATE.
      expect((await s.create(`${p}/child`)).err).toBe(E.NOAUTH);
    });

    test('sync answers its path', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      expect(await s.ok({ type: OpCode.sync, path: root })).toEqual({ path: root });
    });

    test("getEphemerals lists this session's ephemerals whose path starts with the prefix", async () => {
      const a = await ctx.open();
      const b = await ctx.open();
      const root = await ctx.root();
      await a.mkdir(`${root}/x`);
      await a.mkdir(`${root}/e1`, null, CreateMode.EPHEMERAL);
      await a.mkdir(`${root}/e2`, null, CreateMode.EPHEMERAL);
      await a.mkdir(`${root}/x/e3`, null, CreateMode.EPHEMERAL);
      await b.mkdir(`${root}/b1`, null, CreateMode.EPHEMERAL);
      const list = async (s: typeof a, prefixPath: string) =>
        (await s.ok({ type: OpCode.getEphemerals, prefixPath })).ephemerals.slice().sort();
      expect(await list(a, root)).toEqual([`${root}/e1`, `${root}/e2`, `${root}/x/e3`]);
      expect(await list(a, `${root}/e`)).toEqual([`${root}/e1`, `${root}/e2`]);
      expect(await list(a, '/')).toEqual([`${root}/e1`, `${root}/e2`, `${root}/x/e3`]);
      expect(await list(b, root)).toEqual([`${root}/b1`]);
      expect(await list(b, `${root}/x`)).toEqual([]);
    });

    test('getAllChildrenNumber counts every descendant', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      for (const p of ['a', 'a/b', 'a/b/c', 'd']) await s.mkdir(`${root}/${p}`);
      const count = async (path: string) => (await s.ok({ type: OpCode.getAllChildrenNumber, path })).totalNumber;
      expect(await count(root)).toBe(4);
      expect(await count(`${root}/a`)).toBe(2);
      expect(await count(`${root}/d`)).toBe(0);
    });

    test("whoAmI lists the connection's identities", async () => {
      const s = await ctx.open();
      expect((await s.addAuth('bob', 'secret')).err).toBe(0);
      const who = await s.ok({ type: OpCode.whoAmI });
      expect(who.clientInfo).toEqual(expect.arrayContaining([{ authScheme: 'digest', user: 'bob' }]));
    });

    test('the /zookeeper system nodes exist and cannot be deleted', async () => {
      const s = await ctx.open();
      expect((await s.exists('/zookeeper')).err).toBe(0);
      expect(await s.children('/zookeeper')).toEqual(expect.arrayContaining(['config', 'quota']));
      expect((await s.getData('/zookeeper/config')).err).toBe(0);
      for (const p of ['/zookeeper', '/zookeeper/quota', '/zookeeper/config', '/']) {
        expect((await s.delete(p)).err).toBe(E.BADARGUMENTS);
      }
      expect((await s.setData('/zookeeper/config', Buffer.from('x'))).err).toBe(E.NOAUTH);
      expect((await s.delete('relative')).err).toBe(E.BADARGUMENTS);
    });

    test('zxids rise with every write; reads answer the latest', async () => {
      const s = await ctx.open();
      const root = await ctx.root();
      const w1 = await s.create(`${root}/z`);
      const w2 = await s.setData(`${root}/z`, Buffer.from('1'));
      const w3 = await s.send({ type: OpCode.setACL, path: `${root}/z`, acl: [...OPEN_ACL_UNSAFE], version: -1 });
      const w4 = await s.delete(`${root}/z`);
      expect(w2.zxid).toBeGreaterThan(w1.zxid);
      expect(w3.zxid).toBeGreaterThan(w2.zxid);
      expect(w4.zxid).toBeGreaterThan(w3.zxid);
      const read = await s.getChildren(root);
      expect(read.zxid).toBeGreaterThanOrEqual(w4.zxid);
    });
  });
}
