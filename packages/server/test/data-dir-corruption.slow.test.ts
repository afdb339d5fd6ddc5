/**
 * Recovery of a data dir with one damaged byte, 100 seeded cases (CORRUPTION_SEED to replay
 * another set). A dir is built once from a known sequence of writes (several snapshots and logs,
 * the state after every txn recorded through the server's own introspection); each case copies
 * it, flips one byte of one file (log or snapshot, random offset) and opens a server on it.
 *
 * Every case must end in one of:
 *   - started, with the tree of some zxid L at or past the last txn before the damage (complete,
 *     a torn tail cut, or an older snapshot used because the newest is damaged);
 *   - refused with DataDirCorruptError naming the damaged file and an offset at or before the
 *     damaged byte, and only when valid data follows the damage (a later record or log) or no
 *     valid snapshot is left.
 * Nothing else: no other exception, no hang.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateMode, OPEN_ACL_UNSAFE, OpCode, type ACL } from '@tenure/protocol';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { TenureServerProcess, fourLetterWord, seededRandom } from '@tenure/testing';
import { createEmbeddedServer, type EmbeddedServer } from '../src/index.js';
import { DataDirCorruptError } from '../src/storage/storage-errors.js';
import { open } from './harness.js';

const SEED = Number(process.env.CORRUPTION_SEED ?? 16);
const CASES = 100;

const acl: ACL[] = [...OPEN_ACL_UNSAFE];
let root: string;
let pristine: string;
/** The tree (canonical text) after each zxid. */
const states = new Map<bigint, string>();
let finalZxid: bigint;

/** Every node from the root, with data and the whole Stat: independent of the storage code. */
function treeText(server: EmbeddedServer): string {
  const out: string[] = [];
  const visit = (path: string): void => {
    const n = server.node(path);
    if (n === undefined) return;
    const s = n.stat;
    out.push(
      [
        path,
        n.data === null ? '-' : n.data.toString('hex'),
        JSON.stringify(n.acl),
        s.czxid,
        s.mzxid,
        s.pzxid,
        s.ctime,
        s.mtime,
        s.version,
        s.cversion,
        s.aversion,
        s.ephemeralOwner,
      ].join(' '),
    );
    for (const c of [...n.children].sort()) visit(path === '/' ? `/${c}` : `${path}/${c}`);
  };
  visit('/');
  return out.join('\n');
}

interface LogRecord {
  zxid: bigint;
  start: number;
  end: number;
}

/** The records of a pristine log file, read independently of log-reader.ts. */
function logRecords(buf: Buffer): LogRecord[] {
  const out: LogRecord[] = [];
  let off = 16;
  while (off + 12 <= buf.length) {
    const len = buf.readInt32BE(off + 8);
    if (len === 0) break;
    out.push({ zxid: buf.readBigInt64BE(off + 12 + 12), start: off, end: off + 13 + len });
    off += 13 + len;
  }
  return out;
}

const zxidOf = (name: string): bigint => BigInt('0x' + name.split('.')[1]);
const byZxid = (a: string, b: string): number => (zxidOf(a) < zxidOf(b) ? -1 : zxidOf(a) > zxidOf(b) ? 1 : 0);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tenure-corruption-'));
  pristine = join(root, 'pristine');
  // Snapshot points come from Math.random: seeded, the layout of the dir is the same every run.
  const random = seededRandom(SEED ^ 0x5eed);
  const spy = vi.spyOn(Math, 'random').mockImplementation(random);
  try {
    const server = createEmbeddedServer({ dataDir: pristine, snapCount: 24, preAllocSize: 4, tickMs: 100, maxSessionTimeoutMs: 600_000 });
    const record = (): void => void states.set(server.zxid, treeText(server));
    record();
    const a = await open(server.transport(), { timeoutMs: 600_000 });
    const b = await open(server.transport(), { timeoutMs: 600_000 });
    record();
    const send = async (s: typeof a, req: Parameters<typeof a.conn.send>[0]): Promise<void> => {
      await s.conn.send(req);
      record();
    };
    await send(a, { type: OpCode.create, path: '/q', data: Buffer.from('queue'), acl, flags: 0 });
    for (let i = 0; i < 40; i++) {
      await send(a, {
        type: OpCode.create,
        path: '/q/item-',
        data: Buffer.alloc(20 + (i % 7) * 30, i),
        acl,
        flags: CreateMode.PERSISTENT_SEQUENTIAL,
      });
      if (i % 3 === 0) await send(b, { type: OpCode.setData, path: '/q', data: Buffer.from(`v${i}`), version: -1 });
      if (i % 5 === 4) await send(b, { type: OpCode.delete, path: `/q/item-${String(i - 2).padStart(10, '0')}`, version: -1 });
      if (i % 8 === 0) await send(b, { type: OpCode.create, path: `/e${i}`, data: null, acl, flags: CreateMode.EPHEMERAL });
      if (i % 9 === 0) {
        await send(a, {
          type: OpCode.multi,
          ops: [
            { type: OpCode.create, path: `/m${i}`, data: Buffer.from('m'), acl, flags: 0 },
            { type: OpCode.setData, path: '/q', data: Buffer.from(`multi ${i}`), version: -1 },
          ],
        });
      }
    }
    await send(a, { type: OpCode.createTTL, path: '/ttl', data: null, acl, flags: CreateMode.PERSISTENT_WITH_TTL, ttl: 3_600_000n });
    await send(a, { type: OpCode.createContainer, path: '/c', data: null, acl, flags: CreateMode.CONTAINER });
    await send(a, { type: OpCode.create, path: '/c/x', data: Buffer.alloc(3000, 7), acl, flags: 0 });
    await b.conn.send({ type: OpCode.closeSession });
    record();
    finalZxid = server.zxid;
    await server.close();
  } finally {
    spy.mockRestore();
  }
  const files = readdirSync(join(pristine, 'version-2'));
  expect(files.filter((f) => f.startsWith('snapshot.')).length).toBeGreaterThanOrEqual(3);
  expect(files.filter((f) => f.startsWith('log.')).length).toBeGreaterThanOrEqual(3);
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

type Outcome = 'started-complete' | 'started-truncated-at-tail' | 'fell-back' | 'refused';

test(`recovery with one damaged byte: ${CASES} seeded cases (seed ${SEED}) start with every record before the damage or refuse naming the file and offset`, async () => {
  const dir = join(pristine, 'version-2');
  const names = readdirSync(dir).filter((n) => n.startsWith('log.') || n.startsWith('snapshot.'));
  const logs = names.filter((n) => n.startsWith('log.')).sort(byZxid);
  const snaps = names.filter((n) => n.startsWith('snapshot.')).sort(byZxid);
  const records = new Map(logs.map((n) => [n, logRecords(readFileSync(join(dir, n)))]));
  const rand = seededRandom(SEED);
  const counts: Record<Outcome, number> & Record<string, number> = {
    'started-complete': 0,
    'started-truncated-at-tail': 0,
    'fell-back': 0,
    refused: 0,
  };
  const byFile = { log: 0, snapshot: 0 };
  const cases: string[] = [];
  for (let i = 0; i < CASES; i++) {
    // One case in ten hits the newest log's last record (a damaged tail); the others a random
    // file. In a log, the offset is drawn from the written records plus 256 bytes of the zero
    // preallocation after them (uniform over the whole preallocated file, most cases would land
    // in zeros that are never read); in a snapshot, from the whole file.
    let file: string;
    let pos: number;
    const lastLog = logs[logs.length - 1]!;
    const lastRecord = records.get(lastLog)!.at(-1)!;
    if (rand() < 0.1) {
      file = lastLog;
      pos = lastRecord.start + Math.floor(rand() * (lastRecord.end - lastRecord.start));
    } else {
      file = names[Math.floor(rand() * names.length)]!;
      const size = statSync(join(dir, file)).size;
      const used = file.startsWith('log.') ? Math.min(size, (records.get(file)!.at(-1)?.end ?? 16) + 256) : size;
      pos = Math.floor(rand() * used);
    }
    const size = statSync(join(dir, file)).size;
    // Half flip bits (xor), half overwrite the byte with another value.
    const flip = rand() < 0.5;
    const value = Math.floor(rand() * 255);
    const label = `case ${i}: ${file} byte ${pos}/${size} ${flip ? 'xor' : 'set'} 0x${value.toString(16)}`;
    const copy = join(root, `case-${i}`);
    mkdirSync(join(copy, 'version-2'), { recursive: true });
    for (const n of names) copyFileSync(join(dir, n), join(copy, 'version-2', n));
    const target = join(copy, 'version-2', file);
    const bytes = readFileSync(target);
    if (flip) bytes[pos]! ^= value + 1;
    else bytes[pos] = value >= bytes[pos]! ? value + 1 : value; // never the byte it was
    writeFileSync(target, bytes);
    const isLog = file.startsWith('log.');
    byFile[isLog ? 'log' : 'snapshot']++;

    // The last zxid whose record lies wholly before the damage: everything up to it must survive.
    let mustKeep = -1n;
    if (isLog) {
      for (const n of logs) {
        if (byZxid(n, file) >= 0) break;
        for (const r of records.get(n)!) mustKeep = r.zxid;
      }
      for (const r of records.get(file)!) if (r.end <= pos) mustKeep = r.zxid;
      if (mustKeep < 0n) mustKeep = zxidOf(snaps[0]!);
    } else mustKeep = finalZxid; // logs are intact: an older snapshot plus the logs still reach the end

    const t0 = performance.now();
    let server: EmbeddedServer | undefined;
    let outcome: Outcome;
    try {
      server = createEmbeddedServer({ dataDir: copy, preAllocSize: 4, tickMs: 100, maxSessionTimeoutMs: 600_000 });
      const ms = performance.now() - t0;
      expect(ms, `${label}: recovery took ${ms} ms`).toBeLessThan(10_000);
      const zxid = server.zxid;
      expect(zxid >= mustKeep, `${label}: started at 0x${zxid.toString(16)}, lost records up to 0x${mustKeep.toString(16)}`).toBe(true);
      expect(states.has(zxid), `${label}: zxid 0x${zxid.toString(16)} is no state of the sequence`).toBe(true);
      expect(treeText(server), `${label}: tree`).toBe(states.get(zxid));
      if (zxid < finalZxid) {
        // Only a damaged last record may be dropped (a torn tail); damage with records after it refuses.
        expect(
          isLog && file === lastLog && pos >= lastRecord.start,
          `${label}: started at 0x${zxid.toString(16)}, dropping records after the damage`,
        ).toBe(true);
      }
      const loaded = server.storageStats!.recovered.snapshotZxid!;
      if (loaded < zxidOf(snaps[snaps.length - 1]!)) outcome = 'fell-back';
      else if (zxid < finalZxid) outcome = 'started-truncated-at-tail';
      else outcome = 'started-complete';
      // It serves: a write takes the next zxid.
      const s = await open(server.transport());
      const r = await s.conn.send({ type: OpCode.create, path: '/after', data: null, acl, flags: 0 });
      expect(r.err, label).toBe(0);
      expect(r.zxid > zxid, label).toBe(true);
    } catch (err) {
      if (!(err instanceof DataDirCorruptError)) throw new Error(`${label}: ${String((err as Error)?.stack ?? err)}`);
      outcome = 'refused';
      expect(err.file, label).toBe(target);
      expect(err.offset, `${label}: ${err.message}`).toBeLessThanOrEqual(pos);
      expect(err.message, label).toContain(target);
      expect(err.message, label).toContain(`offset ${err.offset}`);
      if (isLog) {
        // Refused only when something valid follows: a later record in this file or a later log.
        const recs = records.get(file)!;
        const damaged = recs.findIndex((r) => pos < r.end);
        const laterLog = logs.indexOf(file) < logs.length - 1;
        expect(pos < 16 || laterLog || (damaged >= 0 && damaged < recs.length - 1), `${label}: refused a torn tail (${err.message})`).toBe(
          true,
        );
        if (pos >= 16)
          expect(
            recs.some((r) => r.start === err.offset),
            `${label}: offset ${err.offset} is no record start`,
          ).toBe(true);
      } else {
        // A snapshot: refused only when no valid one is left (this is the only snapshot).
        expect(snaps.length, `${label}: refused though older snapshots exist (${err.message})`).toBe(1);
      }
    } finally {
      await server?.close();
      rmSync(copy, { recursive: true, force: true });
    }
    counts[outcome]++;
    cases.push(`${label}: ${outcome}`);
  }
  console.log(
    `data-dir corruption, seed ${SEED}: ${JSON.stringify(counts)}; damaged files: ${JSON.stringify(byFile)}\n${cases.join('\n')}`,
  );
  expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(CASES);
}, 300_000);

/** A copy of the pristine dir with one byte of `file` changed; returns the dir and the file's path. */
function damagedCopy(name: string, file: string, pos: number): { dir: string; path: string } {
  const copy = join(root, name);
  const from = join(pristine, 'version-2');
  mkdirSync(join(copy, 'version-2'), { recursive: true });
  for (const n of readdirSync(from)) copyFileSync(join(from, n), join(copy, 'version-2', n));
  const path = join(copy, 'version-2', file);
  const bytes = readFileSync(path);
  bytes[pos]! ^= 0x5a;
  writeFileSync(path, bytes);
  return { dir: copy, path };
}

test('the tenure-server process: damage in the middle exits 1 with a fatal log line naming the file and offset; a damaged last record is cut and it serves', async () => {
  const logs = readdirSync(join(pristine, 'version-2'))
    .filter((n) => n.startsWith('log.'))
    .sort(byZxid);
  const last = logs[logs.length - 1]!;
  const recs = logRecords(readFileSync(join(pristine, 'version-2', last)));
  expect(recs.length).toBeGreaterThan(2);

  const middle = damagedCopy('process-middle', last, recs[1]!.start + 14);
  const refused = TenureServerProcess.spawn({ args: ['--data-dir', middle.dir] });
  const exit = await refused.exited;
  expect(exit.code).toBe(1);
  const fatal = refused.logs.find((l) => l.level === 60);
  expect(fatal?.msg).toBe('tenure-server could not start');
  const err = fatal?.err as { type: string; file: string; offset: number; message: string };
  expect(err).toMatchObject({ type: 'DataDirCorruptError', file: middle.path, offset: recs[1]!.start });
  expect(err.message).toContain(`${middle.path} is corrupt at offset ${recs[1]!.start}`);

  const tail = damagedCopy('process-tail', last, recs[recs.length - 1]!.start + 14);
  const server = await TenureServerProcess.start({ args: ['--data-dir', tail.dir, '--4lw-whitelist', 'srvr'] });
  try {
    expect(server.logs.filter((l) => l.level >= 50)).toEqual([]);
    expect(await fourLetterWord('127.0.0.1', server.port, 'srvr')).toMatch(/^Zxid: 0x/m);
  } finally {
    const stopped = await server.stop();
    expect(stopped, server.stderr).toMatchObject({ code: 0 });
  }
  expect(statSync(tail.path).size).toBe(recs[recs.length - 1]!.start); // the damaged record was cut off
}, 60_000);
