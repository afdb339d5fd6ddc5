/**
 * Recovery of a damaged data dir: one random byte of a snapshot or the txn log is changed, 100
 * times. The server never crashes: it either starts with every record that lies before the
 * damage, or refuses with a DataDirCorruptError that names the damaged file and an offset at or
 * before the damage. A few cases run in the child process too, to see the refusal at process level.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPEN_ACL_UNSAFE, OpCode, type ACL } from '@tenure/protocol';
import { afterAll, expect, test } from 'vitest';
import { createEmbeddedServer } from '../src/index.js';
import { DataDirCorruptError } from '../src/storage/storage-errors.js';
import { runDurable } from './durable-child.js';
import { open } from './harness.js';

const acl: ACL[] = [...OPEN_ACL_UNSAFE];
const root = mkdtempSync(join(tmpdir(), 'tenure-corrupt-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Record boundaries of a clean log: [start, end, zxid] per record. */
function records(buf: Buffer): Array<[number, number, bigint]> {
  const out: Array<[number, number, bigint]> = [];
  let off = 16;
  while (off + 12 <= buf.length) {
    const len = buf.readInt32BE(off + 8);
    if (len === 0) break;
    out.push([off, off + 13 + len, buf.readBigInt64BE(off + 12 + 12)]);
    off += 13 + len;
  }
  return out;
}

test('100 random damaged bytes: start with every record before the damage, or refuse naming the file and offset', async () => {
  const base = join(root, 'base');
  const s = createEmbeddedServer({ dataDir: base, preAllocSize: 16, snapCount: 1_000_000 });
  const c = await open(s.transport());
  const zxidOf = new Map<string, bigint>();
  for (let i = 0; i < 120; i++) {
    const path = `/n${i}`;
    const r = await c.conn.send({ type: OpCode.create, path, data: Buffer.from(`data-${i}-${'y'.repeat(i)}`), acl, flags: 0 });
    zxidOf.set(path, r.zxid);
    if (i === 60) await s.snapshot();
  }
  await s.close();
  const v2 = join(base, 'version-2');
  const files = readdirSync(v2).sort();
  const log = files.find((f) => f.startsWith('log.'))!;
  const snaps = files.filter((f) => f.startsWith('snapshot.'));
  expect(snaps.length).toBe(2);
  const bounds = records(readFileSync(join(v2, log)));
  const logUsed = bounds.at(-1)![1];

  let started = 0;
  let refused = 0;
  for (let k = 0; k < 100; k++) {
    const dir = join(root, `case-${k}`);
    cpSync(base, dir, { recursive: true });
    // Half the cases in the log's records, a few in its zero tail, the rest in a snapshot.
    const pick = k % 10;
    const name = pick < 5 ? log : pick === 5 ? log : snaps[pick % 2]!;
    const file = join(dir, 'version-2', name);
    const size = statSync(file).size;
    const at = name === log && pick < 5 ? Math.floor(Math.random() * logUsed) : name === log ? logUsed + Math.floor(Math.random() * 2000) : Math.floor(Math.random() * size);
    const bytes = readFileSync(file);
    bytes[at] ^= 1 + Math.floor(Math.random() * 255);
    writeFileSync(file, bytes);
    let server;
    try {
      server = createEmbeddedServer({ dataDir: dir, preAllocSize: 16 });
    } catch (err) {
      expect(err, `case ${k}: ${name} byte ${at}`).toBeInstanceOf(DataDirCorruptError);
      const e = err as DataDirCorruptError;
      expect(e.file).toBe(file);
      expect(e.message).toContain(name);
      expect(e.offset).toBeLessThanOrEqual(at);
      refused++;
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    // Started: every record wholly before the damage is there (all of them when a snapshot was hit:
    // the older snapshot and the full log cover it).
    const mustHave = name === log ? bounds.filter(([, end]) => end <= at).map(([, , z]) => z) : [...zxidOf.values()];
    const have = new Set(mustHave);
    for (const [path, z] of zxidOf) {
      if (have.has(z)) expect(server.node(path), `case ${k}: ${name} byte ${at}, ${path}`).toBeDefined();
    }
    started++;
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`corruption: 100 cases, ${started} started with every record before the damage, ${refused} refused naming the file and offset`);
  expect(started + refused).toBe(100);
}, 300_000);

test('the process refuses a damaged log with the file and offset, and exits 2', async () => {
  const base = join(root, 'proc');
  const s = createEmbeddedServer({ dataDir: base, preAllocSize: 16 });
  const c = await open(s.transport());
  for (let i = 0; i < 20; i++) await c.conn.send({ type: OpCode.create, path: `/p${i}`, data: Buffer.from('p'), acl, flags: 0 });
  await s.close();
  const file = join(base, 'version-2', 'log.1');
  const bytes = readFileSync(file);
  const [start] = records(bytes)[5]!;
  bytes[start + 20] ^= 0xff;
  writeFileSync(file, bytes);
  const r = await runDurable(['--data-dir', base]);
  expect(r.code).toBe(2);
  expect(r.output).toContain(`refused ${file} is corrupt at offset ${start}`);
}, 60_000);
