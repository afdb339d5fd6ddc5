import { afterEach, describe, expect, test } from 'vitest';
import { CreateMode, EventType, OpCode } from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { ManualClock } from '@tenure/testing';
import { create, open, tryOpen, type RawSession } from './harness.js';

let server: EmbeddedServer;
afterEach(async () => {
  await server?.close();
});

/**
 * Sends one request, records when it left, then stays silent; resolves when the ephemeral goes.
 * Times are the manual clock's: the server runs on it, so the event arrives at the expiry instant.
 */
async function silentUntilExpired(
  clock: ManualClock,
  victim: RawSession,
  watcher: RawSession,
  path: string,
): Promise<{ sentAt: number; goneAt: number }> {
  const sentAt = clock.now();
  await victim.conn.send(create(path, null, CreateMode.EPHEMERAL));
  await watcher.conn.send({ type: OpCode.exists, path, watch: true });
  const [e] = await watcher.eventCount(1, 20_000);
  expect(e).toEqual({ type: EventType.NodeDeleted, state: 3, path });
  return { sentAt, goneAt: clock.now() };
}

/** The session wheel's rule: a session last heard at `t` expires at the first tick boundary strictly after t + timeout. */
const expiryAt = (t: number, timeoutMs: number, tickMs: number): number => (Math.floor((t + timeoutMs) / tickMs) + 1) * tickMs;

/** Records when the connection closed, on the manual clock. */
function closedAt(clock: ManualClock, s: RawSession): { at: number | undefined } {
  const r: { at: number | undefined } = { at: undefined };
  void s.closed.then(() => (r.at = clock.now()));
  return r;
}

describe('session expiry', () => {
  test('a silent session expires no earlier than its timeout and no later than timeout + one tick: at the first tick boundary after it', async () => {
    const tickMs = 200;
    const clock = new ManualClock();
    server = createEmbeddedServer({ tickMs, clock });
    const t = server.transport();
    const watcher = await open(t, { timeoutMs: 4000 });
    const timeouts = [400, 700, 1000, 1500];
    const running = Promise.all(
      timeouts.map(async (timeoutMs, i) => {
        const victim = await open(t, { timeoutMs });
        expect(victim.conn.negotiatedTimeoutMs).toBe(timeoutMs);
        const w = await open(t, { timeoutMs: 4000 });
        const r = await silentUntilExpired(clock, victim, w, `/e${i}`);
        await victim.closed;
        return { timeoutMs, ...r, elapsed: r.goneAt - r.sentAt };
      }),
    );
    // Past the longest expiry (1500 ms + one tick), well before the watchers' 4 s.
    await clock.advance(1500 + tickMs);
    const runs = await running;
    for (const { timeoutMs, sentAt, goneAt, elapsed } of runs) {
      expect(elapsed).toBeGreaterThanOrEqual(timeoutMs);
      expect(elapsed).toBeLessThanOrEqual(timeoutMs + tickMs);
      expect(goneAt).toBe(expiryAt(sentAt, timeoutMs, tickMs));
    }
    watcher.conn.close();
  });

  test('every request and ping moves the deadline; the session lives while they keep coming', async () => {
    const clock = new ManualClock();
    server = createEmbeddedServer({ tickMs: 50, clock });
    const s = await open(server.transport(), { timeoutMs: 200 });
    await s.conn.send(create('/e', null, CreateMode.EPHEMERAL));
    let lastSent = clock.now();
    for (let i = 0; i < 12; i++) {
      await clock.advance(60);
      lastSent = clock.now();
      await s.conn.send(i % 2 ? { type: OpCode.ping } : { type: OpCode.exists, path: '/e', watch: false });
    }
    expect(server.node('/e')).toBeDefined();
    const [info] = server.sessions();
    expect(info!.expiresInMs).toBeGreaterThan(100);
    expect(info!.expiresInMs).toBeLessThanOrEqual(250);
    // 720 ms in, over three timeouts past the open: the last ping set the deadline.
    expect(info!.expiresInMs).toBe(expiryAt(lastSent, 200, 50) - clock.now());
  });

  test('auth packets do not keep a session alive (ZooKeeper answers them outside the pipeline)', async () => {
    const clock = new ManualClock();
    server = createEmbeddedServer({ tickMs: 50, clock });
    const start = clock.now();
    const s = await open(server.transport(), { timeoutMs: 200 });
    const closed = closedAt(clock, s);
    while (clock.now() - start < 600 && !s.conn.closed) {
      await s.conn.send({ type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from('a:b') }).catch(() => undefined);
      await clock.advance(40);
    }
    await s.closed;
    expect(server.sessions()).toEqual([]);
    // Expired on the deadline of the handshake, as if no auth packet had come.
    expect(closed.at).toBe(expiryAt(start, 200, 50));
  });

  test('expiry deletes every ephemeral at one zxid and closes the connection; re-attach gets the zero-timeout answer', async () => {
    const clock = new ManualClock();
    server = createEmbeddedServer({ tickMs: 50, clock });
    const t = server.transport();
    const owner = await open(t);
    await owner.conn.send(create('/dir'));
    const s = await open(t, { timeoutMs: 100 });
    const closed = closedAt(clock, s);
    const lastSent = clock.now();
    for (let i = 0; i < 10; i++) await s.conn.send(create(`/dir/e${i}`, null, CreateMode.EPHEMERAL));
    await s.conn.send(create('/dir/s-', null, CreateMode.EPHEMERAL_SEQUENTIAL));
    expect(server.sessions().find((x) => x.sessionId === s.conn.sessionId)!.ephemerals).toHaveLength(11);
    await clock.advance(expiryAt(lastSent, 100, 50) - clock.now() - 1);
    expect(closed.at).toBeUndefined();
    await clock.advance(1);
    expect(closed.at).toBe(expiryAt(lastSent, 100, 50));
    const reason = await s.closed;
    expect(reason.kind).toBe('server');
    expect(server.node('/dir')!.children).toEqual([]);
    const zxid = server.zxid;
    expect(server.node('/dir')!.stat.pzxid).toBe(zxid);
    expect(await tryOpen(t, { sessionId: s.conn.sessionId, passwd: s.conn.passwd })).toBe('expired');
  });

  test('a session expires while its connection is open if nothing arrives, even with the connection silent', async () => {
    const clock = new ManualClock();
    server = createEmbeddedServer({ tickMs: 50, clock });
    const opened = clock.now();
    const s = await open(server.transport(), { timeoutMs: 100 });
    await clock.advance(expiryAt(opened, 100, 50) - opened - 1);
    expect(s.conn.closed).toBe(false);
    await clock.advance(1);
    expect(s.conn.closed).toBe(true);
    expect(s.closes).toEqual([{ kind: 'server', message: 'session expired' }]);
  });
});
