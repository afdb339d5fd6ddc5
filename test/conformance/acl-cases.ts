/** ACLs and auth: digest, auth, ip and world ids, per-op permissions, getACL masking, AUTHFAILED. */
import { describe, expect, test } from 'vitest';
import type { ACL } from '@tenure/protocol';
import { AddWatchMode, CREATOR_ALL_ACL, EventType, OpCode, Perms, digestId } from '@tenure/protocol';
import { E } from './raw-session.js';
import type { SuiteContext } from './suite.js';

const world = (perms: number): ACL => ({ perms, id: { scheme: 'world', id: 'anyone' } });
const bob = (perms: number = Perms.ALL): ACL => ({ perms, id: digestId('bob', 'secret') });

export function aclTests(ctx: SuiteContext): void {
  describe('ACLs', () => {
    test('a digest ACL denies every other identity: NOAUTH', async () => {
      const root = await ctx.root();
      const owner = await ctx.open();
      expect((await owner.addAuth('bob', 'secret')).err).toBe(0);
      const p = `${root}/private`;
      await owner.create(p, Buffer.from('s'), 0, [bob()]);
      const anon = await ctx.open();
      const eve = await ctx.open();
      // A wrong password is not an auth failure: it is an identity that matches nothing.
      expect((await eve.addAuth('bob', 'wrong')).err).toBe(0);
      for (const s of [anon, eve]) {
        expect((await s.getData(p)).err).toBe(E.NOAUTH);
        expect((await s.setData(p, null)).err).toBe(E.NOAUTH);
        expect((await s.getChildren(p)).err).toBe(E.NOAUTH);
        expect((await s.create(`${p}/c`)).err).toBe(E.NOAUTH);
        expect((await s.send({ type: OpCode.getACL, path: p })).err).toBe(E.NOAUTH);
        expect((await s.send({ type: OpCode.setACL, path: p, acl: [world(Perms.ALL)], version: -1 })).err).toBe(E.NOAUTH);
        expect((await s.send({ type: OpCode.getAllChildrenNumber, path: p })).err).toBe(E.NOAUTH);
      }
      expect((await owner.getData(p)).response!.data).toEqual(Buffer.from('s'));
      expect((await owner.create(`${p}/c`)).err).toBe(0);
      // Authenticating later on the same connection grants access.
      expect((await anon.addAuth('bob', 'secret')).err).toBe(0);
      expect((await anon.getData(p)).err).toBe(0);
    });

    test('delete needs DELETE on the parent, create needs CREATE on the parent', async () => {
      const root = await ctx.root();
      const owner = await ctx.open();
      await owner.addAuth('bob', 'secret');
      const p = `${root}/dir`;
      await owner.create(p, null, 0, [world(Perms.READ | Perms.CREATE), bob()]);
      const anon = await ctx.open();
      expect((await anon.create(`${p}/mine`)).err).toBe(0);
      expect((await anon.delete(`${p}/mine`)).err).toBe(E.NOAUTH);
      expect((await owner.delete(`${p}/mine`)).err).toBe(0);
      const q = `${root}/nocreate`;
      await owner.create(q, null, 0, [world(Perms.READ | Perms.DELETE)]);
      expect((await anon.create(`${q}/x`)).err).toBe(E.NOAUTH);
    });

    test("an `auth` ACL expands to the caller's authenticated ids; without one it is INVALIDACL", async () => {
      const root = await ctx.root();
      const anon = await ctx.open();
      expect((await anon.create(`${root}/x`, null, 0, [...CREATOR_ALL_ACL])).err).toBe(E.INVALIDACL);
      const owner = await ctx.open();
      await owner.addAuth('bob', 'secret');
      expect((await owner.create(`${root}/x`, null, 0, [...CREATOR_ALL_ACL])).err).toBe(0);
      const acl = await owner.ok({ type: OpCode.getACL, path: `${root}/x` });
      expect(acl.acl).toEqual([bob()]);
    });

    test('malformed ACLs are INVALIDACL', async () => {
      const root = await ctx.root();
      const s = await ctx.open();
      const bad: ACL[][] = [
        [],
        [{ perms: Perms.ALL, id: { scheme: 'nosuchscheme', id: 'x' } }],
        [{ perms: Perms.ALL, id: { scheme: 'digest', id: 'bob' } }],
        [{ perms: Perms.ALL, id: { scheme: 'world', id: 'everyone' } }],
        [{ perms: Perms.ALL, id: { scheme: 'ip', id: 'not-an-address' } }],
        [world(Perms.ALL), { perms: Perms.ALL, id: { scheme: 'digest', id: 'a:b:c' } }],
      ];
      for (const acl of bad) expect((await s.create(`${root}/x`, null, 0, acl)).err).toBe(E.INVALIDACL);
      expect(await s.children(root)).toEqual([]);
    });

    test('getACL needs READ or ADMIN; without ADMIN digest ids are masked', async () => {
      const root = await ctx.root();
      const owner = await ctx.open();
      await owner.addAuth('bob', 'secret');
      const anon = await ctx.open();
      const p = `${root}/masked`;
      await owner.create(p, null, 0, [world(Perms.READ), bob()]);
      const seen = await anon.ok({ type: OpCode.getACL, path: p });
      expect(seen.acl).toEqual([world(Perms.READ), { perms: Perms.ALL, id: { scheme: 'digest', id: 'bob:x' } }]);
      expect((await owner.ok({ type: OpCode.getACL, path: p })).acl).toEqual([world(Perms.READ), bob()]);
      const adminOnly = `${root}/admin`;
      await owner.create(adminOnly, null, 0, [world(Perms.ADMIN)]);
      expect((await anon.send({ type: OpCode.getACL, path: adminOnly })).err).toBe(0);
      expect((await anon.getData(adminOnly)).err).toBe(E.NOAUTH);
      const writeOnly = `${root}/write`;
      await owner.create(writeOnly, null, 0, [world(Perms.WRITE)]);
      expect((await anon.send({ type: OpCode.getACL, path: writeOnly })).err).toBe(E.NOAUTH);
      expect((await anon.setData(writeOnly, Buffer.from('w'))).err).toBe(0);
    });

    test("ip ACLs match the connection's address", async () => {
      const root = await ctx.root();
      const s = await ctx.open();
      const who = await s.ok({ type: OpCode.whoAmI });
      const ip = who.clientInfo.find((c) => c.authScheme === 'ip')?.user;
      expect(ip).toBeDefined();
      await s.create(`${root}/mine`, null, 0, [{ perms: Perms.ALL, id: { scheme: 'ip', id: ip! } }]);
      await s.create(`${root}/other`, null, 0, [{ perms: Perms.ALL, id: { scheme: 'ip', id: '10.1.2.3' } }]);
      expect((await s.getData(`${root}/mine`)).err).toBe(0);
      expect((await s.getData(`${root}/other`)).err).toBe(E.NOAUTH);
    });

    test('a notification about a node the watcher may not READ is not delivered', async () => {
      const root = await ctx.root();
      const owner = await ctx.open();
      await owner.addAuth('bob', 'secret');
      const anon = await ctx.open();
      const p = `${root}/p`;
      expect((await owner.create(p, null, 0, [world(Perms.READ), bob()])).err).toBe(0);
      expect((await anon.send({ type: OpCode.addWatch, path: p, mode: AddWatchMode.PERSISTENT_RECURSIVE })).err).toBe(0);
      expect((await owner.create(`${p}/secret`, null, 0, [bob()])).err).toBe(0);
      expect((await owner.setData(`${p}/secret`, Buffer.from('x'))).err).toBe(0);
      expect((await owner.create(`${p}/public`, null, 0, [world(Perms.READ)])).err).toBe(0);
      await anon.barrier();
      expect(anon.eventList).toEqual([{ type: EventType.NodeCreated, state: 3, path: `${p}/public` }]);
    });

    test('an unknown auth scheme is AUTHFAILED and closes the connection', async () => {
      const s = await ctx.open();
      const r = await s.send({ type: OpCode.auth, authType: 0, scheme: 'nosuchscheme', auth: Buffer.from('x') });
      expect(r.err).toBe(E.AUTHFAILED);
      await s.closed;
      expect(s.conn.closed).toBe(true);
    });
  });
}
