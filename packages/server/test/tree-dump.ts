/**
 * For the format tests: writes the same varied tree to any server, and dumps a tree (every node's
 * data digest, full Stat and ACL) through a raw session, so two servers' dumps can be compared.
 */
import { createHash } from 'node:crypto';
import { CreateMode, OPEN_ACL_UNSAFE, OpCode, type ACL } from '@tenure/protocol';
import type { RawSession } from './harness.js';

const open: ACL[] = [...OPEN_ACL_UNSAFE];

async function ok<T extends { err: number }>(p: Promise<T>, what: string): Promise<T> {
  const r = await p;
  if (r.err !== 0) throw new Error(`${what} answered ${r.err}`);
  return r;
}

/**
 * Sequential, ephemeral (owned by `ephemeralOwner`'s session, which stays open), TTL and container
 * nodes, digest/world/ip ACLs, data from empty to 1 MiB, a multi, deletes and setData versions.
 */
export async function writeTree(s: RawSession, ephemeralOwner: RawSession, prefix: string): Promise<void> {
  const c = s.conn;
  await ok(c.send({ type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from('alice:secret') }), 'auth');
  await ok(c.send({ type: OpCode.create, path: prefix, data: Buffer.from('root of the test tree'), acl: open, flags: 0 }), 'create prefix');
  for (let i = 0; i < 5; i++) {
    await ok(
      c.send({
        type: OpCode.create,
        path: `${prefix}/seq-`,
        data: Buffer.from(`s${i}`),
        acl: open,
        flags: CreateMode.PERSISTENT_SEQUENTIAL,
      }),
      'seq',
    );
  }
  await ok(c.send({ type: OpCode.delete, path: `${prefix}/seq-0000000001`, version: -1 }), 'delete seq');
  await ok(c.send({ type: OpCode.create, path: `${prefix}/empty`, data: null, acl: open, flags: 0 }), 'null data');
  await ok(c.send({ type: OpCode.create, path: `${prefix}/zero`, data: Buffer.alloc(0), acl: open, flags: 0 }), 'empty data');
  const big = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7919) & 0xff;
  await ok(c.send({ type: OpCode.create, path: `${prefix}/big`, data: big, acl: open, flags: 0 }), 'big');
  await ok(
    c.send({
      type: OpCode.create,
      path: `${prefix}/auth`,
      data: Buffer.from('mine'),
      acl: [{ perms: 31, id: { scheme: 'auth', id: '' } }],
      flags: 0,
    }),
    'auth acl',
  );
  const readOnly: ACL[] = [
    { perms: 1, id: { scheme: 'world', id: 'anyone' } },
    { perms: 31, id: { scheme: 'ip', id: '127.0.0.1' } },
  ];
  await ok(c.send({ type: OpCode.create, path: `${prefix}/ip`, data: Buffer.from('ip'), acl: readOnly, flags: 0 }), 'ip acl');
  await ok(
    c.send({
      type: OpCode.setACL,
      path: `${prefix}/ip`,
      acl: [...readOnly, { perms: 8, id: { scheme: 'digest', id: 'bob:Ei2hsw/ISFmLWe7kGX7fQwlHK8M=' } }],
      version: 0,
    }),
    'setACL',
  );
  for (let v = 0; v < 3; v++)
    await ok(c.send({ type: OpCode.setData, path: `${prefix}/empty`, data: Buffer.from(`v${v}`), version: v }), 'setData');
  await ok(
    c.send({ type: OpCode.createContainer, path: `${prefix}/box`, data: null, acl: open, flags: CreateMode.CONTAINER }),
    'container',
  );
  await ok(
    c.send({ type: OpCode.create, path: `${prefix}/box/item`, data: Buffer.from('in the box'), acl: open, flags: 0 }),
    'container child',
  );
  await ok(
    c.send({
      type: OpCode.createTTL,
      path: `${prefix}/ttl`,
      data: Buffer.from('ttl'),
      acl: open,
      flags: CreateMode.PERSISTENT_WITH_TTL,
      ttl: 3_600_000n,
    }),
    'ttl',
  );
  await ok(
    c.send({
      type: OpCode.createTTL,
      path: `${prefix}/ttl-seq-`,
      data: null,
      acl: open,
      flags: CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL,
      ttl: 7_200_000n,
    }),
    'ttl seq',
  );
  await ok(
    ephemeralOwner.conn.send({
      type: OpCode.create,
      path: `${prefix}/eph`,
      data: Buffer.from('alive'),
      acl: open,
      flags: CreateMode.EPHEMERAL,
    }),
    'ephemeral',
  );
  await ok(
    ephemeralOwner.conn.send({
      type: OpCode.create,
      path: `${prefix}/eph-seq-`,
      data: null,
      acl: open,
      flags: CreateMode.EPHEMERAL_SEQUENTIAL,
    }),
    'ephemeral seq',
  );
  await ok(
    c.send({
      type: OpCode.multi,
      ops: [
        { type: OpCode.create, path: `${prefix}/multi`, data: Buffer.from('m'), acl: open, flags: 0 },
        { type: OpCode.create, path: `${prefix}/multi/a`, data: null, acl: open, flags: 0 },
        { type: OpCode.create, path: `${prefix}/multi/b`, data: null, acl: open, flags: 0 },
        { type: OpCode.setData, path: `${prefix}/multi`, data: Buffer.from('mm'), version: 0 },
        { type: OpCode.delete, path: `${prefix}/multi/a`, version: 0 },
        { type: OpCode.check, path: `${prefix}/multi/b`, version: 0 },
      ],
    }),
    'multi',
  );
  // A multi that fails and a write that fails: logged as error txns, zxids taken.
  await c.send({ type: OpCode.multi, ops: [{ type: OpCode.create, path: `${prefix}/multi`, data: null, acl: open, flags: 0 }] });
  await c.send({ type: OpCode.delete, path: `${prefix}/missing`, version: -1 });
  for (let i = 0; i < 30; i++)
    await ok(c.send({ type: OpCode.setData, path: `${prefix}/seq-0000000000`, data: Buffer.from(`x${i}`), version: -1 }), 'churn');
}

export interface DumpedNode {
  path: string;
  data: string;
  stat: Record<string, string | number>;
  acl: string[];
}

/** Every node under `path` (system nodes under /zookeeper skipped), with its stat and ACL. */
export async function dumpTree(s: RawSession, path = '/'): Promise<DumpedNode[]> {
  const out: DumpedNode[] = [];
  const visit = async (p: string): Promise<void> => {
    if (p === '/zookeeper') return;
    const d = await ok(s.conn.send({ type: OpCode.getData, path: p, watch: false }), `getData ${p}`);
    const a = await ok(s.conn.send({ type: OpCode.getACL, path: p }), `getACL ${p}`);
    const stat = Object.fromEntries(Object.entries(d.response!.stat).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v]));
    const data =
      d.response!.data === null ? 'null' : `${d.response!.data.length}:${createHash('sha1').update(d.response!.data).digest('hex')}`;
    out.push({ path: p, data, stat, acl: a.response!.acl.map((x) => `${x.perms}:${x.id.scheme}:${x.id.id}`) });
    const kids = await ok(s.conn.send({ type: OpCode.getChildren, path: p, watch: false }), `getChildren ${p}`);
    for (const k of [...kids.response!.children].sort()) await visit(p === '/' ? `/${k}` : `${p}/${k}`);
  };
  await visit(path);
  return out;
}
