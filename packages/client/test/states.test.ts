/** The connection state machine under the embedded server's real faults. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { ConnectionLossError, ConnectionState, CreateMode, RetryPolicies, SessionExpiredError, type Client } from '../src/index.js';
import { ManualClock, nextEvent } from '@tenure/testing';
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

const { CONNECTED, SUSPENDED, RECONNECTED, LOST } = ConnectionState;

/** Each state the client posts from now on, with the manual time it was posted at. */
function stateTimes(client: Client, clock: ManualClock): Array<[ConnectionState, number]> {
  const at: Array<[ConnectionState, number]> = [];
  client.on('stateChanged', (s: ConnectionState) => at.push([s, clock.now()]));
  return at;
}

/** Whether a promise has settled yet (it is observed, so a rejection is not unhandled). */
function settledFlag(p: Promise<unknown>): { done: boolean } {
  const flag = { done: false };
  p.then(
    () => (flag.done = true),
    () => (flag.done = true),
  );
  return flag;
}

/** The client's read timeout R = 2/3 T (session.ts): SUSPENDED after R without a reply. */
const readTimeoutOf = (T: number): number => Math.floor((T * 2) / 3);

describe('connection states', () => {
  it('start gives CONNECTED, once', async () => {
    server = startServer();
    const { client, states } = await open();
    expect(states).toEqual([CONNECTED]);
    expect(client.state).toBe(CONNECTED);
    expect(typeof client.sessionId).toBe('bigint');
    expect(client.sessionPassword.length).toBe(16);
    expect(client.connectedServer).toBe('embedded');
  });

  it('an idle session stays connected: pings keep it alive for many timeouts', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client, states } = await open({ sessionTimeoutMs: 400, clock });
    await client.create('/e', null, { mode: CreateMode.EPHEMERAL });
    await clock.advance(20 * 400);
    expect(states).toEqual([CONNECTED]);
    expect(server.sessions().map((s) => s.sessionId)).toEqual([client.sessionId]);
    expect(await client.exists('/e')).not.toBeNull();
  });

  it('dropConnection gives SUSPENDED then RECONNECTED, same session, ephemerals intact', async () => {
    server = startServer();
    const { client, states } = await open();
    await client.create('/eph', 'x', { mode: CreateMode.EPHEMERAL });
    const id = client.sessionId;
    expect(server.dropConnection(id)).toBe(true);
    await client.waitForState(RECONNECTED, { timeoutMs: 5000 });
    expect(states).toEqual([CONNECTED, SUSPENDED, RECONNECTED]);
    expect(client.sessionId).toBe(id);
    expect(client.previousSessionIds).toEqual([]);
    const stat = await client.exists('/eph');
    expect(stat?.ephemeralOwner).toBe(id);
    expect(server.sessions()[0]!.ephemerals).toEqual(['/eph']);
  });

  it('silence past the timeout: SUSPENDED, LOST at the deadline, RECONNECTED with a new session', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client, states } = await open({ sessionTimeoutMs: 1000, clock });
    const at = stateTimes(client, clock);
    await client.create('/eph', null, { mode: CreateMode.EPHEMERAL });
    const oldId = client.sessionId;
    const T = client.negotiatedTimeoutMs;
    expect(T).toBe(1000);
    // The last request the server answers is this one: the LOST deadline is its send time + T.
    const sentAt = clock.now();
    await client.exists('/eph');
    server.silence(oldId, 4000);
    await clock.advance(T - 1);
    expect(client.state).toBe(SUSPENDED);
    await clock.advance(1);
    // SUSPENDED after R without a reply, LOST exactly at sentAt + T (that request was the last answered).
    expect(at).toEqual([
      [SUSPENDED, sentAt + readTimeoutOf(T)],
      [LOST, sentAt + T],
    ]);
    await clock.advanceUntil(() => client.state === RECONNECTED);
    expect(states).toEqual([CONNECTED, SUSPENDED, LOST, RECONNECTED]);
    expect(client.sessionId).not.toBe(0n);
    expect(client.sessionId).not.toBe(oldId);
    expect(client.previousSessionIds).toEqual([oldId]);
    // The old session is gone from the server, and its ephemeral with it (once it expires there).
    let deleted!: () => void;
    const ephDeleted = new Promise<void>((resolve) => (deleted = resolve));
    if ((await client.exists('/eph', { watch: () => deleted() })) !== null) {
      const gone = settledFlag(ephDeleted);
      await clock.advanceUntil(() => gone.done);
    }
    expect(server.sessions().some((s) => s.sessionId === oldId)).toBe(false);
    expect(await client.exists('/eph')).toBeNull();
  });

  it('LOST lands at the deadline measured from the client side', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client, timeline } = await open({ sessionTimeoutMs: 800, clock });
    const T = client.negotiatedTimeoutMs;
    const before = clock.now();
    await client.sync('/');
    server.silence(client.sessionId, 3000);
    // deadline = (send time of the last answered request: the sync) + T
    await clock.advance(T - 1);
    expect(client.state).toBe(SUSPENDED);
    await clock.advance(1);
    expect(client.state).toBe(LOST);
    expect(clock.now() - before).toBe(T);
    expect(timeline.map(([s]) => s)).toEqual([CONNECTED, SUSPENDED, LOST]);
  });

  it('expireSession while disconnected gives LOST on reconnect, then RECONNECTED', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client, states } = await open({ sessionTimeoutMs: 2000, clock });
    const at = stateTimes(client, clock);
    await client.create('/eph', null, { mode: CreateMode.EPHEMERAL });
    const oldId = client.sessionId;
    const t0 = clock.now();
    const restarted = server.restart(300); // every connection closes; new ones refused for 300 ms
    await clock.advance(0);
    expect(client.state).toBe(SUSPENDED);
    expect(server.expireSession(oldId)).toBe(true);
    await clock.advance(300);
    await restarted;
    await clock.advanceUntil(() => client.state === RECONNECTED, { stepMs: 1 });
    // LOST on the first handshake after the restart: within one backoff cap, min(1 s, T/3), of it.
    const lostAt = at.find(([s]) => s === LOST)![1] - t0;
    expect(lostAt).toBeGreaterThanOrEqual(300);
    expect(lostAt).toBeLessThanOrEqual(300 + Math.floor(2000 / 3));
    expect(states).toEqual([CONNECTED, SUSPENDED, LOST, RECONNECTED]);
    expect(client.sessionId).not.toBe(oldId);
    expect(client.previousSessionIds).toEqual([oldId]);
    expect(await client.exists('/eph')).toBeNull();
  });

  it('a server down for longer than the timeout: LOST at the deadline, then a new session once it is back', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client, states } = await open({ sessionTimeoutMs: 1000, clock });
    const at = stateTimes(client, clock);
    const oldId = client.sessionId;
    const before = clock.now();
    await client.sync('/');
    const restarted = server.restart(1600);
    await clock.advance(1000);
    // SUSPENDED when the server closes the connection, LOST at the sync's send time + T.
    expect(at).toEqual([
      [SUSPENDED, before],
      [LOST, before + 1000],
    ]);
    await clock.advance(600);
    await restarted;
    await clock.advanceUntil(() => client.state === RECONNECTED, { stepMs: 1 });
    // Back at 1600 ms; the attempt then pending waits at most the backoff cap, min(1 s, T/3).
    const reconnectedAt = at.find(([s]) => s === RECONNECTED)![1] - before;
    expect(reconnectedAt).toBeGreaterThanOrEqual(1600);
    expect(reconnectedAt).toBeLessThanOrEqual(1600 + Math.floor(1000 / 3));
    expect(states).toEqual([CONNECTED, SUSPENDED, LOST, RECONNECTED]);
    expect(client.previousSessionIds).toEqual([oldId]);
    expect(server.sessions().map((s) => s.sessionId)).toEqual([client.sessionId]);
  });

  it('operations issued while SUSPENDED wait for the reconnect', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client } = await open({ clock });
    await client.create('/n', 'v');
    const restarted = server.restart(300);
    await clock.advance(0);
    expect(client.state).toBe(SUSPENDED);
    const pending = client.getData('/n');
    const answered = settledFlag(pending);
    await clock.advance(300);
    await restarted;
    await clock.advanceUntil(() => answered.done, { stepMs: 1 });
    expect(client.state).toBe(RECONNECTED);
    expect((await pending).data.toString()).toBe('v');
  });

  it('operations fail with ConnectionLoss after connectionTimeoutMs when the retry policy gives up', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client } = await open({ connectionTimeoutMs: 300, retryPolicy: RetryPolicies.none(), clock });
    void server.restart(5000);
    await clock.advance(0);
    expect(client.state).toBe(SUSPENDED);
    const op = client.getData('/');
    const failed = settledFlag(op);
    const rejected = expect(op).rejects.toBeInstanceOf(ConnectionLossError);
    // It waits exactly connectionTimeoutMs for a connection.
    await clock.advance(299);
    expect(failed.done).toBe(false);
    await clock.advance(1);
    expect(failed.done).toBe(true);
    await rejected;
  });

  it('a request in flight when the session is lost fails with SessionExpired (never retried)', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client } = await open({ sessionTimeoutMs: 600, retryPolicy: RetryPolicies.forever(50), connectionTimeoutMs: 5000, clock });
    server.silence(client.sessionId, 3000);
    const op = client.getData('/');
    const failed = settledFlag(op);
    const rejected = expect(op).rejects.toBeInstanceOf(SessionExpiredError);
    // It fails at the LOST deadline: T after the handshake's send time, the last answered send.
    await clock.advance(599);
    expect(failed.done).toBe(false);
    await clock.advance(1);
    await rejected;
    expect(client.state).toBe(LOST);
  });

  it('state events are delivered in order even when a listener causes the next one', async () => {
    server = startServer();
    const { client } = await open();
    const seen: string[] = [];
    let closing: Promise<void> | undefined;
    client.on('stateChanged', (s) => {
      seen.push(`a:${s}`);
      if (s === SUSPENDED) closing = client.close();
    });
    client.on('stateChanged', (s) => seen.push(`b:${s}`));
    const suspended = nextEvent(client, 'stateChanged', (s) => s === SUSPENDED);
    server.dropConnection(client.sessionId);
    await suspended;
    await closing; // closed: no state event can follow
    expect(client.closed).toBe(true);
    expect(seen).toEqual(['a:SUSPENDED', 'b:SUSPENDED']);
  });

  it('waitForState honours timeoutMs and signal', async () => {
    server = startServer();
    const { client } = await open();
    await expect(client.waitForState(LOST, { timeoutMs: 50 })).rejects.toMatchObject({ name: 'TimeoutError' });
    const ac = new AbortController();
    const p = client.waitForState(LOST, { signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    expect(await client.waitForState(CONNECTED)).toBe(CONNECTED);
  });

  it('start rejects on timeout when no server answers, and can be retried', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const paused = server.pause(600);
    const { createClient } = await import('../src/index.js');
    const client = createClient({ transport: server.transport(), sessionTimeoutMs: 1000, connectionTimeoutMs: 200, clock });
    clients.push(client);
    const first = client.start();
    const gaveUp = settledFlag(first);
    const rejected = expect(first).rejects.toMatchObject({ name: 'TimeoutError' });
    // It gives up at exactly connectionTimeoutMs.
    await clock.advance(199);
    expect(gaveUp.done).toBe(false);
    await clock.advance(1);
    await rejected;
    await clock.advance(400);
    await paused;
    const again = client.start({ timeoutMs: 3000 });
    const started = settledFlag(again);
    await clock.advanceUntil(() => started.done, { stepMs: 1 });
    await again;
    expect(client.state).toBe(CONNECTED);
  });

  it('errorPolicy decides the error states', async () => {
    server = startServer();
    const { client } = await open();
    expect(client.errorPolicy).toBe('standard');
    expect(client.isErrorState(SUSPENDED)).toBe(true);
    expect(client.isErrorState(LOST)).toBe(true);
    expect(client.isErrorState(RECONNECTED)).toBe(false);
    const { client: c2 } = await open({ errorPolicy: 'session' });
    expect(c2.isErrorState(SUSPENDED)).toBe(false);
    expect(c2.isErrorState(LOST)).toBe(true);
  });
});
