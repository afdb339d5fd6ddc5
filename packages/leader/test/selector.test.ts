/** LeaderSelector on the embedded server: terms, requeue, errors, interruption, faults, close. */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ConnectionState, type Client, InvalidArgumentError } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { LeaderSelector, LeadershipLostError, type Leadership, type TakeLeadership } from '../src/index.js';
import { aborted, anyEvent, Clients, eventually, nextEvent, sleep, startServer, totalWatches, whenTree } from './harness.js';
import { LeadershipRecorder } from './recorder.js';

let server: EmbeddedServer;
let clients: Clients;
/** A client of its own that hears the election's changes (whenTree), for waits on the nodes. */
let observer: Client;
const selectors: LeaderSelector[] = [];

beforeEach(async () => {
  server = startServer();
  clients = new Clients(() => server.transport());
  observer = await clients.open();
});

afterEach(async () => {
  await Promise.all(selectors.splice(0).map((s) => s.close()));
  await clients.closeAll();
  await server.close();
});

function selector(client: Client, id: string, takeLeadership: TakeLeadership, autoRequeue = false, path = '/jobs'): LeaderSelector {
  const s = new LeaderSelector(client, path, { id, autoRequeue, takeLeadership });
  selectors.push(s);
  return s;
}

/** A takeLeadership that holds until released or its signal aborts. */
function holder(): { take: TakeLeadership; release: () => void; running: () => boolean; terms: Leadership[] } {
  let release: (() => void) | null = null;
  let running = false;
  const terms: Leadership[] = [];
  return {
    terms,
    take: async (signal, leadership) => {
      terms.push(leadership);
      running = true;
      await new Promise<void>((resolve) => {
        release = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      running = false;
    },
    release: () => release?.(),
    running: () => running,
  };
}

const children = (path = '/jobs'): string[] => [...(server.node(path)?.children ?? [])].sort();

/** Waits until the election holds `n` nodes (as the server's notifications report it). */
const queued = (n: number, path = '/jobs'): Promise<void> => whenTree(observer, path, () => children(path).length === n);

/** A promise and the function that resolves it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('layout and terms', () => {
  test("Curator's InterProcessMutex layout, the id as data; getParticipants / getLeader", async () => {
    const [a, b] = await clients.openMany(2);
    const ha = holder();
    const sa = selector(a!, 'alpha', ha.take);
    const sb = selector(b!, 'beta', holder().take);
    const alphaLeads = nextEvent(sa, 'isLeader');
    await sa.start();
    await alphaLeads;
    expect(sa.hasLeadership()).toBe(true);
    await sb.start();
    await queued(2);
    for (const n of children()) expect(n).toMatch(/^_c_[0-9a-f-]{36}-lock-\d{10}$/);
    const ps = await sb.getParticipants();
    expect(ps.map((p) => [p.id, p.isLeader])).toEqual([
      ['alpha', true],
      ['beta', false],
    ]);
    expect((await sa.getLeader())!.id).toBe('alpha');
    expect(sa.leadership!.fencingToken).toBe(server.node(ps[0]!.path)!.stat.czxid);
    expect(sb.hasLeadership()).toBe(false);
  });

  test('leadership lasts exactly as long as takeLeadership runs; without autoRequeue one term, requeue() queues again', async () => {
    const [a] = await clients.openMany(1);
    let runs = 0;
    const events: string[] = [];
    const s = selector(a!, 'a', async () => {
      runs++;
      events.push(`run:${String(s.hasLeadership())}`);
      await a!.sync('/'); // some work with the server
    });
    s.on('isLeader', () => events.push('isLeader'));
    s.on('notLeader', (end) => events.push(`notLeader:${end}`));
    const oneTerm = nextEvent(s, 'notLeader');
    await s.start();
    await oneTerm;
    expect(s.hasLeadership()).toBe(false);
    // The selector's loop returns a few requests after its lease's delete, with no event of its own to await.
    await sleep(50);
    expect(runs).toBe(1);
    expect(events).toEqual(['isLeader', 'run:true', 'notLeader:released']);
    await eventually(() => children().length === 0, 2000, 'the lease released');
    const secondTerm = nextEvent(s, 'isLeader');
    expect(s.requeue()).toBe(true);
    expect(s.requeue()).toBe(false);
    await secondTerm;
    expect(runs).toBe(2);
  });

  test('autoRequeue: three selectors take turns, one at a time, with rising tokens', async () => {
    const cs = await clients.openMany(3);
    const recorder = new LeadershipRecorder();
    let active = 0;
    let maxActive = 0;
    let terms = 0;
    const thirty = deferred();
    const ss = cs.map((c, i) =>
      selector(
        c,
        `s${i}`,
        async () => {
          active++;
          maxActive = Math.max(maxActive, active);
          if (++terms === 30) thirty.resolve();
          await c.exists('/jobs'); // some work with the server, during which nobody else may lead
          active--;
        },
        true,
      ),
    );
    ss.forEach((s, i) => recorder.attach(`s${i}`, s));
    await Promise.all(ss.map((s) => s.start()));
    await thirty.promise;
    await Promise.all(ss.map((s) => s.close()));
    recorder.assertSafe();
    expect(maxActive).toBe(1);
    expect(new Set(recorder.terms.map((t) => t.who)).size).toBe(3);
    const tokens = recorder.terms.map((t) => t.token);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
    expect(children()).toEqual([]);
  });
});

describe('errors and interruption', () => {
  test('errors from takeLeadership are emitted, never swallowed; with autoRequeue the selector goes on', async () => {
    const [a] = await clients.openMany(1);
    let runs = 0;
    const errors: string[] = [];
    const s = selector(
      a!,
      'a',
      async () => {
        runs++;
        throw new Error(`failure ${runs}`);
      },
      true,
    );
    s.on('error', (e) => errors.push(e.message));
    const third = nextEvent<Error>(s, 'error', (e) => e.message === 'failure 3');
    await s.start();
    await third;
    await s.close();
    expect(errors.slice(0, 3)).toEqual(['failure 1', 'failure 2', 'failure 3']);
    expect(errors.length).toBe(runs);
  });

  test('a synchronous throw is reported too', async () => {
    const [a] = await clients.openMany(1);
    const errors: Error[] = [];
    const s = selector(a!, 'a', () => {
      throw new TypeError('sync');
    });
    s.on('error', (e) => errors.push(e));
    const reported = nextEvent(s, 'error');
    await s.start();
    await reported;
    expect(errors[0]).toBeInstanceOf(TypeError);
  });

  test('interruptLeadership aborts the signal (interrupted); the next in line leads once takeLeadership returns', async () => {
    const [a, b] = await clients.openMany(2);
    const ha = holder();
    const hb = holder();
    const sa = selector(a!, 'a', ha.take);
    const sb = selector(b!, 'b', hb.take);
    const aLeads = nextEvent(sa, 'isLeader');
    await sa.start();
    await aLeads;
    expect(ha.running()).toBe(true);
    await sb.start();
    await queued(2);
    const term = sa.leadership!;
    const bLeads = nextEvent(sb, 'isLeader');
    sa.interruptLeadership();
    expect((term.signal.reason as LeadershipLostError).end).toBe('interrupted');
    await bLeads;
    expect(hb.running()).toBe(true);
    expect(hb.terms[0]!.fencingToken).toBeGreaterThan(term.fencingToken);
    expect(sa.hasLeadership()).toBe(false);
  });
});

describe('faults', () => {
  test('a dropped connection aborts the signal (suspended); the selector waits for takeLeadership to return before it requeues', async () => {
    const [a, b] = await clients.openMany(2);
    const events: string[] = [];
    let stop: (() => void) | null = null;
    let aTerms = 0;
    const sa = selector(
      a!,
      'a',
      async (signal) => {
        aTerms++;
        // Ignores the signal for a while: the selector must not queue again meanwhile.
        await new Promise<void>((resolve) => (stop = resolve));
        events.push(`a returned (aborted: ${String(signal.aborted)})`);
      },
      true,
    );
    const hb = holder();
    const sb = selector(b!, 'b', hb.take);
    sa.on('notLeader', (end) => events.push(`a notLeader:${end}`));
    const aLeads = nextEvent(sa, 'isLeader');
    await sa.start();
    await aLeads;
    expect(aTerms).toBe(1);
    await sb.start();
    await queued(2);
    const term = sa.leadership!;
    server.dropConnection(a!.sessionId);
    await aborted(term.signal);
    expect((term.signal.reason as LeadershipLostError).end).toBe('suspended');
    // Reconnected on the same session, and a round trip later: still no second term, and b waits.
    await a!.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    await Promise.all([a!.sync('/jobs'), b!.sync('/jobs')]);
    expect(aTerms).toBe(1);
    expect(sa.hasLeadership()).toBe(true); // takeLeadership still runs
    expect(hb.running()).toBe(false);
    const aNotLeader = nextEvent(sa, 'notLeader');
    const bLeads = nextEvent(sb, 'isLeader');
    stop!();
    await aNotLeader;
    expect(events).toEqual(['a returned (aborted: true)', 'a notLeader:suspended']);
    await bLeads;
    expect(hb.running()).toBe(true);
    await queued(2); // a requeued behind b
    const aAgain = nextEvent(sa, 'isLeader');
    hb.release();
    await aAgain;
    expect(aTerms).toBe(2);
    stop!(); // this takeLeadership ignores its signal: close() would wait for it
  });

  test('a takeLeadership slow to honour its signal after a reconnect on the same session: nobody else leads until it returns', async () => {
    const [a, b, c] = await clients.openMany(3);
    const recorder = new LeadershipRecorder();
    let returnedAt: number | null = null;
    let aTerms = 0;
    const letGo = deferred();
    const sa = selector(
      a!,
      'a',
      async (signal) => {
        aTerms++;
        if (aTerms > 1) return; // a requeued term: hand over at once
        await aborted(signal);
        await letGo.promise; // ignores the abort until the test lets it go
        returnedAt = recorder.now;
      },
      true,
    );
    const hb = holder();
    const hc = holder();
    const sb = selector(b!, 'b', hb.take, true);
    const sc = selector(c!, 'c', hc.take, true);
    recorder.attach('a', sa);
    recorder.attach('b', sb);
    recorder.attach('c', sc);
    const aLeads = nextEvent(sa, 'isLeader');
    await sa.start();
    await aLeads;
    expect(aTerms).toBe(1);
    const term = sa.leadership!;
    await sb.start();
    await sc.start();
    await queued(3);
    const aNode = term.path;
    const session = a!.sessionId;
    server.dropConnection(session);
    await aborted(term.signal);
    expect((term.signal.reason as LeadershipLostError).end).toBe('suspended');
    await a!.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    expect(a!.sessionId).toBe(session);
    // A round trip on every client after the reconnect: whatever the reconnect set off has been heard.
    await Promise.all([a!, b!, c!].map((cl) => cl.sync('/jobs')));
    // Still running takeLeadership: our node holds the election, nobody else leads.
    expect(returnedAt).toBeNull();
    expect(server.node(aNode)).toBeDefined();
    expect(hb.running() || hc.running()).toBe(false);
    const nextLeads = anyEvent([sb, sc], 'isLeader');
    letGo.resolve();
    await nextLeads;
    expect(returnedAt).not.toBeNull();
    expect(hb.running() || hc.running()).toBe(true);
    expect(server.node(aNode)).toBeUndefined();
    recorder.assertSafe();
    // Every term after a's first began only after its takeLeadership returned.
    const later = recorder.events.filter((e) => e.kind === 'isLeader').slice(1);
    expect(later.length).toBeGreaterThan(0);
    for (const e of later) expect(e.t).toBeGreaterThanOrEqual(returnedAt!);
    const aNotLeader = recorder.events.find((e) => e.who === 'a' && e.kind === 'notLeader')!;
    expect(aNotLeader.end).toBe('suspended');
    expect(later[0]!.t).toBeGreaterThanOrEqual(aNotLeader.t);
    // a requeued behind the others.
    await queued(3);
  });

  test('an expired session: the signal aborts, the next selector leads with a larger token', async () => {
    const [a, b] = await clients.openMany(2);
    const recorder = new LeadershipRecorder();
    const ha = holder();
    const hb = holder();
    const sa = selector(a!, 'a', ha.take, true);
    const sb = selector(b!, 'b', hb.take, true);
    recorder.attach('a', sa);
    recorder.attach('b', sb);
    const aLeads = nextEvent(sa, 'isLeader');
    await sa.start();
    await aLeads;
    await sb.start();
    await queued(2);
    const bLeads = nextEvent(sb, 'isLeader');
    server.expireSession(a!.sessionId);
    await bLeads;
    expect(hb.running()).toBe(true);
    recorder.assertSafe();
    expect(hb.terms[0]!.fencingToken).toBeGreaterThan(ha.terms[0]!.fencingToken);
    expect(['suspended', 'lost']).toContain((ha.terms[0]!.signal.reason as LeadershipLostError).end);
  });
});

describe('close', () => {
  test('close while leading aborts the signal (closed), waits for takeLeadership, then releases: nothing left', async () => {
    const [a] = await clients.openMany(1);
    let returned = false;
    const s = selector(a!, 'a', async (signal) => {
      await aborted(signal);
      await a!.sync('/'); // some clean-up with the server before returning
      returned = true;
    });
    const leading = nextEvent(s, 'isLeader');
    await s.start();
    await leading;
    const term = s.leadership!;
    await s.close();
    expect(returned).toBe(true);
    expect((term.signal.reason as LeadershipLostError).end).toBe('closed');
    expect(children()).toEqual([]);
    await a!.sync('/'); // after every request the close sent
    expect(totalWatches(server)).toBe(0);
    expect(s.state).toBe('closed');
    expect(() => s.requeue()).toThrow();
  });

  test('close while queued stops the acquire and leaves no node', async () => {
    const [a, b] = await clients.openMany(2);
    const ha = holder();
    const sa = selector(a!, 'a', ha.take);
    let bRan = false;
    const sb = selector(b!, 'b', async () => {
      bRan = true;
    });
    const aLeads = nextEvent(sa, 'isLeader');
    await sa.start();
    await aLeads;
    await sb.start();
    await queued(2);
    await sb.close();
    expect(children()).toHaveLength(1);
    ha.release();
    // a's node gone, then a round trip of b's: a watch b had left would have fired before its reply.
    await queued(0);
    await b!.sync('/jobs');
    expect(bRan).toBe(false);
  });

  test('start twice throws; await using closes', async () => {
    const [a] = await clients.openMany(1);
    {
      await using s = new LeaderSelector(a!, '/jobs', { takeLeadership: () => a!.sync('/') });
      await s.start();
      await expect(s.start()).rejects.toThrow(/more than once/);
    }
    expect(children()).toEqual([]);
    expect(() => new LeaderSelector(a!, '/jobs', {} as never)).toThrow(InvalidArgumentError);
  });
});
