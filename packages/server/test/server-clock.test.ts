/**
 * The server's time on a ManualClock (createEmbeddedServer({ clock })): wall time (ctime, mtime,
 * TTLs) moves with the clock, the reaper and the session wheel fire on it. No sleeps.
 */
import { afterEach, expect, test } from 'vitest';
import { CreateMode, OPEN_ACL_UNSAFE, OpCode } from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { ManualClock } from '@tenure/testing';
import { open } from './harness.js';

let server: EmbeddedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

test('a TTL node is reaped at the first reaper pass after its TTL, and not before', async () => {
  const clock = new ManualClock();
  server = createEmbeddedServer({ clock, containerCheckIntervalMs: 100 });
  const s = await open(server.transport());
  const created = Date.now();
  const r = await s.conn.send({
    type: OpCode.createTTL,
    path: '/t',
    data: null,
    acl: [...OPEN_ACL_UNSAFE],
    flags: CreateMode.PERSISTENT_WITH_TTL,
    ttl: 250n,
  });
  expect(r.err).toBe(0);
  // Wall time is the clock's: ctime is (about) now, however long the test has run.
  expect(Math.abs(server.node('/t')!.stat.ctime - created)).toBeLessThan(1000);
  await clock.advance(200); // passes at +100 and +200: 200 ms is not past a 250 ms TTL
  expect(server.node('/t')).toBeDefined();
  await clock.advance(99);
  expect(server.node('/t')).toBeDefined();
  await clock.advance(1); // the pass at +300
  expect(server.node('/t')).toBeUndefined();
  s.conn.close();
});

test('mtime moves with the clock', async () => {
  const clock = new ManualClock();
  server = createEmbeddedServer({ clock });
  const s = await open(server.transport());
  await s.conn.send({ type: OpCode.create, path: '/n', data: null, acl: [...OPEN_ACL_UNSAFE], flags: 0 });
  const ctime = server.node('/n')!.stat.ctime;
  await clock.advance(5_000); // within the session's 10 s timeout
  await s.conn.send({ type: OpCode.setData, path: '/n', data: Buffer.from('x'), version: -1 });
  expect(server.node('/n')!.stat.mtime - ctime).toBe(5_000);
  s.conn.close();
});

test('a session expires at the first tick boundary after its timeout', async () => {
  const clock = new ManualClock(); // starts on a boundary of 100
  server = createEmbeddedServer({ clock, tickMs: 100 });
  const s = await open(server.transport(), { timeoutMs: 250 });
  await clock.advance(299);
  expect(server.sessions()).toHaveLength(1);
  await clock.advance(1); // the boundary at +300
  expect(server.sessions()).toHaveLength(0);
  expect((await s.closed).message).toMatch(/expired/);
});
