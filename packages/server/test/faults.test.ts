import { afterEach, describe, expect, test } from 'vitest';
import { AbortError, ConnectionLossError, CreateMode, EventType, OpCode } from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { create, open, sleep, tryOpen } from './harness.js';

let server: EmbeddedServer;
afterEach(async () => {
  await server?.close();
});

const reattach = (s: { conn: { sessionId: bigint; passwd: Buffer } }, timeoutMs = 10_000) => ({
  sessionId: s.conn.sessionId,
  passwd: s.conn.passwd,
  timeoutMs,
});

describe('restart', () => {
  test('closes every connection, refuses connects for a while, then serves the same tree, sessions and zxid', async () => {
    server = createEmbeddedServer({ tickMs: 100 });
    const t = server.transport();
    const a = await open(t);
    const b = await open(t);
    await a.conn.send(create('/keep', Buffer.from('v')));
    await a.conn.send(create('/eph', null, CreateMode.EPHEMERAL));
    const zxid = server.zxid;
    const restarted = server.restart(300);
    expect((await a.closed).kind).toBe('server');
    expect((await b.closed).kind).toBe('server');
    await expect(tryOpen(t, reattach(a))).rejects.toBeInstanceOf(ConnectionLossError);
    await expect(tryOpen(t)).rejects.toBeInstanceOf(ConnectionLossError);
    await restarted;
    expect(server.zxid).toBe(zxid);
    const again = await open(t, reattach(a));
    expect(again.conn.sessionId).toBe(a.conn.sessionId);
    const d = await again.conn.send({ type: OpCode.getData, path: '/keep', watch: false });
    expect(d.response!.data).toEqual(Buffer.from('v'));
    expect(server.node('/eph')!.stat.ephemeralOwner).toBe(a.conn.sessionId);
    const w = await again.conn.send({ type: OpCode.setData, path: '/keep', data: null, version: -1 });
    expect(w.zxid).toBeGreaterThan(zxid);
  });

  test('session clocks keep running while the server refuses: a session not back in time expires', async () => {
    server = createEmbeddedServer({ tickMs: 50 });
    const t = server.transport();
    const s = await open(t, { timeoutMs: 200 });
    await s.conn.send(create('/eph', null, CreateMode.EPHEMERAL));
    await server.restart(500);
    expect(await tryOpen(t, reattach(s))).toBe('expired');
    expect(server.node('/eph')).toBeUndefined();
  });

  test('watches do not survive a restart (they belong to connections)', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const s = await open(t);
    await s.conn.send(create('/w'));
    await s.conn.send({ type: OpCode.getData, path: '/w', watch: true });
    expect(server.watchCounts().get(s.conn.sessionId)).toBe(1);
    await server.restart();
    expect(server.watchCounts().size).toBe(0);
  });
});

describe('dropConnection', () => {
  test('closes the connection now, rejects what is pending; the session lives on', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const s = await open(t);
    await s.conn.send(create('/eph', null, CreateMode.EPHEMERAL));
    const pending = s.conn.send({ type: OpCode.getData, path: '/eph', watch: false });
    expect(server.dropConnection(s.conn.sessionId)).toBe(true);
    await expect(pending).rejects.toBeInstanceOf(ConnectionLossError);
    expect(await s.closed).toEqual({ kind: 'server', message: 'connection dropped (fault injection)' });
    expect(s.closes).toHaveLength(1);
    expect(server.dropConnection(s.conn.sessionId)).toBe(false);
    const again = await open(t, reattach(s));
    expect((await again.conn.send({ type: OpCode.exists, path: '/eph', watch: false })).err).toBe(0);
  });
});

describe('silence', () => {
  test('delivers nothing either way for the duration; what is still open afterwards gets through', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const s = await open(t);
    const other = await open(t);
    await s.conn.send(create('/n'));
    await s.conn.send({ type: OpCode.getData, path: '/n', watch: true });
    server.silence(s.conn.sessionId, 300);
    const started = performance.now();
    let answered = 0;
    const reply = s.conn.send(create('/during')).then((r) => ((answered = performance.now() - started), r));
    await other.conn.send({ type: OpCode.setData, path: '/n', data: null, version: -1 });
    await sleep(150);
    // The request has not reached the server; the event has not reached the client.
    expect(server.node('/during')).toBeUndefined();
    expect(s.events).toEqual([]);
    expect((await reply).err).toBe(0);
    expect(answered).toBeGreaterThanOrEqual(290);
    expect(s.events).toEqual([{ type: EventType.NodeDataChanged, state: 3, path: '/n' }]);
  });

  test('requests held by a silence do not keep the session alive; the close is delivered when the silence ends', async () => {
    server = createEmbeddedServer({ tickMs: 50 });
    const t = server.transport();
    const s = await open(t, { timeoutMs: 150 });
    await s.conn.send(create('/eph', null, CreateMode.EPHEMERAL));
    server.silence(s.conn.sessionId, 500);
    const pings = [0, 1, 2, 3].map(async (i) => {
      await sleep(i * 100);
      return s.conn.send({ type: OpCode.ping });
    });
    await sleep(350);
    // Expired on the server; the client has not heard yet.
    expect(server.node('/eph')).toBeUndefined();
    expect(s.conn.closed).toBe(false);
    const reason = await s.closed;
    expect(reason.message).toBe('session expired');
    for (const p of pings) await expect(p).rejects.toBeInstanceOf(ConnectionLossError);
  });

  test('a client that gives up during a silence loses its held requests; re-attach waits for the silence to end', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const s = await open(t);
    server.silence(s.conn.sessionId, 300);
    const lost = s.conn.send(create('/lost'));
    s.conn.close();
    await expect(lost).rejects.toBeInstanceOf(ConnectionLossError);
    const started = performance.now();
    const again = await open(t, reattach(s));
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    expect(again.conn.sessionId).toBe(s.conn.sessionId);
    expect(server.node('/lost')).toBeUndefined();
  });

  test('output already on its way when a silence begins is held too, and delivered when it ends', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const s = await open(t);
    const reply = s.conn.send(create('/x'));
    server.silence(s.conn.sessionId, 200);
    const started = performance.now();
    expect((await reply).err).toBe(0);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
  });

  test('a connect waiting on a silence can be aborted', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const s = await open(t);
    s.conn.close();
    server.silence(s.conn.sessionId, 10_000);
    const ac = new AbortController();
    const attempt = tryOpen(t, { ...reattach(s), signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await expect(attempt).rejects.toBeInstanceOf(AbortError);
  });
});

describe('expireSession', () => {
  test('expires now: ephemerals go, watchers hear it, the connection closes, re-attach is refused', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const s = await open(t);
    const w = await open(t);
    await s.conn.send(create('/eph', null, CreateMode.EPHEMERAL));
    await w.conn.send({ type: OpCode.exists, path: '/eph', watch: true });
    expect(server.expireSession(s.conn.sessionId)).toBe(true);
    expect((await s.closed).message).toBe('session expired');
    expect(await w.eventCount(1)).toEqual([{ type: EventType.NodeDeleted, state: 3, path: '/eph' }]);
    expect(await tryOpen(t, reattach(s))).toBe('expired');
    expect(server.expireSession(s.conn.sessionId)).toBe(false);
  });
});

describe('loseNextReply', () => {
  test('the next request is applied, then the connection drops before its reply', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const s = await open(t);
    server.loseNextReply(s.conn.sessionId);
    // Pings do not count as the next request.
    expect((await s.conn.send({ type: OpCode.ping })).err).toBe(0);
    await expect(s.conn.send(create('/applied'))).rejects.toBeInstanceOf(ConnectionLossError);
    await s.closed;
    expect(server.node('/applied')).toBeDefined();
    const again = await open(t, reattach(s));
    expect((await again.conn.send(create('/next'))).err).toBe(0);
  });
});

describe('pause', () => {
  test('stops answering: requests and handshakes wait, then are served in order', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const s = await open(t);
    const paused = server.pause(300);
    const started = performance.now();
    const order: string[] = [];
    const r1 = s.conn.send(create('/a')).then(() => order.push('a'));
    const r2 = s.conn.send(create('/a/b')).then(() => order.push('b'));
    const connecting = open(t).then((x) => (order.push('connect'), x));
    await sleep(100);
    expect(server.node('/a')).toBeUndefined();
    expect(order).toEqual([]);
    await Promise.all([r1, r2, connecting, paused]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(order).toEqual(['a', 'b', 'connect']);
  });

  test('requests received before the client gave up are still applied when the pause ends', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const s = await open(t);
    const paused = server.pause(200);
    const r = s.conn.send(create('/late'));
    s.conn.close();
    await expect(r).rejects.toBeInstanceOf(ConnectionLossError);
    await paused;
    expect(server.node('/late')).toBeDefined();
  });

  test('sessions that come due during a pause expire when it ends, before anything else is served', async () => {
    server = createEmbeddedServer({ tickMs: 50 });
    const t = server.transport();
    const s = await open(t, { timeoutMs: 100 });
    await s.conn.send(create('/eph', null, CreateMode.EPHEMERAL));
    const paused = server.pause(400);
    await sleep(300);
    expect(server.node('/eph')).toBeDefined();
    const ping = s.conn.send({ type: OpCode.ping });
    await paused;
    expect(server.node('/eph')).toBeUndefined();
    await expect(ping).rejects.toBeInstanceOf(ConnectionLossError);
  });

  test('a connect waiting on a pause can be aborted; restart ends a pause', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const paused = server.pause(60_000);
    const ac = new AbortController();
    const attempt = tryOpen(t, { signal: ac.signal });
    ac.abort();
    await expect(attempt).rejects.toBeInstanceOf(AbortError);
    const other = tryOpen(t).catch((e: unknown) => e);
    await server.restart(0);
    await paused;
    expect(await other).toBeInstanceOf(ConnectionLossError);
    expect((await open(t)).conn.closed).toBe(false);
  });
});

describe('close', () => {
  test('closes every connection (silenced ones too) and refuses new ones', async () => {
    server = createEmbeddedServer();
    const t = server.transport();
    const s = await open(t);
    const quiet = await open(t);
    server.silence(quiet.conn.sessionId, 60_000);
    const pending = server.pause(10_000);
    const waiting = tryOpen(t).catch((e: unknown) => e);
    await server.close();
    await pending;
    expect((await s.closed).message).toBe('server closed');
    expect((await quiet.closed).message).toBe('server closed');
    expect(await waiting).toBeInstanceOf(ConnectionLossError);
    await expect(tryOpen(t)).rejects.toBeInstanceOf(ConnectionLossError);
    expect(server.closed).toBe(true);
  });

  test('leaves no timer behind, even with faults in progress', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const baseline = timers();
    server = createEmbeddedServer({ tickMs: 50, containerCheckIntervalMs: 20 });
    const t = server.transport();
    const s = await open(t, { timeoutMs: 100 });
    server.silence(s.conn.sessionId, 5000);
    const restarting = server.restart(5000);
    expect(timers()).toBeGreaterThan(baseline);
    await server.close();
    expect(timers()).toBe(baseline);
    await restarting;
  });
});
