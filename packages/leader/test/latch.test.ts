/** LeaderLatch on the embedded server: layout, order, waits, states, faults and clean-up. */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  ClosedError,
  ConnectionState,
  CreateMode,
  READ_ACL_UNSAFE,
  RetryPolicies,
  TimeoutError,
  AbortError,
  type Client,
} from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { LeaderLatch, LeadershipLostError, type LeadershipEnd } from '../src/index.js';
import { aborted, anyEvent, Clients, eventually, nextEvent, startServer, totalWatches, whenTree } from './harness.js';

let server: EmbeddedServer;
let clients: Clients;
const latches: LeaderLatch[] = [];

beforeEach(() => {
  server = startServer();
  clients = new Clients(() => server.transport());
});

afterEach(async () => {
  await Promise.all(latches.splice(0).map((l) => l.close()));
  await clients.closeAll();
  await server.close();
});

function latch(client: Client, id: string, path = '/election', options: { closeMode?: 'silent' | 'notifyLeader' } = {}): LeaderLatch {
  const l = new LeaderLatch(client, path, { id, ...options });
  latches.push(l);
  return l;
}

/** Starts latches one after the other, so their order is the order given. */
async function startInOrder(...ls: LeaderLatch[]): Promise<void> {
  for (const l of ls) await l.start();
}

const children = (path = '/election'): string[] => [...(server.node(path)?.children ?? [])].sort();

describe('layout and order', () => {
  test("Curator's layout: _c_<uuid>-latch-<10-digit seq>, ephemeral, the id as data; the first node leads with its czxid as token", async () => {
    const [a, b] = await clients.openMany(2);
    const la = latch(a!, 'node-a');
    const lb = latch(b!, 'node-b');
    await startInOrder(la, lb);
    const names = children();
    expect(names).toHaveLength(2);
    for (const n of names) expect(n).toMatch(/^_c_[0-9a-f-]{36}-latch-\d{10}$/);
    const nodeA = server.node(la.ourPath!)!;
    expect(nodeA.data?.toString()).toBe('node-a');
    expect(nodeA.stat.ephemeralOwner).toBe(a!.sessionId);
    expect(la.hasLeadership()).toBe(true);
    expect(lb.hasLeadership()).toBe(false);
    expect(la.leadership!.fencingToken).toBe(nodeA.stat.czxid);
    expect(la.leadership!.path).toBe(la.ourPath);
    expect(la.leadership!.signal.aborted).toBe(false);
    expect(lb.leadership).toBeNull();
  });

  test('each follower watches only its immediate predecessor; the leader only its own node', async () => {
    const cs = await clients.openMany(4);
    const ls = cs.map((c, i) => latch(c, `p${i}`));
    await startInOrder(...ls);
    // The leader sets its watch as it claims: a round trip on each client comes after it.
    await Promise.all(cs.map((c) => c.sync('/')));
    expect(ls.every((l, i) => server.watchesOf(cs[i]!.sessionId).data.length === 1)).toBe(true);
    for (let i = 0; i < ls.length; i++) {
      const watched = server.watchesOf(cs[i]!.sessionId).data;
      expect(watched).toEqual([i === 0 ? ls[0]!.ourPath : ls[i - 1]!.ourPath]);
      expect(server.watchesOf(cs[i]!.sessionId).child).toEqual([]);
    }
  });

  test('getParticipants and getLeader read the ids in election order; nobody -> [] and null', async () => {
    const cs = await clients.openMany(3);
    const ls = cs.map((c, i) => latch(c, `p${i}`));
    expect(await ls[0]!.getParticipants()).toEqual([]);
    expect(await ls[0]!.getLeader()).toBeNull();
    await startInOrder(...ls);
    const ps = await ls[2]!.getParticipants();
    expect(ps.map((p) => [p.id, p.isLeader])).toEqual([
      ['p0', true],
      ['p1', false],
      ['p2', false],
    ]);
    expect(ps.map((p) => p.path)).toEqual(ls.map((l) => l.ourPath));
    expect((await ls[1]!.getLeader())!.id).toBe('p0');
  });

  test('the default id is empty; ids may be any UTF-8 text', async () => {
    const [a, b] = await clients.openMany(2);
    const la = latch(a!, undefined as unknown as string);
    const lb = latch(b!, 'nœud-β ✓');
    await startInOrder(la, lb);
    expect((await la.getParticipants()).map((p) => p.id)).toEqual(['', 'nœud-β ✓']);
  });
});

describe('failover and close', () => {
  test('closing the leader hands over to the next in line, with a larger token; signal first, then notLeader (notifyLeader)', async () => {
    const [a, b, c] = await clients.openMany(3);
    const la = latch(a!, 'a', '/election', { closeMode: 'notifyLeader' });
    const lb = latch(b!, 'b');
    const lc = latch(c!, 'c');
    await startInOrder(la, lb, lc);
    const first = la.leadership!;
    const order: string[] = [];
    first.signal.addEventListener('abort', () => order.push(`signal:${(first.signal.reason as LeadershipLostError).end}`));
    la.on('notLeader', (end) => order.push(`notLeader:${end}`));
    const next = lb.await({ timeoutMs: 5000 });
    await la.close();
    expect(order).toEqual(['signal:closed', 'notLeader:closed']);
    expect(first.signal.reason).toBeInstanceOf(LeadershipLostError);
    const second = await next;
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    expect(lc.hasLeadership()).toBe(false);
    expect(la.hasLeadership()).toBe(false);
    expect(la.state).toBe('closed');
  });

  test('closeMode silent: no notLeader on close, but the signal still aborts; close(mode) overrides', async () => {
    const [a, b] = await clients.openMany(2);
    const la = latch(a!, 'a');
    const lb = latch(b!, 'b');
    await startInOrder(la, lb);
    const events: string[] = [];
    la.on('notLeader', () => events.push('notLeader'));
    const term = la.leadership!;
    await la.close();
    expect(events).toEqual([]);
    expect(term.signal.aborted).toBe(true);
    await lb.await({ timeoutMs: 5000 });
    lb.on('notLeader', (end) => events.push(`b:${end}`));
    await lb.close('notifyLeader');
    expect(events).toEqual(['b:closed']);
  });

  test('close leaves nothing behind: no node, no watch, no pending delete; the container goes', async () => {
    const cs = await clients.openMany(3);
    const observer = await clients.open();
    const ls = cs.map((c, i) => latch(c, `p${i}`, '/apps/x/election'));
    await startInOrder(...ls);
    expect(totalWatches(server)).toBeGreaterThan(0);
    await Promise.all(ls.map((l) => l.close()));
    expect(children('/apps/x/election')).toEqual([]);
    for (const c of cs) expect(c.pendingDeletes).toEqual([]);
    // Watch removals a close sends without waiting: a round trip on each client comes after them.
    await Promise.all(cs.map((c) => c.sync('/')));
    expect(totalWatches(server)).toBe(0);
    // The reaper deletes the container parent, which the observer hears.
    await whenTree(observer, '/apps/x', () => server.node('/apps/x/election') === undefined);
    for (const c of cs) expect(await c.getEphemerals()).toEqual([]);
  });

  test('close while disconnected resolves at once; the guaranteed delete removes the node after the reconnect', async () => {
    const [a, b] = await clients.openMany(2);
    const la = latch(a!, 'a');
    const lb = latch(b!, 'b');
    await startInOrder(la, lb);
    const observer = await clients.open();
    const path = lb.ourPath!;
    const restarting = server.restart(800);
    await b!.waitForState(ConnectionState.SUSPENDED, { timeoutMs: 3000 });
    const started = performance.now();
    await lb.close();
    expect(performance.now() - started).toBeLessThan(500);
    await restarting;
    await whenTree(observer, '/election', () => server.node(path) === undefined);
    // The delete's reply reaches b before the reply to a later round trip.
    await b!.sync('/');
    expect(b!.pendingDeletes).toEqual([]);
    expect((await la.await({ timeoutMs: 5000 })).path).toBe(la.ourPath);
  });

  test('await: resolves at once for the leader; TimeoutError, AbortError, ClosedError otherwise', async () => {
    const [a, b] = await clients.openMany(2);
    const la = latch(a!, 'a');
    const lb = latch(b!, 'b');
    await startInOrder(la, lb);
    await expect(la.await()).resolves.toBe(la.leadership);
    await expect(lb.await({ timeoutMs: 50 })).rejects.toBeInstanceOf(TimeoutError);
    const ac = new AbortController();
    const aborted = lb.await({ signal: ac.signal });
    ac.abort();
    await expect(aborted).rejects.toBeInstanceOf(AbortError);
    const closing = lb.await();
    await lb.close();
    await expect(closing).rejects.toBeInstanceOf(ClosedError);
    await expect(lb.await()).rejects.toBeInstanceOf(ClosedError);
  });

  test('start twice is refused; close before start and a second close do nothing; await using closes', async () => {
    const [a] = await clients.openMany(1);
    const l = latch(a!, 'a');
    await l.close();
    expect(l.state).toBe('closed');
    await expect(l.start()).rejects.toThrow(/more than once/);
    {
      await using l2 = new LeaderLatch(a!, '/election', { id: 'x' });
      await l2.start();
      await expect(l2.start()).rejects.toThrow(/more than once/);
      expect(l2.hasLeadership()).toBe(true);
    }
    expect(children()).toEqual([]);
  });

  test('start() before the client has connected joins once it connects', async () => {
    const { createClient } = await import('@tenure/client');
    const c = createClient({ transport: server.transport(), sessionTimeoutMs: 1500 });
    clients.all.push(c);
    const l = latch(c, 'late');
    const starting = l.start();
    // A round trip of another client: the latch has done nothing without its client.
    await (await clients.open()).sync('/');
    expect(children()).toEqual([]);
    await c.start();
    await starting;
    expect(l.hasLeadership()).toBe(true);
  });
});

describe('connection states', () => {
  test('standard policy: a dropped connection ends the term (suspended); on RECONNECTED the same node resumes with the same token', async () => {
    const [a, b] = await clients.openMany(2);
    const la = latch(a!, 'a');
    const lb = latch(b!, 'b');
    await startInOrder(la, lb);
    const path = la.ourPath;
    const first = la.leadership!;
    const ends: LeadershipEnd[] = [];
    la.on('notLeader', (e) => ends.push(e));
    let bLed = false;
    lb.on('isLeader', () => (bLed = true));
    server.dropConnection(a!.sessionId);
    await aborted(first.signal);
    expect((first.signal.reason as LeadershipLostError).end).toBe('suspended');
    const second = await la.await({ timeoutMs: 5000 });
    expect(ends).toEqual(['suspended']);
    expect(la.ourPath).toBe(path);
    expect(second.fencingToken).toBe(first.fencingToken);
    expect(second).not.toBe(first);
    expect(bLed).toBe(false);
  });

  test("errorPolicy 'session': a dropped connection does not end the term", async () => {
    const [a] = await clients.openMany(1, { errorPolicy: 'session' });
    const l = latch(a!, 'a');
    await l.start();
    const term = l.leadership!;
    const states: string[] = [];
    a!.on('stateChanged', (s) => states.push(s));
    server.dropConnection(a!.sessionId);
    await a!.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 3000 });
    expect(states).toContain(ConnectionState.RECONNECTED);
    await a!.sync('/'); // the check the reconnect set off has run its reads
    expect(term.signal.aborted).toBe(false);
    expect(l.leadership).toBe(term);
  });

  test('expired session: the term ends, the next leads with a larger token, the old leader rejoins at the back', async () => {
    const [a, b] = await clients.openMany(2);
    const la = latch(a!, 'a');
    const lb = latch(b!, 'b');
    await startInOrder(la, lb);
    const first = la.leadership!;
    const oldPath = la.ourPath;
    const next = lb.await({ timeoutMs: 5000 });
    const rejoined = nextEvent<string>(la, 'joined', (path) => path !== oldPath);
    server.expireSession(a!.sessionId);
    const second = await next;
    expect(first.signal.aborted).toBe(true);
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    expect(await rejoined).toBe(la.ourPath);
    expect(server.node(la.ourPath!)).toBeDefined();
    expect((await lb.getParticipants()).map((p) => p.id)).toEqual(['b', 'a']);
    expect(la.hasLeadership()).toBe(false);
  });

  test('a server restart: everyone reconnects on the same session; nobody resets, the leader keeps its token', async () => {
    const cs = await clients.openMany(3);
    const ls = cs.map((c, i) => latch(c, `p${i}`));
    await startInOrder(...ls);
    const paths = ls.map((l) => l.ourPath);
    const token = ls[0]!.leadership!.fencingToken;
    await server.restart(200);
    const again = await ls[0]!.await({ timeoutMs: 5000 });
    expect(again.fencingToken).toBe(token);
    expect(ls.map((l) => l.ourPath)).toEqual(paths);
    expect(ls[1]!.hasLeadership() || ls[2]!.hasLeadership()).toBe(false);
  });
});

describe('nodes deleted by others', () => {
  test("the leader's node deleted: its term ends (deleted), the next leads, the old one rejoins at the back", async () => {
    const [a, b, admin] = await clients.openMany(3);
    const la = latch(a!, 'a');
    const lb = latch(b!, 'b');
    await startInOrder(la, lb);
    const first = la.leadership!;
    const next = lb.await({ timeoutMs: 5000 });
    const rejoined = nextEvent(la, 'joined');
    await admin!.delete(la.ourPath!);
    await next;
    expect((first.signal.reason as LeadershipLostError).end).toBe('deleted');
    await rejoined;
    expect((await lb.getParticipants()).map((p) => p.id)).toEqual(['b', 'a']);
  });

  test("a follower's node deleted: as in Curator it notices when its predecessor goes, then rejoins at the back; it never leads on a missing node", async () => {
    const cs = await clients.openMany(3);
    const admin = await clients.open();
    const ls = cs.map((c, i) => latch(c, `p${i}`));
    await startInOrder(...ls);
    let p1Led = false;
    ls[1]!.on('isLeader', () => (p1Led = true));
    const p1Node = ls[1]!.ourPath!;
    await admin.delete(p1Node);
    // p2 moves its watch to p0; p1 still watches p0 (followers watch only their predecessor).
    await eventually(() => server.watchesOf(cs[2]!.sessionId).data.join() === ls[0]!.ourPath, 3000, 'p2 watches p0');
    expect(ls[1]!.ourPath).toBe(p1Node);
    const next = ls[2]!.await({ timeoutMs: 5000 });
    const rejoined = nextEvent(ls[1]!, 'joined');
    await ls[0]!.close();
    await next;
    await rejoined;
    expect(ls[1]!.ourPath).not.toBe(p1Node);
    expect(server.node(ls[1]!.ourPath!)).toBeDefined();
    expect((await admin.getChildren('/election')).children).toHaveLength(2);
    expect((await ls[2]!.getParticipants()).map((p) => p.id)).toEqual(['p2', 'p1']);
    expect(p1Led).toBe(false);
  });

  test('the whole election path deleted at once: everyone rejoins and one leads, with a larger token', async () => {
    const cs = await clients.openMany(3);
    const admin = await clients.open();
    const ls = cs.map((c, i) => latch(c, `p${i}`));
    await startInOrder(...ls);
    const token = ls[0]!.leadership!.fencingToken;
    const rejoined = Promise.all(ls.map((l) => nextEvent(l, 'joined')));
    const newLeader = anyEvent(ls, 'isLeader');
    const tx = admin.transaction();
    for (const l of ls) tx.delete(l.ourPath!);
    await tx.delete('/election').commit();
    await Promise.all([rejoined, newLeader]);
    expect(ls.filter((l) => l.hasLeadership())).toHaveLength(1);
    expect(server.node('/election')?.children).toHaveLength(3);
    const leader = ls.find((l) => l.hasLeadership())!;
    expect(leader.leadership!.fencingToken).toBeGreaterThan(token);
  });

  test('a node that is not a latch node sorts by its whole name and does not break the order', async () => {
    const [a, admin] = await clients.openMany(2);
    await admin!.create('/election/zzz', 'x', { createParents: true, mode: CreateMode.PERSISTENT });
    const l = latch(a!, 'a');
    await l.start();
    expect(l.hasLeadership()).toBe(true);
    await admin!.delete('/election/zzz');
  });
});

describe('listeners', () => {
  test('a listener that throws is reported as an error event; the latch goes on', async () => {
    const [a, b] = await clients.openMany(2);
    const la = latch(a!, 'a');
    const lb = latch(b!, 'b');
    const errors: Error[] = [];
    lb.on('isLeader', () => {
      throw new Error('boom');
    });
    lb.on('error', (e) => errors.push(e));
    // The throwing listener runs as b leads; its exception comes back as the error event.
    const reported = nextEvent(lb, 'error');
    await startInOrder(la, lb);
    await la.close();
    await reported;
    expect(lb.hasLeadership()).toBe(true);
    expect(errors.map((e) => e.message)).toEqual(['boom']);
  });

  test('an error listener that closes the latch leaves no retry timer behind', async () => {
    const live = new Set<unknown>();
    const clock = {
      now: () => performance.now(),
      setTimeout(fn: () => void, ms: number) {
        const h = setTimeout(
          () => {
            live.delete(h);
            fn();
          },
          Math.max(0, ms),
        );
        live.add(h);
        return h;
      },
      clearTimeout(h: unknown) {
        live.delete(h);
        clearTimeout(h as ReturnType<typeof setTimeout>);
      },
    };
    const [admin] = await clients.openMany(1);
    await admin!.create('/sealed', null, { acl: READ_ACL_UNSAFE });
    // A long retry pause, so that a timer armed after close would still be there when checked.
    const a = await clients.open({ clock, retryPolicy: RetryPolicies.forever(10_000) });
    const baseline = live.size;
    const l = latch(a, 'a', '/sealed/election');
    const closed = new Promise<void>((resolve) => l.on('error', () => void l.close().then(resolve)));
    void l.start().catch(() => {});
    await closed;
    expect(live.size).toBe(baseline);
  });
});

test('nothing keeps a process alive: a child process with a latch and a selector exits on its own once all is closed', async () => {
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', `${fixtures}exit-child.ts`], {
    cwd: fixtures,
    env: { ...process.env, TSX_TSCONFIG_PATH: `${fixtures}tsconfig.json` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let closedAt = 0;
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('closed') && closedAt === 0) closedAt = performance.now();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (c) => {
      clearTimeout(killer);
      resolve(c);
    });
  });
  expect(err).toBe('');
  expect(code).toBe(0);
  expect(out).toContain('closed');
  expect(performance.now() - closedAt).toBeLessThan(1500);
}, 30_000);
