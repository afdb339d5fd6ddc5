/**
 * The data dir format against Debian's ZooKeeper 3.8, both ways: one server writes a varied tree
 * (sequential, ephemeral, TTL and container nodes, ACLs, 1 MiB of data, a multi, error txns) into
 * a data dir with a snapshot mid-way and stops; the other serves the same dir, and the trees,
 * dumped node by node with full stats and ACLs, are equal.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpCode } from '@tenure/protocol';
import { TestingServer } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { afterAll, expect, test } from 'vitest';
import { decodeSnapshot, treeDigest } from '../src/storage/snapshot.js';
import { listFiles } from '../src/storage/file-names.js';
import { startDurable } from './durable-child.js';
import { open, type RawSession } from './harness.js';
import { dumpTree, writeTree } from './tree-dump.js';

const root = mkdtempSync(join(tmpdir(), 'tenure-zkfmt-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const MAX_BUFFER = 4 * 1024 * 1024;
const zkSettings = (dataDir: string) => ({
  config: { dataDir, forceSync: 'yes', snapCount: 20 },
  systemProperties: { 'jute.maxbuffer': MAX_BUFFER, 'zookeeper.snapshot.trust.empty': false },
  logLevel: 'warn' as const,
});

async function reader(connectString: string): Promise<RawSession> {
  const s = await open(zookeeper(connectString, { maxFrameBytes: 16 * MAX_BUFFER }), { timeoutMs: 30_000 });
  const r = await s.conn.send({ type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from('alice:secret') });
  expect(r.err).toBe(0);
  return s;
}

test('ZooKeeper 3.8 writes a data dir; tenure-server serves the same tree', async () => {
  const dataDir = join(root, 'from-zookeeper');
  const zk = await TestingServer.start(zkSettings(dataDir));
  let before;
  try {
    const writer = await reader(zk.connectString);
    const owner = await open(zk.transport(), { timeoutMs: 30_000 });
    await writeTree(writer, owner, '/t');
    before = await dumpTree(writer);
    writer.conn.close();
    await zk.stop(); // killed, with the owner's session live
  } finally {
    await zk.close();
  }
  const files = readdirSync(join(dataDir, 'version-2'));
  expect(files.some((f) => f.startsWith('snapshot.') && f !== 'snapshot.0')).toBe(true);
  expect(files.some((f) => f.startsWith('log.'))).toBe(true);

  // ZooKeeper's snapshot digest is the one our digest computes for the tree it holds.
  const snaps = listFiles(join(dataDir, 'version-2'), 'snapshot');
  const newest = snaps[snaps.length - 1]!;
  const loaded = decodeSnapshot(readFileSync(newest.path), true);
  // (Only when the snapshot is not fuzzy: nothing in it is newer than the digest's zxid.)
  let newestInTree = 0n;
  for (const n of loaded.tree.nodes.values()) for (const z of [n.czxid, n.mzxid, n.pzxid]) if (z > newestInTree) newestInTree = z;
  console.log(`zookeeper snapshot ${newest.name}: digest at ${loaded.digest?.zxid}, newest zxid in the tree ${newestInTree}`);
  if (loaded.digest !== undefined && newestInTree <= loaded.digest.zxid) {
    expect(treeDigest(loaded.tree)).toBe(loaded.digest.digest);
  }

  const ours = await startDurable(['--data-dir', dataDir, '--max-buffer', String(MAX_BUFFER)]);
  try {
    const r = await reader(ours.connectString);
    const after = await dumpTree(r);
    expect(after).toEqual(before);
    expect(after.find((n) => n.path === '/t/eph')).toBeDefined();
    r.conn.close();
  } finally {
    await ours.kill('SIGTERM');
  }
}, 240_000);

test('tenure-server writes a data dir; ZooKeeper 3.8 serves the same tree', async () => {
  const dataDir = join(root, 'from-tenure');
  const ours = await startDurable(['--data-dir', dataDir, '--snap-count', '20', '--max-buffer', String(MAX_BUFFER)]);
  let before;
  try {
    const writer = await reader(ours.connectString);
    const owner = await open(zookeeper(ours.connectString), { timeoutMs: 30_000 });
    await writeTree(writer, owner, '/t');
    before = await dumpTree(writer);
    writer.conn.close();
  } finally {
    await ours.kill('SIGKILL');
  }
  const files = readdirSync(join(dataDir, 'version-2'));
  expect(files.filter((f) => f.startsWith('snapshot.')).length).toBeGreaterThan(1);

  const zk = await TestingServer.start(zkSettings(dataDir));
  try {
    const r = await reader(zk.connectString);
    const after = await dumpTree(r);
    expect(after).toEqual(before);
    r.conn.close();
    const log = readFileSync(zk.logFile, 'utf8');
    expect(log).not.toMatch(/digest mismatch|Digest .* mismatch|ERROR/i);
  } finally {
    await zk.close();
  }
}, 240_000);
