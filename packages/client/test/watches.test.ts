/** One-shot and persistent watches across reconnects and session loss; re-registration; removal. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import {
  ConnectionState,
  CreateMode,
  NoWatcherError,
  TimeoutError,
  WatcherType,
  type Client,
  type PersistentWatchEvent,
  type WatchEvent,
} from '../src/index.js';
import { EventLog, ManualClock } from '@tenure/testing';
import { connect, startServer } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function open(opts: Parameters<typeof connect>[1] = {}) {
  const r = await connect(server, opts);
  clients.push(r.client);
  return r;
}

/**
 * Takes `client` away for `ms`: its connection drops and it cannot come back meanwhile (its
 * handshakes wait out the silence). `ms` must exceed the read timeout, by which the client notices.
 */
function away(client: Client, ms: number): void {
  server.silence(client.sessionId, ms);
  server.dropConnection(client.sessionId);
}

describe('one-shot watches', () => {
  it('fire once, with ZooKeeper routing', async () => {
    server = startServer();
    const { client: c } = await open();
    const { client: other } = await open();
    const events = new EventLog<string>();
    const log = (e: WatchEvent): void => void events.push(`${e.type} ${e.path}`);
    expect(await c.exists('/w', { watch: log })).toBeNull();
    await other.create('/w', 'a');
    await events.atLeast(1);
    await c.getData('/w', { watch: log });
    await c.getChildren('/w', { watch: log });
    await other.setData('/w', 'b');
    await other.setData('/w', 'c'); // one-shot: no second event
    await other.create('/w/kid');
    await events.atLeast(3);
    await c.sync('/'); // a fourth event would arrive before this reply
    expect(events).toEqual(['NodeCreated /w', 'NodeDataChanged /w', 'NodeChildrenChanged /w']);
  });

  it('a watch set before dropConnection fires after the reconnect for a change made while away', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client: c, states } = await open({ sessionTimeoutMs: 1500, clock });
    const { client: other } = await open({ clock });
    await other.create('/d', 'v0');
    await other.create('/k');
    const events = new EventLog<string>();
    const log = (e: WatchEvent): void => void events.push(`${e.type} ${e.path}`);
    await c.getData('/d', { watch: log });
    await c.getChildren('/k', { watch: log });
    expect(await c.exists('/later', { watch: log })).toBeNull();
    away(c, 1200); // read timeout 1000 ms, LOST deadline 1500 ms
    // The drop is not heard through the silence: the read timeout tells.
    await clock.advance(999);
    expect(c.state).toBe(ConnectionState.CONNECTED);
    await clock.advance(1);
    expect(c.state).toBe(ConnectionState.SUSPENDED);
    // While the client is away (its server-side watches died with its connection):
    await other.setData('/d', 'v1');
    await other.create('/k/new');
    await other.create('/later');
    expect(events).toEqual([]);
    // The handshake waiting out the silence is answered as it ends, before the LOST deadline.
    await clock.advance(199);
    expect(c.state).toBe(ConnectionState.SUSPENDED);
    await clock.advance(1);
    expect(c.state).toBe(ConnectionState.RECONNECTED);
    await events.atLeast(3, { timeoutMs: 3000 });
    expect(events.sort()).toEqual(['NodeChildrenChanged /k', 'NodeCreated /later', 'NodeDataChanged /d']);
    expect(states).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED, ConnectionState.RECONNECTED]);
  });

  it('re-registers more than 128 KiB of watch paths after a reconnect', async () => {
    server = startServer();
    const { client: c } = await open({ sessionTimeoutMs: 2000 });
    const { client: other } = await open();
    const pad = 'x'.repeat(90);
    const paths = Array.from({ length: 2000 }, (_, i) => `/many/${pad}-${String(i).padStart(5, '0')}`);
    const total = paths.reduce((n, p) => n + p.length, 0);
    expect(total).toBeGreaterThan(128 * 1024);
    const fired = new EventLog<string>();
    await Promise.all(paths.map((p) => c.exists(p, { watch: (e) => void fired.push(e.path) })));
    const id = c.sessionId;
    expect(server.watchesOf(id).data.length).toBe(2000);
    server.dropConnection(id);
    await c.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    await c.sync('/'); // answered after every SetWatches batch sent on reconnect
    expect(server.watchesOf(id).data.length).toBe(2000);
    await other.create('/many');
    await other.create(paths[0]!);
    await other.create(paths[1999]!);
    await fired.atLeast(2, { timeoutMs: 3000 });
    await c.sync('/');
    expect([...fired].sort()).toEqual([paths[0], paths[1999]]);
  });

  it('survive LOST: re-registered on the new session', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client: c } = await open({ sessionTimeoutMs: 600, clock });
    const { client: other } = await open({ clock });
    await other.create('/s', 'v');
    const events = new EventLog<string>();
    await c.getData('/s', { watch: (e) => void events.push(e.type) });
    server.silence(c.sessionId, 3000);
    // LOST at the getData's send time (the last answered) + T.
    await clock.advance(599);
    expect(c.state).toBe(ConnectionState.SUSPENDED);
    await clock.advance(1);
    expect(c.state).toBe(ConnectionState.LOST);
    await clock.advanceUntil(() => c.state === ConnectionState.RECONNECTED);
    await other.setData('/s', 'w');
    await events.atLeast(1);
    expect(events).toEqual(['NodeDataChanged']);
  });

  it('removeWatches removes client-side and server-side, with WatchRemoved events', async () => {
    server = startServer();
    const { client: c } = await open();
    await c.create('/r');
    const events: string[] = [];
    const a = (e: WatchEvent): void => void events.push(`a ${e.type}`);
    const b = (e: WatchEvent): void => void events.push(`b ${e.type}`);
    await c.getData('/r', { watch: a });
    await c.getData('/r', { watch: b });
    await c.getChildren('/r', { watch: a });
    await c.removeWatches('/r', WatcherType.Data, { watcher: a });
    expect(events).toEqual(['a DataWatchRemoved']);
    expect(server.watchesOf(c.sessionId).data).toEqual(['/r']); // b still needs it
    await c.removeWatches('/r', WatcherType.Any);
    expect(events.sort()).toEqual(['a ChildWatchRemoved', 'a DataWatchRemoved', 'b DataWatchRemoved']);
    expect(server.watchesOf(c.sessionId)).toEqual({ data: [], child: [] });
    await expect(c.removeWatches('/r', WatcherType.Data)).rejects.toBeInstanceOf(NoWatcherError);
    await c.removeWatches('/r', WatcherType.Data, { quietly: true });
  });
});

describe('persistent watches', () => {
  it('a recursive watch resumes after a reconnect and yields reset after LOST', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client: c } = await open({ sessionTimeoutMs: 600, clock });
    const { client: other } = await open({ clock });
    await other.create('/r');
    const watch = await c.addWatch('/r', { recursive: true });
    const got = new EventLog<PersistentWatchEvent>();
    const reader = (async () => {
      for await (const ev of watch) got.push(ev);
    })();
    await other.create('/r/a');
    await other.setData('/r/a', 'x');
    await got.atLeast(2);
    expect(got.map((e) => `${e.type} ${e.path}`)).toEqual(['NodeCreated /r/a', 'NodeDataChanged /r/a']);

    server.dropConnection(c.sessionId);
    await clock.advanceUntil(() => c.state === ConnectionState.RECONNECTED, { stepMs: 1 });
    await other.create('/r/a/b');
    await got.until((log) => log.some((e) => e.path === '/r/a/b'), { timeoutMs: 3000 });

    const lastAnswered = clock.now();
    await c.sync('/');
    server.silence(c.sessionId, 3000);
    await clock.advance(599);
    expect(c.state).toBe(ConnectionState.SUSPENDED);
    await clock.advance(1);
    expect(c.state).toBe(ConnectionState.LOST);
    expect(clock.now()).toBe(lastAnswered + 600);
    await clock.advanceUntil(() => c.state === ConnectionState.RECONNECTED);
    await got.until((log) => log.some((e) => e.type === 'reset'), { timeoutMs: 3000 });
    expect(got.filter((e) => e.type === 'reset')).toEqual([{ type: 'reset', path: '/r', reason: 'LOST' }]);
    await other.delete('/r/a/b');
    await got.until((log) => log.some((e) => e.type === 'NodeDeleted' && e.path === '/r/a/b'), { timeoutMs: 3000 });
    await watch.close();
    await reader; // iteration ends on close
    expect(server.watchesOf(c.sessionId)).toEqual({ data: [], child: [] });
  });

  it('reports reset after a reconnect when the server moved on meanwhile', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client: c } = await open({ sessionTimeoutMs: 1500, clock });
    const { client: other } = await open({ clock });
    const got = new EventLog<PersistentWatchEvent>();
    const watch = await c.addWatch('/p', { listener: (e) => got.push(e) });
    away(c, 1200);
    // SUSPENDED at the read timeout (1000 ms), back as the silence ends.
    await clock.advance(1000);
    expect(c.state).toBe(ConnectionState.SUSPENDED);
    await other.create('/p'); // missed: persistent watches get no catch-up events
    await clock.advance(200);
    expect(c.state).toBe(ConnectionState.RECONNECTED);
    await got.atLeast(1);
    expect(got).toEqual([{ type: 'reset', path: '/p', reason: 'RECONNECTED' }]);
    await other.setData('/p', 'x');
    await got.atLeast(2);
    expect(got[1]).toMatchObject({ type: 'NodeDataChanged', path: '/p' });
    await watch.close();
  });

  it('non-recursive: events of the node itself and its children list, not of grandchildren', async () => {
    server = startServer();
    const { client: c } = await open();
    const app = c.usingNamespace('ns');
    await app.create('/x', null, {});
    const got = new EventLog<string>();
    await using _w = await app.addWatch('/x', { listener: (e) => got.push(`${e.type} ${e.path}`) });
    await app.create('/x/y');
    await app.create('/x/y/z');
    await app.setData('/x', 'd');
    await got.atLeast(2);
    await app.sync('/'); // an event for /x/y/z would arrive before this reply
    expect(got).toEqual(['NodeChildrenChanged /x', 'NodeDataChanged /x']);
  });

  it('closing a persistent watch keeps a one-shot watch on the same path, and the reverse', async () => {
    server = startServer();
    const { client: c } = await open();
    const { client: other } = await open();
    await other.create('/mix', 'v0');
    const oneShot = new EventLog<string>();
    const persistent = new EventLog<string>();
    const w = await c.addWatch('/mix', { listener: (e) => persistent.push(e.type) });
    await c.getData('/mix', { watch: (e) => oneShot.push(e.type) });
    await w.close();
    await other.setData('/mix', 'v1');
    await oneShot.atLeast(1);
    await c.sync('/');
    expect(oneShot).toEqual(['NodeDataChanged']);
    expect(persistent).toEqual([]);

    const w2 = await c.addWatch('/mix', { listener: (e) => persistent.push(e.type) });
    const cb = (e: WatchEvent): void => void oneShot.push(e.type);
    await c.getData('/mix', { watch: cb });
    await c.removeWatches('/mix', WatcherType.Data, { watcher: cb });
    await other.setData('/mix', 'v2');
    await other.setData('/mix', 'v3');
    await persistent.atLeast(2);
    expect(persistent).toEqual(['NodeDataChanged', 'NodeDataChanged']);
    expect(oneShot).toEqual(['NodeDataChanged', 'DataWatchRemoved']);
    await w2.close();
    expect(server.watchesOf(c.sessionId)).toEqual({ data: [], child: [] });
  });

  it('removeWatches(Any) ends persistent watches', async () => {
    server = startServer();
    const { client: c } = await open();
    const w = await c.addWatch('/q', { recursive: true });
    await c.removeWatches('/q', WatcherType.Any);
    expect(w.closed).toBe(true);
    expect((await w[Symbol.asyncIterator]().next()).done).toBe(true);
    expect(server.watchesOf(c.sessionId)).toEqual({ data: [], child: [] });
  });
});

describe('close', () => {
  it('leaves no watches, timers or ephemerals behind', async () => {
    server = startServer();
    const { countingClock } = await import('./harness.js');
    const clock = countingClock();
    const { client: c } = await open({ clock });
    await c.create('/base');
    await c.create('/base/e', null, { mode: CreateMode.EPHEMERAL });
    await c.getData('/base', { watch: () => {} });
    await c.exists('/missing', { watch: () => {} });
    const w = await c.addWatch('/base', { recursive: true });
    const ended = (async () => {
      for await (const _ of w) {
        /* drain */
      }
    })();
    const id = c.sessionId;
    expect(server.watchCounts().get(id)).toBeGreaterThan(0);
    expect(clock.live()).toBeGreaterThan(0);
    await c.close();
    await ended;
    expect(clock.live()).toBe(0);
    expect(server.sessions()).toEqual([]);
    expect(server.watchCounts().get(id)).toBeUndefined();
    expect(server.node('/base/e')).toBeUndefined();
    expect(server.connectionCount).toBe(0);
  });
});

describe('aborted watched reads', () => {
  it('a watched read aborted after it was sent leaves no watch on the server', async () => {
    server = startServer();
    const { client: c } = await open({ sessionTimeoutMs: 4000 });
    await c.create('/aw', 'x');
    const paused = server.pause(300);
    const reads = [
      c.getData('/aw', { watch: () => {}, signal: AbortSignal.timeout(50) }),
      c.exists('/aw', { watch: () => {}, signal: AbortSignal.timeout(50) }),
      c.getChildren('/aw', { watch: () => {}, signal: AbortSignal.timeout(50) }),
    ];
    for (const r of reads) await expect(r).rejects.toBeInstanceOf(TimeoutError);
    await paused;
    // The server answered (and set the watches) after the callers gave up; the client re-syncs them away.
    await c.sync('/'); // its reply follows the late ones, whose hooks send the re-syncs at once
    await c.sync('/'); // and this one follows those re-syncs
    expect(server.watchCounts().get(c.sessionId) ?? 0).toBe(0);
  });
});

describe('watch registration order', () => {
  it('an event arriving right behind the reply that set the watch is never lost', async () => {
    server = startServer();
    const { client: c } = await open();
    const { client: other } = await open();
    await c.create('/race', 'v0');
    const fired = new EventLog<number>();
    for (let i = 1; i <= 30; i++) {
      // Both requests reach the server in the same turn: the reply and the event come back together.
      const read = c.getData('/race', { watch: () => void fired.push(i) });
      const write = other.setData('/race', `v${i}`);
      await Promise.all([read, write]);
      await fired.atLeast(i, { timeoutMs: 2000 });
    }
    expect(fired).toHaveLength(30);
  });
});
