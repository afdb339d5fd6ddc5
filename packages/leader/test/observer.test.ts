/** LeaderObserver on the embedded server: items, layouts, current(), faults, close and clean-up. */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  ClosedError,
  ConnectionState,
  CreateMode,
  IllegalStateError,
  InvalidArgumentError,
  NoAuthError,
  Perms,
  RetryPolicies,
  createClient,
  type Client,
} from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { EventLog, FaultProxy, nextEvent as nextOf, sleep } from '@tenure/testing';
import { LeaderLatch, LeaderObserver, LeaderSelector, type LeaderInfo } from '../src/index.js';
import { Clients, eventually, nextEvent, startServer, totalWatches, whenTree } from './harness.js';

let server: EmbeddedServer;
let clients: Clients;
const closers: Array<{ close(): Promise<void> }> = [];

beforeEach(() => {
  server = startServer();
  clients = new Clients(() => server.transport());
});

afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c.close()));
  await clients.closeAll();
  await server.close();
});

function latch(client: Client, id: string, path = '/election'): LeaderLatch {
  const l = new LeaderLatch(client, path, { id });
  closers.push(l);
  return l;
}

function observer(client: Client, path = '/election'): LeaderObserver {
  const o = new LeaderObserver(client, path);
  closers.push(o);
  return o;
}

/** The next item, or a rejection after `ms` (real time; it only bounds a test that would hang). */
async function nextItem<T>(it: AsyncIterator<T>, ms = 5000): Promise<IteratorResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      it.next(),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no item within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function nextLeader(it: AsyncIterator<LeaderInfo>): Promise<LeaderInfo> {
  const r = await nextItem(it);
  if (r.done) throw new Error('the iteration ended');
  return r.value;
}

describe('leaders as an async iterable', () => {
  test('the leader at start, then one item per hand-over (none for a waiter joining); tokens are the latches own', async () => {
    const cs = await clients.openMany(4);
    const ls = cs.slice(0, 3).map((c, i) => latch(c, `p${i}`));
    await ls[0]!.start();
    const o = observer(cs[3]!);
    await o.start();
    const it = o.leaders();
    const first = await nextLeader(it);
    expect(first).toMatchObject({ participantId: 'p0', fencingToken: ls[0]!.leadership!.fencingToken, path: ls[0]!.ourPath });
    // p0 led from its creation: its ctime dates it exactly.
    expect(first.since.getTime()).toBe(server.node(ls[0]!.ourPath!)!.stat.ctime);
    // Two waiters join: no item (the next one is the hand-over).
    await ls[1]!.start();
    await ls[2]!.start();
    const tokens = [first.fencingToken];
    for (let i = 1; i < 3; i++) {
      const handedAt = Date.now();
      await ls[i - 1]!.close();
      const next = await nextLeader(it);
      const own = await ls[i]!.await({ timeoutMs: 5000 });
      expect(next.participantId).toBe(`p${i}`);
      expect(next.fencingToken).toBe(own.fencingToken);
      expect(next.path).toBe(ls[i]!.ourPath);
      // Seen live: dated by the notification, after the close began and not in the future.
      expect(next.since.getTime()).toBeGreaterThanOrEqual(handedAt);
      expect(next.since.getTime()).toBeLessThanOrEqual(Date.now());
      tokens.push(next.fencingToken);
    }
    expect(tokens[1]! > tokens[0]! && tokens[2]! > tokens[1]!).toBe(true);
    expect(await o.current()).toMatchObject({ participantId: 'p2', fencingToken: tokens[2] });
    // One children watch on the election path, and the data watch that lists the observer for operators.
    await cs[3]!.sync('/');
    expect(server.watchesOf(cs[3]!.sessionId)).toMatchObject({ child: ['/election'], data: ['/election'] });
    await o.close();
    expect(await nextItem(it)).toEqual({ done: true, value: undefined });
  });

  test('an iterator made later starts with the current leader; every iterator gets every change; `signal` ends one', async () => {
    const cs = await clients.openMany(3);
    const [la, lb] = [latch(cs[0]!, 'a'), latch(cs[1]!, 'b')];
    await la.start();
    await lb.start();
    const o = observer(cs[2]!);
    const early = o.leaders(); // before start: the leader found by the first read comes first
    await o.start();
    const ac = new AbortController();
    const late = o.leaders({ signal: ac.signal });
    const plain = o[Symbol.asyncIterator]();
    for (const it of [early, late, plain]) expect((await nextLeader(it)).participantId).toBe('a');
    await la.close();
    for (const it of [early, late, plain]) expect((await nextLeader(it)).participantId).toBe('b');
    ac.abort();
    expect(await nextItem(late)).toEqual({ done: true, value: undefined });
    await plain.return!();
    expect(await nextItem(plain)).toEqual({ done: true, value: undefined });
    expect((await nextLeader(o.leaders())).participantId).toBe('b');
  });

  test('no election yet: no item until the first participant; the path reaped is `vacant`, and re-created is a leader again', async () => {
    const [a, b, watcher] = await clients.openMany(3);
    const o = observer(watcher!, '/apps/jobs/election');
    await o.start();
    expect(await o.current()).toBeUndefined();
    // An exists watch on the missing path, nothing else.
    await watcher!.sync('/');
    expect(server.watchesOf(watcher!.sessionId)).toMatchObject({ child: [], data: ['/apps/jobs/election'] });
    const it = o.leaders();
    const la = latch(a!, 'a', '/apps/jobs/election');
    await la.start();
    expect((await nextLeader(it)).fencingToken).toBe(la.leadership!.fencingToken);
    const vacant = nextEvent(o, 'vacant');
    await la.close();
    await vacant;
    expect(await o.current()).toBeUndefined();
    // The reaper removes the container; the observer watches for it to come back.
    await whenTree(watcher!, '/apps/jobs', () => server.node('/apps/jobs/election') === undefined);
    const lb = latch(b!, 'b', '/apps/jobs/election');
    await lb.start();
    const next = await nextLeader(it);
    expect(next).toMatchObject({ participantId: 'b', fencingToken: lb.leadership!.fencingToken });
    expect(next.since.getTime()).toBe(server.node(lb.ourPath!)!.stat.ctime);
  });

  test("a LeaderSelector's path (lock- nodes) is read with its layout; selector.leaders() gives the same items", async () => {
    const cs = await clients.openMany(3);
    const release: Array<() => void> = [];
    const selector = (c: Client, id: string): LeaderSelector => {
      const s = new LeaderSelector(c, '/jobs', {
        id,
        takeLeadership: (signal) =>
          new Promise<void>((resolve) => {
            release.push(resolve);
            signal.addEventListener('abort', () => resolve(), { once: true });
          }),
      });
      closers.push(s);
      return s;
    };
    const sa = selector(cs[0]!, 'sa');
    const sb = selector(cs[1]!, 'sb');
    const isLeader = nextEvent(sa, 'isLeader');
    await sa.start();
    await isLeader;
    await sb.start();
    const o = observer(cs[2]!, '/jobs');
    await o.start();
    const fromObserver = o.leaders();
    const fromSelector = sb.leaders();
    const first = [await nextLeader(fromObserver), await nextLeader(fromSelector)];
    for (const l of first) expect(l).toMatchObject({ participantId: 'sa', fencingToken: sa.leadership!.fencingToken });
    expect(first[0]!.path).toMatch(/-lock-\d{10}$/);
    const sbLeads = nextEvent<{ fencingToken: bigint }>(sb, 'isLeader');
    release.shift()!();
    const token = (await sbLeads).fencingToken;
    for (const it of [fromObserver, fromSelector]) expect(await nextLeader(it)).toMatchObject({ participantId: 'sb', fencingToken: token });
    await sb.close();
    // The selector's iterable ends with it (it read `sb` leaving: nobody is left, no item).
    expect(await nextItem(fromSelector)).toEqual({ done: true, value: undefined });
  });
});

describe('watches', () => {
  test('listed: false holds the children watch alone; a data change of the path is no change of leader', async () => {
    const [a, b, watcher, admin] = await clients.openMany(4);
    const [la, lb] = [latch(a!, 'a'), latch(b!, 'b')];
    await la.start();
    await lb.start();
    const quiet = new LeaderObserver(watcher!, '/election', { listed: false });
    closers.push(quiet);
    const listed = observer(watcher!);
    await quiet.start();
    await listed.start();
    await watcher!.sync('/');
    // Both observers share the client's session: one child watch, one data watch (the listed one's).
    expect(server.watchesOf(watcher!.sessionId)).toMatchObject({ child: ['/election'], data: ['/election'] });
    await listed.close();
    await watcher!.sync('/');
    expect(server.watchesOf(watcher!.sessionId)).toMatchObject({ child: ['/election'], data: [] });
    const it = quiet.leaders();
    expect((await nextLeader(it)).participantId).toBe('a');
    await admin!.setData('/election', Buffer.from('touched'));
    await la.close();
    expect((await nextLeader(it)).participantId).toBe('b');
  });

  test('a data change of the path fires the listed watch: it is set again, and yields nothing', async () => {
    const [a, b, watcher, admin] = await clients.openMany(4);
    const [la, lb] = [latch(a!, 'a'), latch(b!, 'b')];
    await la.start();
    await lb.start();
    const o = observer(watcher!);
    await o.start();
    const it = o.leaders();
    expect((await nextLeader(it)).participantId).toBe('a');
    await admin!.setData('/election', Buffer.from('touched'));
    // Set again by the pass the data change caused (nothing in the tree tells when: the server's watch table is polled).
    await eventually(() => server.watchesOf(watcher!.sessionId).data.includes('/election'), 3000, 'the listed watch is set again');
    await la.close();
    expect((await nextLeader(it)).participantId).toBe('b');
  });
});

describe('latch.leaders()', () => {
  test("a participant's iterable: the current leader, then each hand-over; it ends with the latch, and its watch goes", async () => {
    const cs = await clients.openMany(3);
    const ls = cs.map((c, i) => latch(c, `p${i}`));
    for (const l of ls) await l.start();
    const it = ls[2]!.leaders();
    expect((await nextLeader(it)).participantId).toBe('p0');
    await ls[0]!.close();
    const second = await nextLeader(it);
    expect(second.fencingToken).toBe((await ls[1]!.await({ timeoutMs: 5000 })).fencingToken);
    await ls[2]!.close();
    expect(await nextItem(it)).toEqual({ done: true, value: undefined });
    expect(await nextItem(ls[2]!.leaders())).toEqual({ done: true, value: undefined });
    await cs[2]!.sync('/');
    expect(server.watchesOf(cs[2]!.sessionId)).toMatchObject({ child: [], data: [] });
  });
});

describe('options', () => {
  test("recipe fixes the layout (an unknown one is an InvalidArgumentError): 'leader-selector' reads lock- nodes, ignoring latch- ones", async () => {
    const [a, admin, watcher] = await clients.openMany(3);
    expect(() => new LeaderObserver(watcher!, '/mixed', { recipe: 'barrier' as never })).toThrow(InvalidArgumentError);
    const l = latch(a!, 'latched', '/mixed');
    await l.start();
    // A lock- node with a higher sequence than the latch's: first by the selector's order only.
    const { path } = await admin!.create('/mixed/_c_00000000-0000-0000-0000-000000000000-lock-', Buffer.from('locked'), {
      mode: CreateMode.EPHEMERAL_SEQUENTIAL,
    });
    expect((await new LeaderObserver(watcher!, '/mixed').current())?.participantId).toBe('latched');
    const o = new LeaderObserver(watcher!, '/mixed', { recipe: 'leader-selector' });
    closers.push(o);
    expect(await o.current()).toMatchObject({ participantId: 'locked', path });
  });
});

describe('current()', () => {
  test('before start() and after close(): one read of the server; started: the observer view', async () => {
    const [a, watcher] = await clients.openMany(2);
    const o = observer(watcher!);
    expect(await o.current()).toBeUndefined();
    const la = latch(a!, 'a');
    await la.start();
    expect(await o.current()).toMatchObject({ participantId: 'a', fencingToken: la.leadership!.fencingToken });
    expect(server.watchesOf(watcher!.sessionId).child).toEqual([]);
    await o.start();
    expect((await o.current())?.participantId).toBe('a');
    await expect(o.start()).rejects.toBeInstanceOf(IllegalStateError);
    await o.close();
    expect(o.state).toBe('closed');
    expect((await o.current())?.participantId).toBe('a');
    await expect(o.start()).rejects.toBeInstanceOf(IllegalStateError);
  });
});

describe('faults: only real changes', () => {
  test('a server restart (reconnect, same session): the same leader is not yielded again; the next hand-over is', async () => {
    const cs = await clients.openMany(3);
    const [la, lb] = [latch(cs[0]!, 'a'), latch(cs[1]!, 'b')];
    await la.start();
    await lb.start();
    const o = observer(cs[2]!);
    await o.start();
    const it = o.leaders();
    expect((await nextLeader(it)).participantId).toBe('a');
    const reconnected = cs[2]!.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    await server.restart(200);
    await reconnected;
    await la.await({ timeoutMs: 5000 });
    await la.close();
    // The next item is the hand-over: nothing came for the reconnect.
    expect((await nextLeader(it)).participantId).toBe('b');
  });

  test('cut off by a FaultProxy while the leader changes twice: one item after the reconnect, the leader now (dated by its ctime)', async () => {
    const { connectString } = await server.listen({ port: 0 });
    const proxy = await FaultProxy.start(connectString);
    closers.push(proxy);
    const cs = await clients.openMany(3);
    const watcher = createClient({
      connectString: proxy.connectString,
      sessionTimeoutMs: 4000,
      connectionTimeoutMs: 3000,
      retryPolicy: RetryPolicies.exponentialBackoff(20, 10, 200),
    });
    closers.push(watcher);
    await watcher.start();
    const ls = cs.map((c, i) => latch(c, `p${i}`));
    for (const l of ls) await l.start();
    const o = observer(watcher);
    await o.start();
    const it = o.leaders();
    expect((await nextLeader(it)).participantId).toBe('p0');
    proxy.blackhole();
    await watcher.waitForState(ConnectionState.SUSPENDED, { timeoutMs: 10_000 });
    await ls[0]!.close();
    await ls[1]!.await({ timeoutMs: 5000 });
    await ls[1]!.close();
    const p2 = await ls[2]!.await({ timeoutMs: 5000 });
    const reconnected = watcher.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 10_000 });
    proxy.heal();
    await reconnected;
    const next = await nextLeader(it);
    expect(next).toMatchObject({ participantId: 'p2', fencingToken: p2.fencingToken });
    expect(next.since.getTime()).toBe(server.node(ls[2]!.ourPath!)!.stat.ctime);
    // Nothing more: the next item is the next real change.
    const p3 = latch(cs[0]!, 'p3');
    await p3.start();
    await ls[2]!.close();
    expect((await nextLeader(it)).participantId).toBe('p3');
  });

  test("LOST (the observer's session expires): it re-reads on the new session; the same leader is not yielded, a change is", async () => {
    const cs = await clients.openMany(3);
    const [la, lb] = [latch(cs[0]!, 'a'), latch(cs[1]!, 'b')];
    await la.start();
    await lb.start();
    const o = observer(cs[2]!);
    await o.start();
    const it = o.leaders();
    expect((await nextLeader(it)).participantId).toBe('a');
    const lost = cs[2]!.waitForState(ConnectionState.LOST, { timeoutMs: 5000 });
    const back = nextOf(cs[2]!, 'stateChanged', (s) => s === ConnectionState.CONNECTED || s === ConnectionState.RECONNECTED);
    server.expireSession(cs[2]!.sessionId);
    await lost;
    await back;
    // Same leader after LOST: no item. Then the leader's own session expires: b leads, one item.
    server.expireSession(cs[0]!.sessionId);
    const b = await lb.await({ timeoutMs: 5000 });
    expect(await nextLeader(it)).toMatchObject({ participantId: 'b', fencingToken: b.fencingToken });
    // The watch was re-set on the new session.
    await cs[2]!.sync('/');
    expect(server.watchesOf(cs[2]!.sessionId).child).toEqual(['/election']);
  });
});

describe('close and the client close', () => {
  test("the client's close ends every iteration with ClosedError; later iterators reject with it too", async () => {
    const [a, watcher] = await clients.openMany(2);
    await latch(a!, 'a').start();
    const o = observer(watcher!);
    await o.start();
    const it = o.leaders();
    expect((await nextLeader(it)).participantId).toBe('a');
    const pending = it.next();
    await watcher!.close();
    await expect(pending).rejects.toBeInstanceOf(ClosedError);
    expect(await nextItem(it)).toEqual({ done: true, value: undefined });
    await expect(o.leaders().next()).rejects.toBeInstanceOf(ClosedError);
    await expect(o.current()).rejects.toBeInstanceOf(ClosedError);
    await o.close();
    const fresh = new LeaderObserver(watcher!, '/election');
    await expect(fresh.start()).rejects.toBeInstanceOf(ClosedError);
    expect(fresh.state).toBe('latent');
  });

  test('close(): iterations end, no watch is left on the client or the server, close is idempotent', async () => {
    const [a, watcher] = await clients.openMany(2);
    await latch(a!, 'a').start();
    const o = observer(watcher!);
    await o.start();
    const it = o.leaders();
    await nextLeader(it);
    const pending = it.next();
    await Promise.all([o.close(), o.close()]);
    expect(await pending).toEqual({ done: true, value: undefined });
    await watcher!.sync('/');
    expect(server.watchesOf(watcher!.sessionId)).toMatchObject({ child: [], data: [] });
    expect(totalWatches(server)).toBe(1); // the latch's own node
    expect(await nextItem(o.leaders())).toEqual({ done: true, value: undefined });
  });
});

describe('NoAuth', () => {
  test('an election path it may not read: reported once, no retry; start(), current() and the iterations reject with the NoAuthError', async () => {
    const watcher = await clients.open({ retryPolicy: RetryPolicies.forever(10) });
    await watcher.create('/hidden', null, {
      acl: [{ perms: Perms.CREATE | Perms.WRITE | Perms.DELETE, id: { scheme: 'world', id: 'anyone' } }],
    });
    const o = observer(watcher, '/hidden');
    const errors = new EventLog<Error>();
    o.on('error', (e) => errors.push(e));
    const it = o.leaders();
    await expect(o.start({ timeoutMs: 3000 })).rejects.toBeInstanceOf(NoAuthError);
    await expect(it.next()).rejects.toBeInstanceOf(NoAuthError);
    await expect(o.leaders().next()).rejects.toBeInstanceOf(NoAuthError);
    await expect(o.current()).rejects.toBeInstanceOf(NoAuthError);
    await sleep(300); // a retrying observer (10 ms pauses) would have reported again meanwhile
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(NoAuthError);
  });
});
