/**
 * Recovery replays a log through a window (replayLogFile) and hands over to the whole-file reader
 * (readLogBuffer) at the first record that is not clean. A log of a few megabytes here, so the
 * window slides several times before the damage: each record is delivered once, and the torn
 * tail or the damage is the one the whole-file reader names.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPEN_ACL_UNSAFE, OpCode } from '@tenure/protocol';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createEmbeddedServer } from '../src/index.js';
import { listFiles, type DataFile } from '../src/storage/file-names.js';
import { readLogBuffer, replayLogFile } from '../src/storage/log-reader.js';
import { DataDirCorruptError } from '../src/storage/storage-errors.js';
import { open } from './harness.js';

const CREATES = 3000; // ~1 KB each: a 3 MB log, three windows of 1 MiB
let root: string;
let pristine: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tenure-log-window-'));
  pristine = join(root, 'pristine');
  const server = createEmbeddedServer({ dataDir: pristine, preAllocSize: 4, tickMs: 100 });
  const s = await open(server.transport());
  await Promise.all(
    Array.from({ length: CREATES }, (_, i) =>
      s.conn.send({ type: OpCode.create, path: `/n${i}`, data: Buffer.alloc(1000, i), acl: [...OPEN_ACL_UNSAFE], flags: 0 }),
    ),
  );
  await server.close();
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A copy of the pristine dir and its one log. */
function copy(name: string): { dir: string; log: DataFile } {
  const dir = join(root, name);
  const logs = listFiles(join(pristine, 'version-2'), 'log');
  expect(logs).toHaveLength(1);
  const to = join(dir, 'version-2');
  rmSync(dir, { recursive: true, force: true });
  for (const f of [...listFiles(join(pristine, 'version-2'), 'snapshot'), ...logs]) {
    const target = join(to, f.path.slice(f.path.lastIndexOf('/') + 1));
    mkdirSync(to, { recursive: true });
    writeFileSync(target, readFileSync(f.path));
  }
  return { dir, log: listFiles(to, 'log')[0]! };
}

/** Record starts of a log file's bytes. */
function recordStarts(buf: Buffer): number[] {
  const out: number[] = [];
  for (let off = 16; off + 12 <= buf.length && buf.readInt32BE(off + 8) !== 0; off += 13 + buf.readInt32BE(off + 8)) out.push(off);
  return out;
}

test('a clean log: the same records, in order, as the whole-file reader gives', () => {
  const { log } = copy('clean');
  const seen: bigint[] = [];
  const windowed = replayLogFile(log, (t) => seen.push(t.header.zxid));
  const whole = readLogBuffer(log, readFileSync(log.path));
  expect(windowed.tornAt).toBeUndefined();
  expect(windowed.count).toBe(whole.count);
  expect(windowed.count).toBeGreaterThan(CREATES);
  expect(windowed.end).toBe(whole.end);
  expect(seen).toEqual(whole.txns.map((t) => t.header.zxid));
});

test('one damaged byte past the first windows: every record before it once, then the damage named by file and offset', () => {
  const { dir, log } = copy('damaged');
  const buf = readFileSync(log.path);
  const starts = recordStarts(buf);
  const victim = starts.findIndex((s) => s > 2_500_000);
  expect(victim).toBeGreaterThan(0);
  buf[starts[victim]! + 40] = buf[starts[victim]! + 40]! ^ 0x5a;
  writeFileSync(log.path, buf);
  const seen: bigint[] = [];
  const r = replayLogFile(log, (t) => seen.push(t.header.zxid));
  expect(r.tornAt).toBe(starts[victim]);
  expect(r.count).toBe(victim);
  expect(new Set(seen).size).toBe(victim);
  // Valid records follow it: recovery refuses, naming the file and the offset.
  let error: unknown;
  try {
    createEmbeddedServer({ dataDir: dir, preAllocSize: 4, tickMs: 100 });
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(DataDirCorruptError);
  expect((error as DataDirCorruptError).file).toBe(log.path);
  expect((error as DataDirCorruptError).offset).toBe(starts[victim]);
});

test('a last record cut short past the first windows is a torn tail: recovery cuts it and serves every record before it', async () => {
  const { dir, log } = copy('torn');
  const before = readFileSync(log.path);
  const starts = recordStarts(before);
  const last = starts[starts.length - 1]!;
  const creates = readLogBuffer(log, before)
    .txns.slice(0, -1)
    .filter((t) => t.header.type === OpCode.create).length;
  truncateSync(log.path, last + 30);
  const r = replayLogFile(log, () => undefined);
  expect(r.tornAt).toBe(last);
  expect(r.count).toBe(starts.length - 1);
  const server = createEmbeddedServer({ dataDir: dir, preAllocSize: 4, tickMs: 100 });
  try {
    const s = await open(server.transport());
    const children = await s.conn.send({ type: OpCode.getChildren, path: '/', watch: false });
    expect(children.err).toBe(0);
    // Every create before the cut record (and /zookeeper).
    expect((children.response as { children: string[] }).children.filter((c) => c.startsWith('n'))).toHaveLength(creates);
    expect(creates).toBeGreaterThanOrEqual(CREATES - 1);
  } finally {
    await server.close();
  }
});
