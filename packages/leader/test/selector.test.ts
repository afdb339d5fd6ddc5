/** LeaderSelector on the embedded server: terms, requeue, errors, interruption, faults, close. */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ConnectionState, type Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { LeaderSelector, LeadershipLostError, type Leadership, type TakeLeadership } from '../src/index.js';
import { Clients, eventually, sleep, startServer, totalWatches } from './harness.js';
import { LeadershipRecorder } from './recorder.js';

let server: EmbeddedServer;
let clients: Clients;
const selectors: LeaderSelector[] = [];

beforeEach(() => {
  server = startServer();
  clients = new Clients(() => server.transport());
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

describe('layout and terms', () => {
  test("Curator's InterProcessMutex layout, the id as data; getParticipants / getLeader", async () => {
    const [a, b] = await clients.openMany(2);
    const ha = holder();
    const sa = selector(a!, 'alpha', ha.take);
    const sb = selector(b!, 'beta', holder().take);
    await sa.start();
    await eventually(() => sa.hasLeadership(), 3000, 'alpha leads');
    await sb.start();
    await eventually(() => children().length === 2, 3000, 'beta queued');
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
      await sleep(20);
    });
    s.on('isLeader', () => events.push('isLeader'));
    s.on('notLeader', (end) => events.push(`notLeader:${end}`));
    await s.start();
    await eventually(() => runs === 1 && !s.hasLeadership(), 3000, 'one term');
    await sleep(50);
    expect(runs).toBe(1);
    expect(events).toEqual(['isLeader', 'run:true', 'notLeader:released']);
    await eventually(() => children().length === 0, 2000, 'the lease released');
    expect(s.requeue()).toBe(true);
    expect(s.requeue()).toBe(false);
    await eventually(() => runs === 2, 3000, 'a second term');
  });

  test('autoRequeue: three selectors take turns, one at a time, with rising tokens', async () => {
    const cs = await clients.openMany(3);
    const recorder = new LeadershipRecorder();
    let active = 0;
    let maxActive = 0;
    let terms = 0;
    const ss = cs.map((c, i) =>
      selector(
        c,
        `s${i}`,
        async () => {
          active++;
          maxActive = Math.max(maxActive, active);
          terms++;
          await sleep(5);
          active--;
        },
        true,
      ),
    );
    ss.forEach((s, i) => recorder.attach(`s${i}`, s));
    await Promise.all(ss.map((s) => s.start()));
    await eventually(() => terms >= 30, 10_000, '30 terms');
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
    await s.start();
    await eventually(() => runs >= 3, 3000, 'three runs');
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
    await s.start();
    await eventually(() => errors.length === 1, 3000, 'the error');
    expect(errors[0]).toBeInstanceOf(TypeError);
  });

  test('interruptLeadership aborts the signal (interrupted); the next in line leads once takeLeadership returns', async () => {
    const [a, b] = await clients.openMany(2);
    const ha = holder();
    const hb = holder();
    const sa = selector(a!, 'a', ha.take);
    const sb = selector(b!, 'b', hb.take);
    await sa.start();
    await eventually(() => ha.running(), 3000, 'a leads');
    await sb.start();
    await eventually(() => children().length === 2, 3000, 'b queued');
    const term = sa.leadership!;
    sa.interruptLeadership();
    expect((term.signal.reason as LeadershipLostError).end).toBe('interrupted');
    await eventually(() => hb.running(), 3000, 'b leads');
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
    await sa.start();
    await eventually(() => aTerms === 1, 3000, 'a leads');
    await sb.start();
    const term = sa.leadership!;
    server.dropConnection(a!.sessionId);
    await eventually(() => term.signal.aborted, 3000, 'the signal aborts');
    expect((term.signal.reason as LeadershipLostError).end).toBe('suspended');
    await sleep(300);
    expect(aTerms).toBe(1);
    expect(sa.hasLeadership()).toBe(true); // takeLeadership still runs
    stop!();
    await eventually(() => events.length === 2, 3000, 'a returned');
    expect(events).toEqual(['a returned (aborted: true)', 'a notLeader:suspended']);
    await eventually(() => hb.running(), 3000, 'b leads');
    await eventually(() => children().length === 2, 3000, 'a requeued behind b');
    hb.release();
    await eventually(() => aTerms === 2, 3000, 'a leads again');
    stop!(); // this takeLeadership ignores its signal: close() would wait for it
  });

  test('a takeLeadership slow to honour its signal after a reconnect on the same session: nobody else leads until it returns', async () => {
    const [a, b, c] = await clients.openMany(3);
    const recorder = new LeadershipRecorder();
    let returnedAt: number | null = null;
    let aTerms = 0;
    const sa = selector(
      a!,
      'a',
      async (signal) => {
        aTerms++;
        if (aTerms > 1) return; // a requeued term: hand over at once
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        await sleep(1000); // ignores the abort for a while
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
    await sa.start();
    await eventually(() => aTerms === 1, 3000, 'a leads');
    const term = sa.leadership!;
    await sb.start();
    await sc.start();
    await eventually(() => children().length === 3, 3000, 'b and c queued');
    const aNode = term.path;
    const session = a!.sessionId;
    server.dropConnection(session);
    await eventually(() => term.signal.aborted, 3000, 'the signal aborts');
    expect((term.signal.reason as LeadershipLostError).end).toBe('suspended');
    await eventually(() => a!.state === ConnectionState.RECONNECTED, 5000, 'a reconnects');
    expect(a!.sessionId).toBe(session);
    // Still running takeLeadership: our node holds the election, nobody else leads.
    expect(returnedAt).toBeNull();
    expect(server.node(aNode)).toBeDefined();
    expect(hb.running() || hc.running()).toBe(false);
    await eventually(() => returnedAt !== null, 5000, 'takeLeadership returns');
    await eventually(() => hb.running() || hc.running(), 5000, 'the next selector leads');
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
    await eventually(() => children().length === 3, 3000, 'a requeued');
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
    await sa.start();
    await eventually(() => ha.running(), 3000, 'a leads');
    await sb.start();
    await eventually(() => children().length === 2, 3000, 'b queued');
    server.expireSession(a!.sessionId);
    await eventually(() => hb.running(), 5000, 'b leads');
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
      await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      await sleep(50);
      returned = true;
    });
    await s.start();
    await eventually(() => s.hasLeadership(), 3000, 'leading');
    const term = s.leadership!;
    await s.close();
    expect(returned).toBe(true);
    expect((term.signal.reason as LeadershipLostError).end).toBe('closed');
    expect(children()).toEqual([]);
    await eventually(() => totalWatches(server) === 0, 2000, 'no watches');
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
    await sa.start();
    await eventually(() => ha.running(), 3000, 'a leads');
    await sb.start();
    await eventually(() => children().length === 2, 3000, 'b queued');
    await sb.close();
    expect(children()).toHaveLength(1);
    ha.release();
    await sleep(50);
    expect(bRan).toBe(false);
  });

  test('start twice throws; await using closes', async () => {
    const [a] = await clients.openMany(1);
    {
      await using s = new LeaderSelector(a!, '/jobs', { takeLeadership: () => sleep(10) });
      await s.start();
      await expect(s.start()).rejects.toThrow(/more than once/);
    }
    expect(children()).toEqual([]);
    expect(() => new LeaderSelector(a!, '/jobs', {} as never)).toThrow(TypeError);
  });
});
