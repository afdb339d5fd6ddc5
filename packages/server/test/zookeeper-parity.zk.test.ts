/**
 * Parity with Apache ZooKeeper 3.8: the same request scripts run against a fresh embedded server
 * and a fresh real ZooKeeper (TestingServer over the TCP transport), and their transcripts must be
 * identical once session ids and times are abstracted: same error codes, same responses, same
 * Stats, and the same zxids relative to the first one (so every write, failed or not, must take a
 * zxid exactly when ZooKeeper takes one).
 *
 * This covers corners the conformance suite does not assert on their own: odd flag/op
 * combinations, zxid accounting of failed writes, system nodes' Stats, malformed arguments.
 */
import { describe, expect, test } from 'vitest';
import type { ACL, Request, Transport } from '@tenure/protocol';
import { AddWatchMode, OPEN_ACL_UNSAFE, OpCode, Perms } from '@tenure/protocol';
import { TestingServer, realZooKeeper } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { createEmbeddedServer } from '@tenure/server';
import { open, type RawSession } from './harness.js';

const zk = realZooKeeper();
const open_ = [...OPEN_ACL_UNSAFE] as ACL[];

type Step = Request | { open: number } | { use: number };

/** Runs a script; `{ open: n }` opens session n, `{ use: n }` switches to it. */
async function transcript(transport: Transport, steps: Step[]): Promise<unknown[]> {
  const sessions: RawSession[] = [];
  let cur: RawSession | undefined;
  const out: unknown[] = [];
  let base: bigint | undefined;
  const ids = new Map<bigint, string>();
  const norm = (v: unknown, key = ''): unknown => {
    if (typeof v === 'bigint') {
      if (ids.has(v)) return ids.get(v);
      if (key === 'ephemeralOwner') return v === 0n ? 0 : `owner:${v}`;
      if (v <= 0n) return Number(v);
      base ??= v;
      return `z${v - base}`;
    }
    if (key === 'ctime' || key === 'mtime') return 'T';
    if (Buffer.isBuffer(v)) return `buf:${v.toString('hex')}`;
    if (Array.isArray(v)) {
      const a = v.map((x) => norm(x));
      return key === 'children' || key === 'ephemerals' || key === 'clientInfo' ? a.map((x) => JSON.stringify(x)).sort() : a;
    }
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x, k)]));
    }
    return v;
  };
  for (const step of steps) {
    if ('open' in step) {
      const s = await open(transport, { timeoutMs: 4000 });
      ids.set(s.conn.sessionId, `session${step.open}`);
      sessions[step.open] = s;
      cur = s;
      continue;
    }
    if ('use' in step) {
      cur = sessions[step.use];
      continue;
    }
    try {
      const r = await cur!.conn.send(step);
      out.push({ op: step.type, ...(norm(r) as object) });
    } catch (e) {
      out.push({ op: step.type, rejected: (e as { keeperCode?: number }).keeperCode ?? String(e) });
    }
    // A ping on every session: notifications caused by the step arrive before its answer.
    await Promise.all(
      sessions.map((s) => (s && !s.conn.closed ? s.conn.send({ type: OpCode.ping }).catch(() => undefined) : Promise.resolve())),
    );
    // Sorted within a step: ZooKeeper deletes a closing session's ephemerals in hash-set order.
    const events = sessions.flatMap((s, i) => (s?.events.splice(0) ?? []).map((e) => ({ session: i, event: e })));
    out.push(...events.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))));
  }
  for (const s of sessions) if (s && !s.conn.closed) s.conn.close();
  return out;
}

const create = (path: string, flags = 0, type: 1 | 15 | 19 = OpCode.create, acl = open_): Request => ({
  type,
  path,
  data: null,
  acl,
  flags,
});
const ttl = (path: string, flags: number, t: bigint): Request => ({ type: OpCode.createTTL, path, data: null, acl: open_, flags, ttl: t });
const exists = (path: string, watch = false): Request => ({ type: OpCode.exists, path, watch });
const getData = (path: string, watch = false): Request => ({ type: OpCode.getData, path, watch });
const children = (path: string): Request => ({ type: OpCode.getChildren2, path, watch: false });

const scripts: Record<string, Step[]> = {
  'system nodes and the root': [
    { open: 0 },
    exists('/'),
    exists('/zookeeper'),
    exists('/zookeeper/quota'),
    getData('/zookeeper/config'),
    children('/'),
    children('/zookeeper'),
    { type: OpCode.getACL, path: '/zookeeper/config' },
    { type: OpCode.getACL, path: '/' },
    { type: OpCode.getAllChildrenNumber, path: '/' },
    { type: OpCode.whoAmI },
  ],
  'zxids of failed writes and of reads': [
    { open: 0 },
    create('/p'),
    create('/p'),
    exists('/p'),
    { type: OpCode.delete, path: '/p/none', version: -1 },
    { type: OpCode.setData, path: '/p', data: null, version: 7 },
    { type: OpCode.setACL, path: '/p', acl: [], version: -1 },
    { type: OpCode.multi, ops: [] },
    { type: OpCode.multi, ops: [{ type: OpCode.check, path: '/p', version: 3 }] },
    { type: OpCode.sync, path: '/p' },
    { type: OpCode.ping },
    getData('/p'),
    { open: 1 },
    { use: 0 },
    getData('/p'),
  ],
  'create flags and op codes': [
    { open: 0 },
    create('/f'),
    create('/f/plain-from-container-flag', 4),
    create('/f/container-ephemeral-flag', 1, OpCode.createContainer),
    create('/f/container-seq-', 2, OpCode.createContainer),
    create('/f/eph', 1, OpCode.create2),
    create('/f/eph-seq-', 3, OpCode.create2),
    create('/f/bad-flag', -1),
    create('/f/bad-flag', 7),
    create('/f/ttl-flag-plain-op', 5),
    ttl('/f/ttl', 5, 1000n),
    ttl('/f/ttl-seq-', 6, 1000n),
    ttl('/f/ttl-neg', 5, -5n),
    ttl('/f/ttl-nonttl-flag', 1, 1000n),
    { type: OpCode.getEphemerals, prefixPath: '/f' },
    { type: OpCode.getEphemerals, prefixPath: null as unknown as string }, // ZooKeeper reads a null prefix as 'all'
    children('/f'),
    exists('/f/plain-from-container-flag'),
    exists('/f/container-ephemeral-flag'),
  ],
  paths: [
    { open: 0 },
    create('/q'),
    create('/q/'),
    create('/q//x'),
    create('/q/x/'),
    create('/q/..'),
    create('/q/a\u0000b'),
    create('/q/\u007f'),
    create('/q/...'),
    create('/q/.a'),
    exists('/q/a\u0000b'),
    getData('/q/..'),
    { type: OpCode.delete, path: '/q/', version: -1 },
    { type: OpCode.delete, path: '/zookeeper/config', version: -1 },
    { type: OpCode.setData, path: '/q/', data: null, version: -1 },
    { type: OpCode.sync, path: '' },
    create('/zookeeper/mine'),
    { type: OpCode.delete, path: '/zookeeper/mine', version: -1 },
    { type: OpCode.setData, path: '/', data: Buffer.from('root'), version: -1 },
    getData('/'),
    { type: OpCode.setData, path: '/', data: Buffer.alloc(0), version: -1 },
  ],
  'ACL corners': [
    { open: 0 },
    create('/a'),
    create('/a/zero', 0, OpCode.create, [{ perms: 0, id: { scheme: 'world', id: 'anyone' } }]),
    getData('/a/zero'),
    exists('/a/zero'),
    { type: OpCode.getACL, path: '/a/zero' },
    create('/a/dup', 0, OpCode.create, [...open_, ...open_]),
    { type: OpCode.getACL, path: '/a/dup' },
    create('/a/ipmask', 0, OpCode.create, [{ perms: Perms.ALL, id: { scheme: 'ip', id: '127.0.0.0/8' } }]),
    getData('/a/ipmask'),
    create('/a/ipbad', 0, OpCode.create, [{ perms: Perms.ALL, id: { scheme: 'ip', id: '127.0.0.1/33' } }]),
    { type: OpCode.auth, authType: 0, scheme: 'ip', auth: Buffer.alloc(0) },
    { type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from('alice:pw') },
    { type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from('alice:pw') },
    { type: OpCode.whoAmI },
    create('/a/mine', 0, OpCode.create, [{ perms: Perms.ALL, id: { scheme: 'auth', id: 'ignored' } }]),
    { type: OpCode.getACL, path: '/a/mine' },
    create('/a/digest-trailing', 0, OpCode.create, [{ perms: Perms.ALL, id: { scheme: 'digest', id: 'x:y:' } }]),
    { type: OpCode.getACL, path: '/a/digest-trailing' },
    { type: OpCode.auth, authType: 0, scheme: 'world', auth: Buffer.from('anyone') },
    exists('/a'),
  ],
  'watch combinations on one connection': [
    { open: 0 },
    create('/x'),
    { open: 1 },
    { use: 0 },
    getData('/x', true),
    exists('/x', true),
    { type: OpCode.getChildren, path: '/x', watch: true },
    { type: OpCode.addWatch, path: '/', mode: AddWatchMode.PERSISTENT_RECURSIVE },
    { use: 1 },
    { type: OpCode.setData, path: '/x', data: Buffer.from('1'), version: -1 },
    create('/x/c'),
    create('/x/c/e', 1),
    { type: OpCode.delete, path: '/x/c/e', version: -1 },
    { type: OpCode.delete, path: '/x/c', version: -1 },
    { use: 0 },
    exists('/x', true),
    { type: OpCode.getChildren, path: '/x', watch: true },
    { type: OpCode.addWatch, path: '/x', mode: AddWatchMode.PERSISTENT },
    { use: 1 },
    { type: OpCode.delete, path: '/x', version: -1 },
    create('/x'),
    { type: OpCode.closeSession },
    { use: 0 },
    { type: OpCode.removeWatches, path: '/', watcherType: 3 },
    create('/x/after'),
  ],
  'ephemerals and sessions': [
    { open: 0 },
    create('/s'),
    { open: 1 },
    create('/s/e1', 1),
    create('/s/e2-', 3),
    { type: OpCode.multi, ops: [create('/s/e3', 1) as never, create('/s/p') as never] },
    { use: 0 },
    { type: OpCode.getChildren, path: '/s', watch: true },
    exists('/s/e1', true),
    { type: OpCode.getEphemerals, prefixPath: '/' },
    { use: 1 },
    { type: OpCode.getEphemerals, prefixPath: '/s/e' },
    { type: OpCode.closeSession },
    { use: 0 },
    children('/s'),
    exists('/s'),
  ],
  'watch requests with odd arguments': [
    { open: 0 },
    create('/w'),
    { type: OpCode.removeWatches, path: '/w', watcherType: 9 },
    { type: OpCode.addWatch, path: '/w', mode: 5 },
    { type: OpCode.addWatch, path: '/w', mode: AddWatchMode.PERSISTENT },
    { type: OpCode.checkWatches, path: '/w', watcherType: 1 },
    { type: OpCode.checkWatches, path: '/w', watcherType: 2 },
    { type: OpCode.removeWatches, path: '/w', watcherType: 1 },
    { type: OpCode.checkWatches, path: '/w', watcherType: 1 },
    { type: OpCode.checkWatches, path: '/w', watcherType: 3 },
    { type: OpCode.setData, path: '/w', data: null, version: -1 },
    create('/w/c'),
    { type: OpCode.setWatches, relativeZxid: 0n, dataWatches: ['/w', '/none'], existWatches: ['/w'], childWatches: ['/none'] },
    { type: OpCode.delete, path: '/w/c', version: -1 },
  ],
  'multi and multiRead corners': [
    { open: 0 },
    create('/m'),
    { type: OpCode.multi, ops: [getData('/m') as never] },
    { type: OpCode.multi, ops: [create('/m/x') as never, getData('/m') as never] },
    { type: OpCode.multiRead, ops: [{ type: OpCode.setData, path: '/m', data: null, version: -1 }] },
    { type: OpCode.multiRead, ops: [] },
    { type: OpCode.multiRead, ops: [{ type: OpCode.getData, path: '/m', watch: true }] },
    { type: OpCode.setData, path: '/m', data: null, version: -1 },
    {
      type: OpCode.multi,
      ops: [create('/m/c', 4) as never, ttl('/m/t', 5, 500n) as never, create('/m/p', 0, OpCode.createContainer) as never],
    },
    { type: OpCode.multi, ops: [create('/m/bad', 5) as never] },
    { type: OpCode.multi, ops: [ttl('/m/ttl-plain', 0, 500n) as never] },
    children('/m'),
    { type: OpCode.reconfig, joiningServers: null, leavingServers: null, newMembers: null, curConfigId: -1n },
  ],
};

describe.skipIf(!zk.available)('parity with ZooKeeper 3.8', () => {
  for (const [name, steps] of Object.entries(scripts)) {
    test(name, async () => {
      await using real = await TestingServer.start();
      const server = createEmbeddedServer({ tickMs: 200 });
      try {
        const expected = await transcript(zookeeper(real.connectString), steps);
        const actual = await transcript(server.transport(), steps);
        expect(actual).toEqual(expected);
      } finally {
        await server.close();
      }
    });
  }
});
