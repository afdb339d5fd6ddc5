/**
 * ZooKeeper's on-disk format, both directions, against Debian's ZooKeeper 3.8: one writes a tree
 * into a data dir (snapshots and logs, snapCount small so both are in play) and stops; the other
 * serves the same dir, and a dump of the tree (path, data, ACL, every Stat field) equals the
 * writer's. The writer's session is alive at the stop: on the other side it is still live (same
 * id, same password, its ephemerals), and zxids carry on from the last one.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import type { ACL, Connection, Request } from '@tenure/protocol';
import { CreateMode, OpCode, OPEN_ACL_UNSAFE, Perms, READ_ACL_UNSAFE } from '@tenure/protocol';
import { createEmbeddedServer, type StorageEvent } from '@tenure/server';
import { TenureServerProcess, TestingServer, fourLetterWord } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { listFiles } from '../../packages/server/src/storage/file-names.js';
import { readLogFile } from '../../packages/server/src/storage/log-reader.js';
import { decodeSnapshot, treeDigest } from '../../packages/server/src/storage/snapshot.js';
import { applyTxn } from '../../packages/server/src/storage/txn-apply.js';

const MAX_BUFFER = 4 * 1024 * 1024;
const MIB = 1024 * 1024;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'tenure-zkdir-'));
  dirs.push(d);
  return d;
}

const digestId = (user: string, pw: string): string => `${user}:${createHash('sha1').update(`${user}:${pw}`).digest('base64')}`;
const ALICE = digestId('alice', 'a-secret');
const BOB = digestId('bob', 'b-secret');

/** A raw session (no client-side retries or checks): replies as the server sent them. */
async function session(
  connectString: string,
  params: { sessionId?: bigint; passwd?: Buffer; timeoutMs?: number } = {},
): Promise<Connection> {
  const t = zookeeper(connectString, { maxFrameBytes: MAX_BUFFER });
  const r = await t.connect(
    t.hosts[0]!,
    {
      sessionId: params.sessionId ?? 0n,
      passwd: params.passwd ?? Buffer.alloc(16),
      lastZxidSeen: 0n,
      timeoutMs: params.timeoutMs ?? 30_000,
      readOnly: false,
    },
    { onEvent: () => undefined, onClose: () => undefined },
  );
  if (r.kind !== 'connected') throw new Error(`session 0x${(params.sessionId ?? 0n).toString(16)} is expired on ${connectString}`);
  return r.connection;
}

async function ok<R extends Request>(c: Connection, req: R) {
  const reply = await c.send(req);
  if (reply.err !== 0) throw new Error(`op ${req.type} ${'path' in req ? req.path : ''}: err ${reply.err}`);
  return reply;
}

async function auth(c: Connection, user: string, pw: string): Promise<void> {
  await ok(c, { type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from(`${user}:${pw}`) });
}

const create = (
  path: string,
  data: Buffer | string | null,
  acl: readonly ACL[] = OPEN_ACL_UNSAFE,
  flags: number = CreateMode.PERSISTENT,
) => ({
  type: OpCode.create as typeof OpCode.create,
  path,
  data: typeof data === 'string' ? Buffer.from(data) : data,
  acl: [...acl],
  flags,
});

/** Fills a 1 MiB buffer with a pattern seeded by `seed`. */
function bigData(seed: number, size = MIB): Buffer {
  const b = Buffer.alloc(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b.writeUInt32LE(x >>> 0, i);
  }
  return b;
}

/**
 * The tree both sides write: sequential (persistent and ephemeral), ephemerals of a session that
 * stays alive, TTL and container nodes, five distinct ACL lists (digest, world, ip, a mask, auth
 * fixed up to digest), null and empty and 1 MiB data, many data and ACL versions, child churn
 * (cversion, pzxid), multi (committed and failed), failed writes (error txns).
 */
async function writeTree(c: Connection, owner: Connection): Promise<void> {
  await auth(c, 'alice', 'a-secret');
  await auth(c, 'bob', 'b-secret');
  await auth(owner, 'alice', 'a-secret');
  await ok(c, create('/app', 'app'));
  for (let i = 0; i < 6; i++) await ok(c, create('/app/seq-', `s${i}`, OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL));
  await ok(c, { type: OpCode.delete, path: '/app/seq-0000000002', version: -1 });
  await ok(owner, create('/app/eph', 'mine', OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL));
  for (let i = 0; i < 3; i++) await ok(owner, create('/app/eseq-', null, OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL));
  await ok(c, {
    ...create('/ttl', 'lives an hour', OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_WITH_TTL),
    type: OpCode.createTTL,
    ttl: 3_600_000n,
  });
  await ok(c, {
    ...create('/ttl-seq-', null, OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL),
    type: OpCode.createTTL,
    ttl: 7_200_000n,
  });
  await ok(c, { ...create('/cont', 'c', OPEN_ACL_UNSAFE, CreateMode.CONTAINER), type: OpCode.createContainer });
  await ok(c, create('/cont/kept', 'k'));
  await ok(c, { ...create('/cont-never-used', null, OPEN_ACL_UNSAFE, CreateMode.CONTAINER), type: OpCode.createContainer });
  // ACLs: several distinct lists, each readable by alice (the dump authenticates as her).
  await ok(c, create('/acl', ''));
  await ok(c, create('/acl/digest', 'd', [{ perms: Perms.ALL, id: { scheme: 'digest', id: ALICE } }]));
  await ok(c, create('/acl/digest2', 'd2', [{ perms: Perms.ALL, id: { scheme: 'digest', id: ALICE } }]));
  await ok(
    c,
    create('/acl/mixed', 'm', [
      { perms: Perms.READ, id: { scheme: 'world', id: 'anyone' } },
      { perms: Perms.ALL, id: { scheme: 'digest', id: BOB } },
    ]),
  );
  await ok(c, create('/acl/ip', 'i', [{ perms: Perms.ALL, id: { scheme: 'ip', id: '127.0.0.1' } }]));
  await ok(
    c,
    create('/acl/mask', 'n', [
      { perms: Perms.READ | Perms.WRITE, id: { scheme: 'ip', id: '10.0.0.0/8' } },
      { perms: Perms.READ | Perms.ADMIN, id: { scheme: 'digest', id: ALICE } },
    ]),
  );
  await ok(c, create('/acl/auth', 'a', [{ perms: Perms.ALL, id: { scheme: 'auth', id: '' } }]));
  await ok(c, create('/acl/read-only', 'r', READ_ACL_UNSAFE));
  for (let i = 0; i < 3; i++) {
    await ok(c, {
      type: OpCode.setACL,
      path: '/acl/mixed',
      acl: [
        { perms: Perms.READ, id: { scheme: 'world', id: 'anyone' } },
        { perms: i === 2 ? Perms.ALL : Perms.READ | Perms.ADMIN, id: { scheme: 'digest', id: i % 2 === 0 ? ALICE : BOB } },
      ],
      version: i,
    });
  }
  // Data: null, empty, 1 MiB twice over, and many versions.
  await ok(c, create('/data', null));
  await ok(c, create('/data/empty', Buffer.alloc(0)));
  await ok(c, create('/data/big', bigData(1)));
  await ok(c, { type: OpCode.setData, path: '/data/big', data: bigData(2), version: 0 });
  await ok(c, create('/data/half', bigData(3, MIB / 2)));
  await ok(c, create('/ver', 'v0'));
  for (let i = 1; i <= 60; i++) await ok(c, { type: OpCode.setData, path: '/ver', data: Buffer.from(`v${i}`), version: i - 1 });
  for (let i = 0; i < 10; i++) {
    await ok(c, create('/ver/churn', `${i}`));
    await ok(c, { type: OpCode.delete, path: '/ver/churn', version: -1 });
  }
  await ok(c, create('/many', 'm'));
  for (let i = 0; i < 150; i++) await ok(c, create(`/many/n${String(i).padStart(3, '0')}`, `node ${i}`));
  for (let i = 0; i < 150; i += 7)
    await ok(c, { type: OpCode.setData, path: `/many/n${String(i).padStart(3, '0')}`, data: Buffer.from(`again ${i}`), version: -1 });
  for (let i = 3; i < 150; i += 11) await ok(c, { type: OpCode.delete, path: `/many/n${String(i).padStart(3, '0')}`, version: -1 });
  await ok(c, {
    type: OpCode.multi,
    ops: [
      create('/m', 'multi'),
      create('/m/a', 'a'),
      create('/m/s-', 'seq', OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL),
      { type: OpCode.setData, path: '/m', data: Buffer.from('multi2'), version: 0 },
      { type: OpCode.check, path: '/ver', version: 60 },
      { type: OpCode.delete, path: '/app/seq-0000000004', version: -1 },
    ],
  });
  // Failures that take a zxid (error txns): a failed multi and failed writes.
  await c.send({ type: OpCode.multi, ops: [create('/m/b', 'b'), { type: OpCode.check, path: '/ver', version: 1 }] });
  expect((await c.send(create('/app', 'again'))).err).not.toBe(0);
  expect((await c.send({ type: OpCode.setData, path: '/ver', data: null, version: 3 })).err).not.toBe(0);
  await ok(c, { type: OpCode.setData, path: '/app', data: Buffer.from('last'), version: -1 });
}

interface DumpedNode {
  path: string;
  data: string | null;
  acl: ACL[];
  stat: Record<string, string | number>;
}

const showData = (d: Buffer | null): string | null =>
  d === null
    ? null
    : d.length <= 64
      ? `${d.length}:${d.toString('base64')}`
      : `${d.length}:sha256:${createHash('sha256').update(d).digest('hex')}`;

/** Every node, depth first in sorted order, with data, ACL and the whole Stat. */
async function dumpTree(connectString: string): Promise<DumpedNode[]> {
  const c = await session(connectString);
  try {
    await auth(c, 'alice', 'a-secret');
    const out: DumpedNode[] = [];
    const visit = async (path: string): Promise<void> => {
      const { response: d } = await ok(c, { type: OpCode.getData, path, watch: false });
      const { response: a } = await ok(c, { type: OpCode.getACL, path });
      const { response: k } = await ok(c, { type: OpCode.getChildren2, path, watch: false });
      const s = d!.stat;
      expect(a!.stat).toEqual(s);
      out.push({
        path,
        data: showData(d!.data),
        acl: a!.acl.map((x) => ({ perms: x.perms, id: { scheme: x.id.scheme, id: x.id.id } })),
        stat: {
          czxid: `0x${s.czxid.toString(16)}`,
          mzxid: `0x${s.mzxid.toString(16)}`,
          pzxid: `0x${s.pzxid.toString(16)}`,
          ctime: Number(s.ctime),
          mtime: Number(s.mtime),
          version: s.version,
          cversion: s.cversion,
          aversion: s.aversion,
          ephemeralOwner: `0x${s.ephemeralOwner.toString(16)}`,
          dataLength: s.dataLength,
          numChildren: s.numChildren,
        },
      });
      for (const child of [...k!.children].sort()) await visit(path === '/' ? `/${child}` : `${path}/${child}`);
    };
    await visit('/');
    return out;
  } finally {
    await c.send({ type: OpCode.closeSession }).catch(() => undefined);
    c.close();
  }
}

/** The server's zxid as `srvr` shows it. */
async function srvrZxid(port: number): Promise<bigint> {
  const text = await fourLetterWord('127.0.0.1', port, 'srvr');
  const m = /^Zxid: (0x[0-9a-f]+)/im.exec(text);
  if (!m) throw new Error(`no Zxid in srvr:\n${text}`);
  return BigInt(m[1]!);
}

/** Ephemerals by session as `dump` lists them. */
async function ephemeralsBySession(port: number): Promise<Record<string, string[]>> {
  const text = await fourLetterWord('127.0.0.1', port, 'dump');
  const out: Record<string, string[]> = {};
  const lines = text.split('\n');
  let current: string[] | undefined;
  for (const line of lines.slice(lines.findIndex((l) => l.startsWith('ephemeral nodes dump')) + 1)) {
    if (line.startsWith('Connections dump')) break;
    const m = /^0x([0-9a-f]+):?$/i.exec(line.trim());
    if (m && !line.startsWith('\t')) out[`0x${m[1]!.toLowerCase()}`] = current = [];
    else if (line.startsWith('\t') && current) current.push(line.trim());
  }
  for (const k of Object.keys(out)) out[k]!.sort();
  return out;
}

function zkSettings(dataDir: string) {
  return {
    tickTime: 500,
    maxSessionTimeout: 60_000,
    config: { dataDir, snapCount: 20 },
    systemProperties: { 'jute.maxbuffer': MAX_BUFFER },
  };
}

function tenureArgs(dataDir: string): string[] {
  return [
    '--data-dir',
    dataDir,
    '--snap-count',
    '20',
    '--extended-types',
    'true',
    '--jute-maxbuffer',
    String(MAX_BUFFER),
    '--4lw-whitelist',
    '*',
    '--max-client-cnxns',
    '0',
    '--tick-time',
    '500',
    '--pre-alloc-size',
    '256',
  ];
}

function files(dataDir: string): string[] {
  const dir = join(dataDir, 'version-2');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/**
 * Our tree digest against the one ZooKeeper wrote into each of its snapshots. ZooKeeper records
 * (zxid, digest) after the tree: the digest of the tree after txn `zxid`, which for a fuzzy
 * snapshot lies past the file's name, so the logs are replayed up to it first. ZooKeeper applies
 * txns while it serializes, so a snapshot can also hold part of the txn after `zxid` (its digest
 * is then inconsistent for ZooKeeper too, which logs "Digests are not matching" on load): such a
 * snapshot shows a zxid past `zxid` in some node and is counted apart, not compared.
 */
function checkZooKeeperDigests(dataDir: string): { equal: number; racy: number } {
  const dir = join(dataDir, 'version-2');
  const txns = listFiles(dir, 'log').flatMap((f) => readLogFile(f).txns);
  const out = { equal: 0, racy: 0 };
  for (const snap of listFiles(dir, 'snapshot')) {
    const loaded = decodeSnapshot(readFileSync(snap.path), true);
    const digest = loaded.digest;
    if (digest === undefined) continue;
    for (const t of txns) if (t.header.zxid > snap.zxid && t.header.zxid <= digest.zxid) applyTxn(loaded.tree, loaded.sessions, t);
    const ours = treeDigest(loaded.tree);
    if (
      ours !== digest.digest &&
      [...loaded.tree.nodes.values()].some((n) => n.czxid > digest.zxid || n.mzxid > digest.zxid || n.pzxid > digest.zxid)
    ) {
      out.racy++;
      continue;
    }
    expect({ snapshot: snap.name, digest: ours }).toEqual({ snapshot: snap.name, digest: digest.digest });
    out.equal++;
  }
  return out;
}

/**
 * ZooKeeper 3.8 appends to each logged txn the digest the tree will have after it. Replaying the
 * whole log from the first snapshot with our replay (txn-apply.ts), the tree digest after every
 * txn must equal it: every kind of txn applied as ZooKeeper applies it. Returns the txns compared.
 */
function checkTxnDigests(dataDir: string): number {
  const dir = join(dataDir, 'version-2');
  const first = listFiles(dir, 'snapshot')[0]!;
  const { tree, sessions } = decodeSnapshot(readFileSync(first.path), true);
  let compared = 0;
  for (const f of listFiles(dir, 'log')) {
    for (const t of readLogFile(f).txns) {
      if (t.header.zxid <= first.zxid) continue;
      applyTxn(tree, sessions, t);
      if (t.digest === undefined) continue;
      expect({ zxid: t.header.zxid, type: t.header.type, digest: treeDigest(tree) }).toEqual({
        zxid: t.header.zxid,
        type: t.header.type,
        digest: t.digest.treeDigest,
      });
      compared++;
    }
  }
  return compared;
}

describe("the data dir in ZooKeeper 3.8's format", () => {
  test('ZooKeeper writes, tenure-server serves the same dir with an equal dump', async () => {
    const dataDir = tempDir();
    const zk = await TestingServer.start(zkSettings(dataDir));
    let owner: Connection | undefined;
    try {
      const c = await session(zk.connectString);
      owner = await session(zk.connectString, { timeoutMs: 40_000 });
      await writeTree(c, owner);
      await ok(c, { type: OpCode.closeSession });
      c.close();
      const before = await dumpTree(zk.connectString);
      const ephemerals = await ephemeralsBySession(zk.port);
      const lastZxid = await srvrZxid(zk.port);
      await zk.stop(); // SIGKILL: the owner's session is alive at the stop
      owner.close();
      const onDisk = files(dataDir);
      expect(onDisk.filter((n) => n.startsWith('snapshot.')).length).toBeGreaterThan(1);
      expect(onDisk.filter((n) => n.startsWith('log.')).length).toBeGreaterThan(1);
      const digests = checkZooKeeperDigests(dataDir);
      const txnDigests = checkTxnDigests(dataDir);
      console.log(
        `ZooKeeper's digests: ${txnDigests} txn digests and ${digests.equal} snapshot digests equal to ours; ${digests.racy} snapshots written while a txn was being applied (not compared)`,
      );
      expect(digests.equal).toBeGreaterThan(1);
      expect(txnDigests).toBeGreaterThan(300);

      const tenure = await TenureServerProcess.start({ args: tenureArgs(dataDir) });
      try {
        expect(await srvrZxid(tenure.port)).toBe(lastZxid);
        expect(await ephemeralsBySession(tenure.port)).toEqual(ephemerals);
        const after = await dumpTree(tenure.connectString);
        expect(after).toEqual(before);
        // The owner's session is live there: same id and password, its ephemerals kept.
        const back = await session(tenure.connectString, { sessionId: owner.sessionId, passwd: owner.passwd, timeoutMs: 40_000 });
        expect(back.sessionId).toBe(owner.sessionId);
        const w = await session(tenure.connectString);
        const r = await ok(w, create('/after', 'tenure'));
        expect(r.zxid).toBeGreaterThan(lastZxid);
        const { response } = await ok(w, { type: OpCode.getData, path: '/after', watch: false });
        expect(response!.stat.czxid).toBe(r.zxid);
        back.close();
        w.close();
        expect(tenure.logs.filter((l) => l.level >= 50)).toEqual([]);
      } finally {
        await tenure.stop();
      }
    } finally {
      owner?.close();
      await zk.close();
    }
  }, 120_000);

  test('tenure-server writes, ZooKeeper serves the same dir with an equal dump', async () => {
    const dataDir = tempDir();
    const tenure = await TenureServerProcess.start({ args: tenureArgs(dataDir) });
    let before: DumpedNode[];
    let ephemerals: Record<string, string[]>;
    let lastZxid: bigint;
    let owner: Connection;
    try {
      const c = await session(tenure.connectString);
      owner = await session(tenure.connectString, { timeoutMs: 40_000 });
      await writeTree(c, owner);
      await ok(c, { type: OpCode.closeSession });
      c.close();
      before = await dumpTree(tenure.connectString);
      ephemerals = await ephemeralsBySession(tenure.port);
      lastZxid = await srvrZxid(tenure.port);
      owner.close();
      expect(tenure.logs.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      const stopped = await tenure.stop();
      expect(stopped.code).toBe(0);
    }
    const onDisk = files(dataDir);
    expect(onDisk.filter((n) => n.startsWith('snapshot.')).length).toBeGreaterThan(1);
    expect(onDisk.filter((n) => n.startsWith('log.')).length).toBeGreaterThan(1);

    const zk = await TestingServer.start(zkSettings(dataDir));
    try {
      expect(await srvrZxid(zk.port)).toBe(lastZxid);
      expect(await ephemeralsBySession(zk.port)).toEqual(ephemerals);
      const after = await dumpTree(zk.connectString);
      expect(after).toEqual(before);
      const back = await session(zk.connectString, { sessionId: owner.sessionId, passwd: owner.passwd, timeoutMs: 40_000 });
      expect(back.sessionId).toBe(owner.sessionId);
      const w = await session(zk.connectString);
      const r = await ok(w, create('/after', 'zookeeper'));
      expect(r.zxid).toBeGreaterThan(lastZxid);
      back.close();
      w.close();
      // ZooKeeper found nothing to complain about in the files (a digest mismatch is an ERROR line).
      const log = readFileSync(zk.logFile, 'utf8');
      expect(
        log
          .split('\n')
          .filter((l) =>
            /\bERROR\b(?!.*command socket)|digests are not matching|digest mismatch|problem reading|not covering|inconsistent/i.test(l),
          ),
      ).toEqual([]);
    } finally {
      await zk.close();
    }
  }, 120_000);

  test('a fuzzy snapshot (writes during the walk, the empty digest) is served by ZooKeeper with an equal dump', async () => {
    const dataDir = tempDir();
    const events: StorageEvent[] = [];
    const server = createEmbeddedServer({
      dataDir,
      snapCount: 1e9,
      preAllocSize: 256,
      maxClientCnxns: 0,
      onStorageEvent: (e) => events.push(e),
    });
    let before: DumpedNode[];
    let lastZxid: bigint;
    let z: bigint;
    try {
      const { connectString } = await server.listen({ port: 0 });
      const c = await session(connectString);
      await ok(c, create('/fz', 'fuzzy'));
      for (let g = 0; g < 20; g++) {
        await ok(c, create(`/fz/g${g}`, `g${g}`));
        await ok(c, { type: OpCode.multi, ops: Array.from({ length: 1000 }, (_, j) => create(`/fz/g${g}/n${j}`, `v${g}.${j}`)) });
      }
      z = server.zxid;
      // The walk's first slice runs now; the writes land between the later ones.
      const snapping = server.snapshot();
      const writes: Array<Promise<unknown>> = [];
      for (const g of [0, 19, 1, 10, 18]) {
        writes.push(ok(c, { type: OpCode.setData, path: `/fz/g${g}/n3`, data: Buffer.from('changed'), version: 0 }));
        writes.push(ok(c, { type: OpCode.delete, path: `/fz/g${g}/n4`, version: -1 }));
        writes.push(ok(c, create(`/fz/g${g}/new`, 'new')));
        writes.push(
          ok(c, {
            type: OpCode.multi,
            ops: [create(`/fz/g${g}/m`, 'm'), { type: OpCode.setData, path: `/fz/g${g}`, data: Buffer.from('multi'), version: -1 }],
          }),
        );
        writes.push(ok(c, { type: OpCode.delete, path: `/fz/g${g}/n999`, version: -1 }));
        writes.push(ok(c, create(`/fz/g${g}/n999`, 'again')));
      }
      await Promise.all([snapping, ...writes]);
      const snap = events.find((e) => e.kind === 'snapshot');
      expect(snap).toMatchObject({ kind: 'snapshot', zxid: z, digest: false });
      before = await dumpTree(connectString);
      lastZxid = server.zxid;
      expect(lastZxid).toBeGreaterThan(z);
      await ok(c, { type: OpCode.closeSession });
      c.close();
      lastZxid = server.zxid;
    } finally {
      await server.close();
    }
    const snaps = files(dataDir).filter((n) => n.startsWith('snapshot.'));
    expect(snaps.at(-1)).toBe(`snapshot.${z.toString(16)}`);
    // The newest snapshot, the one ZooKeeper loads, carries the empty digest (its check is skipped).
    expect(decodeSnapshot(readFileSync(join(dataDir, 'version-2', snaps.at(-1)!)), true).digest).toBeUndefined();

    const zk = await TestingServer.start(zkSettings(dataDir));
    try {
      expect(await srvrZxid(zk.port)).toBe(lastZxid);
      expect(await dumpTree(zk.connectString)).toEqual(before);
      const log = readFileSync(zk.logFile, 'utf8');
      expect(
        log
          .split('\n')
          .filter((l) =>
            /\bERROR\b(?!.*command socket)|digests are not matching|digest mismatch|problem reading|not covering|inconsistent/i.test(l),
          ),
      ).toEqual([]);
    } finally {
      await zk.close();
    }
  }, 180_000);
});
