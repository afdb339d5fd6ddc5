import { afterEach, describe, expect, test } from 'vitest';
import { CreateMode, EventType, OpCode } from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { create, open, sleep, tryOpen, type RawSession } from './harness.js';

let server: EmbeddedServer;
afterEach(async () => {
  await server?.close();
});

/** Sends one request, records when it left, then stays silent; resolves when the ephemeral goes. */
async function silentUntilExpired(victim: RawSession, watcher: RawSession, path: string): Promise<{ sentAt: number; goneAt: number }> {
  const sentAt = performance.now();
  await victim.conn.send(create(path, null, CreateMode.EPHEMERAL));
  await watcher.conn.send({ type: OpCode.exists, path, watch: true });
  const [e] = await watcher.eventCount(1, 20_000);
  expect(e).toEqual({ type: EventType.NodeDeleted, state: 3, path });
  return { sentAt, goneAt: performance.now() };
}

describe('session expiry', () => {
  test('a silent session expires no earlier than its timeout and no later than timeout + one tick + 200 ms', async () => {
    const tickMs = 200;
    server = createEmbeddedServer({ tickMs });
    const t = server.transport();
    const watcher = await open(t, { timeoutMs: 4000 });
    const timeouts = [400, 700, 1000, 1500];
    const runs = await Promise.all(
      timeouts.map(async (timeoutMs, i) => {
        const victim = await open(t, { timeoutMs });
        expect(victim.conn.negotiatedTimeoutMs).toBe(timeoutMs);
        const w = await open(t, { timeoutMs: 4000 });
        const r = await silentUntilExpired(victim, w, `/e${i}`);
        await victim.closed;
        return { timeoutMs, elapsed: r.goneAt - r.sentAt };
      }),
    );
    for (const { timeoutMs, elapsed } of runs) {
      expect(elapsed).toBeGreaterThanOrEqual(timeoutMs);
      expect(elapsed).toBeLessThanOrEqual(timeoutMs + tickMs + 200);
    }
    watcher.conn.close();
  });

  test('every request and ping moves the deadline; the session lives while they keep coming', async () => {
    server = createEmbeddedServer({ tickMs: 50 });
    const s = await open(server.transport(), { timeoutMs: 200 });
    await s.conn.send(create('/e', null, CreateMode.EPHEMERAL));
    for (let i = 0; i < 12; i++) {
      await sleep(60);
      await s.conn.send(i % 2 ? { type: OpCode.ping } : { type: OpCode.exists, path: '/e', watch: false });
    }
    expect(server.node('/e')).toBeDefined();
    const [info] = server.sessions();
    expect(info!.expiresInMs).toBeGreaterThan(100);
    expect(info!.expiresInMs).toBeLessThanOrEqual(250);
  });

  test('auth packets do not keep a session alive (ZooKeeper answers them outside the pipeline)', async () => {
    server = createEmbeddedServer({ tickMs: 50 });
    const s = await open(server.transport(), { timeoutMs: 200 });
    const start = performance.now();
    while (performance.now() - start < 600 && !s.conn.closed) {
      await s.conn.send({ type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from('a:b') }).catch(() => undefined);
      await sleep(40);
    }
    await s.closed;
    expect(server.sessions()).toEqual([]);
  });

  test('expiry deletes every ephemeral at one zxid and closes the connection; re-attach gets the zero-timeout answer', async () => {
    server = createEmbeddedServer({ tickMs: 50 });
    const t = server.transport();
    const owner = await open(t);
    await owner.conn.send(create('/dir'));
    const s = await open(t, { timeoutMs: 100 });
    for (let i = 0; i < 10; i++) await s.conn.send(create(`/dir/e${i}`, null, CreateMode.EPHEMERAL));
    await s.conn.send(create('/dir/s-', null, CreateMode.EPHEMERAL_SEQUENTIAL));
    expect(server.sessions().find((x) => x.sessionId === s.conn.sessionId)!.ephemerals).toHaveLength(11);
    const reason = await s.closed;
    expect(reason.kind).toBe('server');
    expect(server.node('/dir')!.children).toEqual([]);
    const zxid = server.zxid;
    expect(server.node('/dir')!.stat.pzxid).toBe(zxid);
    expect(await tryOpen(t, { sessionId: s.conn.sessionId, passwd: s.conn.passwd })).toBe('expired');
  });

  test('a session expires while its connection is open if nothing arrives, even with the connection silent', async () => {
    server = createEmbeddedServer({ tickMs: 50 });
    const s = await open(server.transport(), { timeoutMs: 100 });
    await sleep(300);
    expect(s.conn.closed).toBe(true);
    expect(s.closes).toEqual([{ kind: 'server', message: 'session expired' }]);
  });
});
