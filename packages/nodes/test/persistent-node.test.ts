/** PersistentNode on the embedded server: re-creation after deletes, expiry and restarts; protection; ownership; close. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import {
  ClosedError,
  ConnectionState,
  CreateMode,
  NoAuthError,
  Perms,
  RetryPolicies,
  TimeoutError,
  type Client,
  InvalidArgumentError,
} from '@tenure/client';
import { NodeConflictError, PersistentNode, judgeOwnership, type PersistentNodeOptions } from '../src/index.js';
import { EventLog, ManualClock, nextEvent } from '@tenure/testing';
import { connect, countingClock, eventually, serverWatches, sleep, startServer } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
const nodes: PersistentNode[] = [];

afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function open(options: Parameters<typeof connect>[1] = {}) {
  const r = await connect(server, options);
  clients.push(r.client);
  return r;
}

function keep(client: Client, options: PersistentNodeOptions): PersistentNode {
  const node = new PersistentNode(client, { rejoinJitterMs: 0, ...options });
  nodes.push(node);
  return node;
}

function children(path: string): string[] {
  return server.node(path)?.children.sort() ?? [];
}

describe('PersistentNode', () => {
  it('creates its node with parents as containers; actualPath, data and events', async () => {
    server = startServer();
    const { client } = await open();
    const node = keep(client, { path: '/svc/a/member', data: 'payload' });
    const created: string[] = [];
    node.on('created', (p) => void created.push(p));
    expect(node.actualPath).toBeUndefined();
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    expect(node.actualPath).toBe('/svc/a/member');
    expect(created).toEqual(['/svc/a/member']);
    const snap = server.node('/svc/a/member')!;
    expect(snap.data!.toString()).toBe('payload');
    expect(snap.stat.ephemeralOwner).toBe(client.sessionId);
    expect(server.node('/svc/a')!.children).toEqual(['member']);
    expect(node.getData().toString()).toBe('payload');
    await node.setData('v2');
    expect(server.node('/svc/a/member')!.data!.toString()).toBe('v2');
  });

  it('is re-created when another client deletes it, as one node', async () => {
    server = startServer();
    const { client } = await open();
    const { client: other } = await open();
    const node = keep(client, { path: '/re/n', data: 'x' });
    const events = new EventLog<string>();
    node.on('created', () => void events.push('created'));
    node.on('deleted', () => void events.push('deleted'));
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    for (let i = 0; i < 3; i++) {
      const before = server.node('/re/n')!.stat.czxid;
      const recreated = nextEvent(node, 'created', undefined, { timeoutMs: 3000 });
      await other.delete('/re/n');
      await recreated;
      expect(server.node('/re/n')!.stat.czxid).toBeGreaterThan(before);
    }
    expect(children('/re')).toEqual(['n']);
    expect(server.node('/re/n')!.data!.toString()).toBe('x');
    await events.atLeast(7);
    expect(events).toEqual(['created', 'deleted', 'created', 'deleted', 'created', 'deleted', 'created']);
  });

  it('after its session expires it is back within the session timeout + 2 s, owned by the new session', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client } = await open({ clock });
    const node = keep(client, { path: '/exp/n', rejoinJitterMs: 500 });
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    const oldId = client.sessionId;
    const T = client.negotiatedTimeoutMs;
    const t0 = clock.now();
    let backAt = Infinity;
    node.once('created', () => void (backAt = clock.now()));
    server.expireSession(oldId);
    await clock.advance(T + 2000);
    const s = server.node('/exp/n');
    expect(s?.stat.ephemeralOwner).not.toBe(oldId);
    expect(s?.stat.ephemeralOwner).toBe(client.sessionId);
    expect(backAt - t0).toBeLessThan(T + 2000);
    expect(client.sessionId).not.toBe(oldId);
    expect(children('/exp')).toEqual(['n']);
    expect(node.isPresent).toBe(true);
  });

  it('a protected ephemeral sequential node keeps its name (uuid and number) across deletes and expiry', async () => {
    server = startServer();
    const { client } = await open();
    const { client: other } = await open();
    const node = keep(client, { path: '/prot/member-', mode: CreateMode.EPHEMERAL_SEQUENTIAL, protection: true, data: 'd' });
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    const path = node.actualPath!;
    expect(path).toMatch(/^\/prot\/_c_[0-9a-f-]{36}-member-\d{10}$/);
    const recreated = nextEvent(node, 'created', undefined, { timeoutMs: 3000 });
    await other.delete(path);
    await recreated;
    expect(server.node(path)?.stat.ephemeralOwner).toBe(client.sessionId);
    const back = nextEvent(node, 'created', undefined, { timeoutMs: 4000 });
    server.expireSession(client.sessionId);
    await back;
    expect(client.state).toBe(ConnectionState.RECONNECTED);
    expect(server.node(path)?.stat.ephemeralOwner).toBe(client.sessionId);
    expect(node.actualPath).toBe(path);
    expect(children('/prot')).toEqual([path.slice('/prot/'.length)]);
  });

  it('survives dropped connections and a server restart in the same session without churn', async () => {
    server = startServer();
    const { client, states } = await open({ sessionTimeoutMs: 2000 });
    const node = keep(client, { path: '/calm/n' });
    const events: string[] = [];
    node.on('created', () => void events.push('created'));
    node.on('deleted', () => void events.push('deleted'));
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    const czxid = server.node('/calm/n')!.stat.czxid;
    server.dropConnection(client.sessionId);
    await client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 3000 });
    const reconnected = nextEvent(client, 'stateChanged', (s) => s === ConnectionState.RECONNECTED, { timeoutMs: 4000 });
    await server.restart(200);
    await reconnected;
    expect(states.filter((s) => s === ConnectionState.RECONNECTED)).toHaveLength(2);
    await sleep(100);
    expect(server.node('/calm/n')!.stat.czxid).toBe(czxid);
    expect(events).toEqual(['created']);
  });

  it('start followed at once by close leaves no node, in every mode', async () => {
    server = startServer();
    const { client } = await open();
    await client.create('/quick');
    const modes = [CreateMode.EPHEMERAL, CreateMode.PERSISTENT, CreateMode.EPHEMERAL_SEQUENTIAL, CreateMode.PERSISTENT_SEQUENTIAL];
    for (let i = 0; i < 5; i++) {
      for (const mode of modes) {
        for (const protection of [false, true]) {
          const node = new PersistentNode(client, { path: `/quick/n${mode}-`, mode, protection });
          await node.start();
          await node.close();
        }
      }
    }
    await sleep(200);
    expect(children('/quick')).toEqual([]);
    expect(serverWatches(server, client)).toBe(0);
    expect(client.pendingDeletes).toEqual([]);
  });

  it('close deletes the node and removes its watch from the server', async () => {
    server = startServer();
    const { client } = await open();
    const node = new PersistentNode(client, { path: '/bye/n', mode: CreateMode.PERSISTENT });
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    await eventually(() => serverWatches(server, client) === 1, 2000, 'the exists watch');
    await node.close();
    expect(server.node('/bye/n')).toBeUndefined();
    expect(serverWatches(server, client)).toBe(0);
    await expect(node.waitForInitialCreate()).resolves.toBeUndefined();
    await expect(node.start()).rejects.toThrow(/closed/);
  });

  it('adopts a node already in its place and writes its data (Curator); close deletes it', async () => {
    server = startServer();
    const { client } = await open();
    await client.create('/adopt', null);
    await client.create('/adopt/n', 'old');
    const node = keep(client, { path: '/adopt/n', mode: CreateMode.PERSISTENT, data: 'new' });
    const created: string[] = [];
    node.on('created', (p) => void created.push(p));
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    expect(server.node('/adopt/n')!.data!.toString()).toBe('new');
    expect(created).toEqual(['/adopt/n']);
    await node.close();
    expect(server.node('/adopt/n')).toBeUndefined();
  });

  it("a duplicate ephemeral of another live session raises conflict, deletes nobody's node, and takes over when it goes", async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client: a } = await open({ clock });
    const { client: b } = await open({ clock });
    const first = keep(a, { path: '/dup/x', data: 'A' });
    await first.start();
    await first.waitForInitialCreate({ timeoutMs: 3000 });
    const second = keep(b, { path: '/dup/x', data: 'B', retryMs: 50, maxRetryMs: 200 });
    const conflicts: NodeConflictError[] = [];
    const errors: Error[] = [];
    second.on('conflict', (e) => void conflicts.push(e));
    second.on('error', (e) => void errors.push(e));
    await second.start();
    const timedOut = expect(second.waitForInitialCreate({ timeoutMs: 600 })).rejects.toBeInstanceOf(TimeoutError);
    await clock.advance(600);
    await timedOut;
    expect(conflicts.length).toBeGreaterThanOrEqual(2); // retried with backoff
    expect(conflicts[0]!.owner).toBe(a.sessionId);
    expect(conflicts[0]!.code).toBe('NODE_CONFLICT');
    expect(errors[0]).toBeInstanceOf(NodeConflictError);
    const snap = server.node('/dup/x')!;
    expect(snap.stat.ephemeralOwner).toBe(a.sessionId);
    expect(snap.data!.toString()).toBe('A');
    expect(second.actualPath).toBeUndefined();
    // The first member leaves: the second takes its place at once (its exists watch fires).
    await first.close();
    await second.waitForInitialCreate({ timeoutMs: 2000 });
    expect(server.node('/dup/x')!.stat.ephemeralOwner).toBe(b.sessionId);
    expect(server.node('/dup/x')!.data!.toString()).toBe('B');
  });

  it('closing the loser of a conflict leaves the winner in place', async () => {
    server = startServer();
    const { client: a } = await open();
    const { client: b } = await open();
    const first = keep(a, { path: '/dup2/x' });
    await first.start();
    await first.waitForInitialCreate({ timeoutMs: 3000 });
    const second = new PersistentNode(b, { path: '/dup2/x' });
    const conflict = new Promise((r) => second.once('conflict', r));
    await second.start();
    await conflict;
    await second.close();
    expect(server.node('/dup2/x')!.stat.ephemeralOwner).toBe(a.sessionId);
    expect(serverWatches(server, b)).toBe(0);
  });

  it('NoAuth stops the node and is reported as an error', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client } = await open({ clock });
    await client.create('/locked', null, { acl: [{ perms: Perms.READ, id: { scheme: 'world', id: 'anyone' } }] });
    const node = keep(client, { path: '/locked/n' });
    const errors: Error[] = [];
    node.on('error', (e) => void errors.push(e));
    await node.start();
    await expect(node.waitForInitialCreate({ timeoutMs: 3000 })).rejects.toBeInstanceOf(NoAuthError);
    expect(errors.map((e) => e.constructor)).toEqual([NoAuthError]);
    await clock.advance(60_000);
    expect(errors).toHaveLength(1); // stopped: no retries, however long
    expect(server.node('/locked')!.children).toEqual([]);
  });

  it('waitForInitialCreate honours AbortSignal and rejects on close', async () => {
    server = startServer();
    const { client: a } = await open();
    const { client: b } = await open();
    await a.create('/w', null);
    await a.create('/w/x', null, { mode: CreateMode.EPHEMERAL });
    const node = keep(b, { path: '/w/x' });
    await node.start();
    const ac = new AbortController();
    const waiting = node.waitForInitialCreate({ signal: ac.signal });
    ac.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    const pending = node.waitForInitialCreate();
    await node.close();
    await expect(pending).rejects.toMatchObject({ name: 'ClosedError' });
  });

  it('retries a conflict at the pace of its retryPolicy; retryMs goes with maxRetryMs', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client: a } = await open({ clock });
    const { client: b } = await open({ clock });
    const first = keep(a, { path: '/pace/x' });
    await first.start();
    await first.waitForInitialCreate({ timeoutMs: 3000 });
    const second = keep(b, { path: '/pace/x', retryPolicy: RetryPolicies.forever(40) });
    let conflicts = 0;
    second.on('conflict', () => void conflicts++);
    second.on('error', () => {});
    const first1 = nextEvent(second, 'conflict');
    await second.start();
    await first1;
    await clock.advance(5 * 40); // forever(40): one retry every 40 ms
    expect(conflicts).toBeGreaterThanOrEqual(5);
    expect(() => new PersistentNode(b, { path: '/pace/y', retryMs: 50 })).toThrow(InvalidArgumentError);
  });

  it('when its client closes, waits end with ClosedError and no retry stays scheduled', async () => {
    server = startServer();
    const { client: a } = await open();
    const clock = countingClock();
    const { client: b } = await open({ clock });
    await a.create('/gone', null);
    await a.create('/gone/x', null, { mode: CreateMode.EPHEMERAL });
    const node = keep(b, { path: '/gone/x', retryPolicy: RetryPolicies.forever(60_000) });
    const conflict = new Promise((r) => node.once('conflict', r));
    node.on('error', () => {});
    await node.start();
    await conflict; // a retry is now scheduled a minute out
    const waiting = node.waitForInitialCreate({ timeoutMs: 60_000 });
    await b.close();
    await expect(waiting).rejects.toBeInstanceOf(ClosedError);
    expect(clock.live).toBe(0);
  });

  it('setData before the first create is used by it; later data survives re-creation', async () => {
    server = startServer();
    const { client } = await open();
    const { client: other } = await open();
    const node = keep(client, { path: '/data/n', data: 'one' });
    await node.setData('two');
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    expect(server.node('/data/n')!.data!.toString()).toBe('two');
    await node.setData('three');
    const recreated = nextEvent(node, 'created', undefined, { timeoutMs: 3000 });
    await other.delete('/data/n');
    await recreated;
    expect(server.node('/data/n')?.data?.toString()).toBe('three'); // re-created with the latest data
  });

  it('a TTL-mode node (PERSISTENT_WITH_TTL) is kept and re-created', async () => {
    server = startServer();
    const { client } = await open();
    const { client: other } = await open();
    const node = keep(client, { path: '/ttl/n', mode: CreateMode.PERSISTENT_WITH_TTL, ttlMs: 60_000 });
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    const recreated = nextEvent(node, 'created', undefined, { timeoutMs: 3000 });
    await other.delete('/ttl/n');
    await recreated;
    expect(server.node('/ttl/n')).toBeDefined();
    expect(() => new PersistentNode(client, { path: '/ttl/m', ttlMs: 5 })).toThrow(InvalidArgumentError);
  });

  it('after a mass expiry the members come back spread over the rejoin jitter, each exactly once', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const n = 10;
    const members: Client[] = [];
    for (let i = 0; i < n; i++) members.push((await open({ clock })).client);
    const keepers = members.map((c, i) => keep(c, { path: `/herd/m${i}`, rejoinJitterMs: 1000 }));
    await Promise.all(keepers.map((k) => k.start()));
    await Promise.all(keepers.map((k) => k.waitForInitialCreate({ timeoutMs: 3000 })));
    const T = members[0]!.negotiatedTimeoutMs;
    const old = new Set(members.map((c) => c.sessionId));
    // When each is back, on the manual clock (the server's ctime is wall time).
    const back = Promise.all(keepers.map((k) => nextEvent(k, 'created').then(() => clock.now())));
    for (const c of members) server.expireSession(c.sessionId);
    await clock.advance(T + 2000);
    const backAt = await back;
    expect(children('/herd')).toHaveLength(n);
    for (const m of children('/herd')) expect(old.has(server.node(`/herd/${m}`)!.stat.ephemeralOwner)).toBe(false);
    expect(Math.max(...backAt) - Math.min(...backAt)).toBeGreaterThan(100);
    members.forEach((c, i) => expect(server.node(`/herd/m${i}`)!.stat.ephemeralOwner).toBe(c.sessionId));
  });
});

describe('judgeOwnership (the ownership rule)', () => {
  const stat = (ephemeralOwner: bigint) => ({
    czxid: 1n,
    mzxid: 1n,
    ctime: 0,
    mtime: 0,
    version: 0,
    cversion: 0,
    aversion: 0,
    ephemeralOwner,
    dataLength: 0,
    numChildren: 0,
    pzxid: 1n,
  });
  it('ours, stale (a previous session of this client) or foreign', () => {
    expect(judgeOwnership(stat(5n), 5n, [3n, 4n])).toBe('ours');
    expect(judgeOwnership(stat(4n), 5n, [3n, 4n])).toBe('stale');
    expect(judgeOwnership(stat(9n), 5n, [3n, 4n])).toBe('foreign');
    expect(judgeOwnership(stat(0n), 5n, [])).toBe('ours'); // persistent: adopt, as Curator does
    expect(judgeOwnership(stat(-0x8000000000000000n), 5n, [])).toBe('ours'); // container
    expect(judgeOwnership(stat(BigInt.asIntN(64, 0xff00000000000000n | 1000n)), 5n, [])).toBe('ours'); // TTL
  });
});
