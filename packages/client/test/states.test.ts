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

  it('silence past the timeout: SUSPENDED, LOST by the deadline (+500 ms), RECONNECTED with a new session', async () => {
    server = startServer();
    const { client, states, timeline } = await open({ sessionTimeoutMs: 1000 });
    await client.create('/eph', null, { mode: CreateMode.EPHEMERAL });
    const oldId = client.sessionId;
    const T = client.negotiatedTimeoutMs;
    expect(T).toBe(1000);
    // The last request the server answers is this one: the LOST deadline is its send time + T.
    const sentAt = performance.now();
    await client.exists('/eph');
    server.silence(oldId, 4000);
    const lostAt = await client.waitForState(LOST, { timeoutMs: 5000 }).then(() => performance.now());
    // The deadline is at least sentAt + T (that request was answered) and at most the send time of
    // the last answered ping or request + T, which is before the silence began.
    expect(lostAt - sentAt).toBeGreaterThanOrEqual(T - 5);
    expect(lostAt - sentAt).toBeLessThanOrEqual(T + 500);
    const suspendedAt = timeline.find(([s]) => s === SUSPENDED)![1];
    const lostAtRel = timeline.find(([s]) => s === LOST)![1];
    expect(suspendedAt).toBeLessThan(lostAtRel);
    await client.waitForState(RECONNECTED, { timeoutMs: 5000 });
    expect(states).toEqual([CONNECTED, SUSPENDED, LOST, RECONNECTED]);
    expect(client.sessionId).not.toBe(0n);
    expect(client.sessionId).not.toBe(oldId);
    expect(client.previousSessionIds).toEqual([oldId]);
    // The old session is gone from the server, and its ephemeral with it (once it expires there).
    let deleted!: () => void;
    const ephDeleted = new Promise<void>((resolve) => (deleted = resolve));
    if ((await client.exists('/eph', { watch: () => deleted() })) !== null) await ephDeleted;
    expect(server.sessions().some((s) => s.sessionId === oldId)).toBe(false);
    expect(await client.exists('/eph')).toBeNull();
  });

  it('LOST lands within 500 ms of the deadline measured from the client side', async () => {
    server = startServer();
    const { client, timeline } = await open({ sessionTimeoutMs: 800 });
    const T = client.negotiatedTimeoutMs;
    const before = performance.now();
    await client.sync('/');
    server.silence(client.sessionId, 3000);
    await client.waitForState(LOST, { timeoutMs: 4000 });
    const lost = performance.now();
    // deadline <= (time of the last answered send) + T <= (time the silence began) + T
    expect(lost - before).toBeLessThanOrEqual(T + 500 + 50);
    expect(timeline.map(([s]) => s)).toEqual([CONNECTED, SUSPENDED, LOST]);
  });

  it('expireSession while disconnected gives LOST on reconnect, then RECONNECTED', async () => {
    server = startServer();
    const { client, states } = await open({ sessionTimeoutMs: 2000 });
    await client.create('/eph', null, { mode: CreateMode.EPHEMERAL });
    const oldId = client.sessionId;
    const restarted = server.restart(300); // every connection closes; new ones refused for 300 ms
    await client.waitForState(SUSPENDED, { timeoutMs: 2000 });
    expect(server.expireSession(oldId)).toBe(true);
    await restarted;
    await client.waitForState(RECONNECTED, { timeoutMs: 5000 });
    expect(states).toEqual([CONNECTED, SUSPENDED, LOST, RECONNECTED]);
    expect(client.sessionId).not.toBe(oldId);
    expect(client.previousSessionIds).toEqual([oldId]);
    expect(await client.exists('/eph')).toBeNull();
  });

  it('a server down for longer than the timeout: LOST by the deadline, then a new session once it is back', async () => {
    server = startServer();
    const { client, states } = await open({ sessionTimeoutMs: 1000 });
    const oldId = client.sessionId;
    const before = performance.now();
    await client.sync('/');
    const restarted = server.restart(1600);
    await client.waitForState(LOST, { timeoutMs: 3000 });
    expect(performance.now() - before).toBeLessThanOrEqual(1000 + 500);
    await restarted;
    await client.waitForState(RECONNECTED, { timeoutMs: 3000 });
    expect(states).toEqual([CONNECTED, SUSPENDED, LOST, RECONNECTED]);
    expect(client.previousSessionIds).toEqual([oldId]);
    expect(server.sessions().map((s) => s.sessionId)).toEqual([client.sessionId]);
  });

  it('operations issued while SUSPENDED wait for the reconnect', async () => {
    server = startServer();
    const { client } = await open();
    await client.create('/n', 'v');
    const restarted = server.restart(300);
    await client.waitForState(SUSPENDED);
    const pending = client.getData('/n');
    await restarted;
    expect((await pending).data.toString()).toBe('v');
  });

  it('operations fail with ConnectionLoss after connectionTimeoutMs when the retry policy gives up', async () => {
    server = startServer();
    const { client } = await open({ connectionTimeoutMs: 300, retryPolicy: RetryPolicies.none() });
    void server.restart(5000);
    await client.waitForState(SUSPENDED);
    const t0 = performance.now();
    await expect(client.getData('/')).rejects.toBeInstanceOf(ConnectionLossError);
    const waited = performance.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(280);
    expect(waited).toBeLessThan(1500);
  });

  it('a request in flight when the session is lost fails with SessionExpired (never retried)', async () => {
    server = startServer();
    const { client } = await open({ sessionTimeoutMs: 600, retryPolicy: RetryPolicies.forever(50), connectionTimeoutMs: 5000 });
    server.silence(client.sessionId, 3000);
    const op = client.getData('/');
    await expect(op).rejects.toBeInstanceOf(SessionExpiredError);
    expect(client.state === LOST || client.state === RECONNECTED).toBe(true);
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
    server = startServer();
    const paused = server.pause(600);
    const { createClient } = await import('../src/index.js');
    const client = createClient({ transport: server.transport(), sessionTimeoutMs: 1000, connectionTimeoutMs: 200 });
    clients.push(client);
    await expect(client.start()).rejects.toMatchObject({ name: 'TimeoutError' });
    await paused;
    await client.start({ timeoutMs: 3000 });
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
