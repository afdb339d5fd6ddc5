/**
 * The data dir in-process: what is written survives close and reopen (snapshot plus log), the
 * output of a txn waits for its sync, and the files are ZooKeeper's format.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateMode, OPEN_ACL_UNSAFE, OpCode, type ACL } from '@tenure/protocol';
import { afterEach, expect, test } from 'vitest';
import { createEmbeddedServer, type EmbeddedServer } from '../src/index.js';
import { open } from './harness.js';

const dirs: string[] = [];
const servers: EmbeddedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'tenure-durable-'));
  dirs.push(d);
  return d;
}

function server(dir: string, extra: Parameters<typeof createEmbeddedServer>[0] = {}): EmbeddedServer {
  const s = createEmbeddedServer({ dataDir: dir, preAllocSize: 64, tickMs: 100, ...extra });
  servers.push(s);
  return s;
}

const acl: ACL[] = [...OPEN_ACL_UNSAFE];

test('an empty data dir gets snapshot.0 first; writes come back after a reopen with their stats', async () => {
  const dir = dataDir();
  const a = server(dir);
  expect(readdirSync(join(dir, 'version-2'))).toEqual(['snapshot.0']);
  const s = await open(a.transport());
  await s.conn.send({ type: OpCode.create, path: '/a', data: Buffer.from('one'), acl, flags: 0 });
  await s.conn.send({ type: OpCode.create, path: '/a/s-', data: null, acl, flags: CreateMode.PERSISTENT_SEQUENTIAL });
  await s.conn.send({ type: OpCode.setData, path: '/a', data: Buffer.from('two'), version: 0 });
  const digestAcl: ACL[] = [{ perms: 31, id: { scheme: 'digest', id: 'u:x1Ndvq2kyjAOOWmMKnazyB9EE/g=' } }];
  await s.conn.send({ type: OpCode.create, path: '/d', data: null, acl: digestAcl, flags: 0 });
  await s.conn.send({ type: OpCode.createContainer, path: '/c', data: null, acl, flags: CreateMode.CONTAINER });
  await s.conn.send({ type: OpCode.createTTL, path: '/t', data: null, acl, flags: CreateMode.PERSISTENT_WITH_TTL, ttl: 60_000n });
  await s.conn.send({
    type: OpCode.multi,
    ops: [
      { type: OpCode.create, path: '/m1', data: null, acl, flags: 0 },
      { type: OpCode.create, path: '/m1/x', data: Buffer.from('x'), acl, flags: 0 },
      { type: OpCode.setData, path: '/m1', data: Buffer.from('m'), version: 0 },
    ],
  });
  await s.conn.send({ type: OpCode.delete, path: '/a/s-0000000000', version: -1 }).catch(() => undefined);
  const before = ['/a', '/d', '/c', '/t', '/m1', '/m1/x', '/'].map((p) => a.node(p));
  const zxid = a.zxid;
  await a.close();
  const logs = readdirSync(join(dir, 'version-2')).filter((n) => n.startsWith('log.'));
  expect(logs).toEqual(['log.1']);
  const head = readFileSync(join(dir, 'version-2', 'log.1')).subarray(0, 16);
  expect(head.subarray(0, 4).toString()).toBe('ZKLG');
  expect(head.readInt32BE(4)).toBe(2);

  const b = server(dir);
  expect(b.zxid).toBe(zxid);
  expect(['/a', '/d', '/c', '/t', '/m1', '/m1/x', '/'].map((p) => b.node(p))).toEqual(before);
  expect(b.storageStats?.recovered.replayed).toBeGreaterThan(0);
  await b.close();
  // Reopened after a replay, it took a snapshot at the last zxid.
  expect(readdirSync(join(dir, 'version-2'))).toContain(`snapshot.${zxid.toString(16)}`);
  const c = server(dir);
  expect(c.storageStats?.recovered.snapshotZxid).toBe(zxid);
  expect(['/a', '/d', '/c', '/t', '/m1', '/m1/x', '/'].map((p) => c.node(p))).toEqual(before);
});

test('a reply and a watch event are delivered only after their txn is synced', async () => {
  const dir = dataDir();
  const durable: bigint[] = [];
  const a = server(dir, { onStorageEvent: (e) => e.kind === 'durable' && durable.push(e.zxid) });
  const w = await open(a.transport());
  const s = await open(a.transport());
  await w.conn.send({ type: OpCode.exists, path: '/x', watch: true });
  const replies: bigint[] = [];
  const sends = Array.from({ length: 50 }, (_, i) =>
    s.conn.send({ type: OpCode.create, path: `/x${i === 0 ? '' : i}`, data: null, acl, flags: 0 }).then((r) => {
      // When a reply arrives its zxid is already durable.
      expect(durable.at(-1)! >= r.zxid).toBe(true);
      replies.push(r.zxid);
    }),
  );
  const [event] = await w.eventCount(1);
  expect(event!.path).toBe('/x');
  expect(durable.length).toBeGreaterThan(0);
  await Promise.all(sends);
  // Group commit: 50 creates took fewer syncs than writes.
  expect(durable.length).toBeLessThan(50);
});

test('sessions survive a reopen with their id, password and ephemerals; one that does not come back expires', async () => {
  const dir = dataDir();
  const a = server(dir, { tickMs: 100, minSessionTimeoutMs: 200 });
  const s = await open(a.transport(), { timeoutMs: 2000 });
  const gone = await open(a.transport(), { timeoutMs: 600 });
  await s.conn.send({ type: OpCode.create, path: '/e', data: null, acl, flags: CreateMode.EPHEMERAL });
  await gone.conn.send({ type: OpCode.create, path: '/g', data: null, acl, flags: CreateMode.EPHEMERAL });
  const { sessionId, passwd } = s.conn;
  await a.close();
  const b = server(dir, { tickMs: 100, minSessionTimeoutMs: 200 });
  expect(
    b
      .sessions()
      .map((x) => x.sessionId)
      .sort(),
  ).toEqual([sessionId, gone.conn.sessionId].sort());
  const back = await open(b.transport(), { sessionId, passwd, timeoutMs: 2000 });
  expect(back.conn.sessionId).toBe(sessionId);
  expect(b.node('/e')?.stat.ephemeralOwner).toBe(sessionId);
  // The one that stays away expires after its timeout, counted from the reopen.
  await new Promise((r) => setTimeout(r, 1200));
  expect(b.node('/g')).toBeUndefined();
  expect(b.node('/e')).toBeDefined();
});

test('Adler-32 as java.util.zip computes it', async () => {
  const { adler32 } = await import('../src/storage/adler32.js');
  expect(adler32(Buffer.from('Wikipedia'))).toBe(0x11e60398);
  expect(adler32(Buffer.alloc(0))).toBe(1);
  const big = Buffer.alloc(3 << 20, 0xff);
  // Reference: the same sums reduced per byte.
  let a = 1;
  let b = 0;
  for (const x of big) {
    a = (a + x) % 65521;
    b = (b + a) % 65521;
  }
  expect(adler32(big)).toBe(b * 65536 + a);
});

test('snapshots every snapCount txns roll the log; recovery uses the newest; autopurge keeps 3', async () => {
  const dir = dataDir();
  const a = server(dir, { snapCount: 20, autopurge: { snapRetainCount: 3, purgeIntervalHours: 0 } });
  const s = await open(a.transport());
  for (let i = 0; i < 200; i++) await s.conn.send({ type: OpCode.create, path: `/n${i}`, data: Buffer.from(String(i)), acl, flags: 0 });
  await new Promise((r) => setTimeout(r, 100));
  const names = () => readdirSync(join(dir, 'version-2')).sort();
  const snaps = names().filter((n) => n.startsWith('snapshot.'));
  const logs = names().filter((n) => n.startsWith('log.'));
  expect(snaps.length).toBeGreaterThan(6);
  expect(logs.length).toBeGreaterThan(6);
  expect(names().some((n) => n.startsWith('tmp.'))).toBe(false);
  const purged = a.purge();
  expect(purged.snapshots.length).toBe(snaps.length - 3);
  expect(names().filter((n) => n.startsWith('snapshot.')).length).toBe(3);
  const zxid = a.zxid;
  await a.close();
  const b = server(dir);
  expect(b.zxid).toBe(zxid);
  for (let i = 0; i < 200; i++) expect(b.node(`/n${i}`)?.data?.toString()).toBe(String(i));
});

test('a torn last record is cut off and the server starts with everything before it', async () => {
  const { truncateSync, statSync } = await import('node:fs');
  const dir = dataDir();
  const a = server(dir);
  const s = await open(a.transport());
  for (let i = 0; i < 10; i++) await s.conn.send({ type: OpCode.create, path: `/n${i}`, data: Buffer.from('abcdefgh'), acl, flags: 0 });
  await a.close();
  const log = join(dir, 'version-2', 'log.1');
  // Find the end of the records, then cut the last one in half.
  const buf = readFileSync(log);
  let off = 16;
  let last = 16;
  while (buf.readInt32BE(off + 8) !== 0) {
    last = off;
    off += 13 + buf.readInt32BE(off + 8);
  }
  truncateSync(log, last + 20);
  const b = server(dir);
  expect(b.node('/n8')).toBeDefined();
  expect(b.node('/n9')).toBeUndefined();
  expect(statSync(log).size).toBe(last);
});

test('the start-up snapshot after a replay lands after serving; a crash before or during it leaves the dir recoverable', async () => {
  const dir = dataDir();
  const a = server(dir);
  const s = await open(a.transport());
  for (let i = 0; i < 20; i++) await s.conn.send({ type: OpCode.create, path: `/n${i}`, data: Buffer.from(`v${i}`), acl, flags: 0 });
  const zxid = a.zxid;
  const before = ['/', '/n0', '/n19'].map((p) => a.node(p));
  await a.close();
  servers.splice(servers.indexOf(a), 1);

  const b = server(dir);
  expect(b.storageStats?.recovered.replayed).toBeGreaterThanOrEqual(20);
  // Serving already, and not yet snapshotted: what a SIGKILL now would leave on disk.
  const v2 = join(dir, 'version-2');
  expect(readdirSync(v2)).not.toContain(`snapshot.${zxid.toString(16)}`);
  const crashed = dataDir();
  cpSync(dir, crashed, { recursive: true });
  // And a crash during the write: a partial temp file beside it.
  const full = await (async () => {
    await b.close(); // the close waits for the start-up snapshot
    return readFileSync(join(v2, `snapshot.${zxid.toString(16)}`));
  })();
  writeFileSync(join(crashed, 'version-2', `tmp.snapshot.${zxid.toString(16)}`), full.subarray(0, full.length >> 1));

  const c = server(crashed);
  expect(c.zxid).toBe(zxid);
  expect(c.storageStats?.recovered.replayed).toBe(b.storageStats?.recovered.replayed);
  expect(['/', '/n0', '/n19'].map((p) => c.node(p))).toEqual(before);
  expect(readdirSync(join(crashed, 'version-2')).some((n) => n.startsWith('tmp.'))).toBe(false);
});
