/**
 * Connection attempts: shuffled hosts, a timeout of T / hosts per attempt (handshake included),
 * and reconnects that back off. One embedded server is reached under two host names, so that
 * the client sees an ensemble of two; the faults are the server's own (pause, restart). Client and
 * server share a ManualClock, so the attempt timeouts and backoff gaps are exact.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import type { ConnectParams, ConnectionHandlers, Transport } from '@tenure/protocol';
import { ConnectionState, createClient, type Client } from '../src/index.js';
import { ManualClock } from '@tenure/testing';
import { startServer } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

interface Attempt {
  host: string;
  start: number;
  end?: number;
  outcome?: string;
}

/** The server under two names, recording every attempt (times read on `clock`). */
function twoNames(s: EmbeddedServer, attempts: Attempt[], clock: ManualClock): Transport {
  const inner = s.transport();
  return {
    hosts: ['h1:2181', 'h2:2181'],
    async connect(host: string, params: ConnectParams, handlers: ConnectionHandlers) {
      const a: Attempt = { host, start: clock.now() };
      attempts.push(a);
      try {
        const r = await inner.connect(inner.hosts[0]!, params, handlers);
        a.outcome = r.kind;
        return r;
      } catch (err) {
        a.outcome = (err as Error).name;
        throw err;
      } finally {
        a.end = clock.now();
      }
    },
  };
}

describe('connect pacing', () => {
  it('each attempt times out after T / hosts; hosts alternate', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const attempts: Attempt[] = [];
    const client = createClient({ transport: twoNames(server, attempts, clock), sessionTimeoutMs: 1000, connectionTimeoutMs: 5000, clock });
    clients.push(client);
    void server.pause(1400); // handshakes wait: every attempt must be cut by the client's own timer
    const t0 = clock.now();
    const started = client.start();
    await clock.advanceUntil(() => client.state === ConnectionState.CONNECTED, { stepMs: 1 });
    await started;
    // The attempt waiting when the pause ends is answered then.
    expect(clock.now() - t0).toBe(1400);
    const timedOut = attempts.filter((a) => a.outcome === 'AbortError');
    expect(timedOut.length).toBeGreaterThanOrEqual(2);
    for (const a of timedOut) expect(a.end! - a.start).toBe(500); // 1000 ms / 2 hosts
    expect(attempts.at(-1)).toMatchObject({ outcome: 'connected', end: t0 + 1400 });
    for (let i = 1; i < attempts.length; i++) expect(attempts[i]!.host).not.toBe(attempts[i - 1]!.host);
  });

  it('reconnect attempts against a refusing server back off, capped at min(1 s, T/3)', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const attempts: Attempt[] = [];
    const client = createClient({ transport: twoNames(server, attempts, clock), sessionTimeoutMs: 1800, connectionTimeoutMs: 5000, clock });
    clients.push(client);
    await client.start();
    attempts.length = 0;
    const t0 = clock.now();
    const restarted = server.restart(1000); // refuses connections for 1 s (the LOST deadline is 1.8 s)
    await clock.advance(0);
    expect(client.state).toBe(ConnectionState.SUSPENDED);
    await clock.advance(1000);
    await restarted;
    await clock.advanceUntil(() => client.state === ConnectionState.RECONNECTED, { stepMs: 1 });
    const refused = attempts.filter((a) => a.outcome === 'ConnectionLossError');
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(refused.length).toBeLessThan(40); // backing off, not spinning
    expect(attempts.slice(0, -1).every((a) => a.outcome === 'ConnectionLossError' && a.end === a.start)).toBe(true);
    expect(attempts.at(-1)!.outcome).toBe('connected');
    const gaps = attempts.slice(1).map((a, i) => a.start - attempts[i]!.end!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(600); // cap: min(1000, 1800 / 3)
    // Exponential from 10 ms with jitter in the upper half (Math.random, not injectable): the pause
    // after the n-th failure in a row lies in [c/2, c], c = min(600, 10 * 2^(n-1)); the first failure
    // is the connection the restart closed, so attempts[0] starts 5..10 ms after it.
    const bounds = (failures: number): [number, number] => {
      const c = Math.min(600, 10 * 2 ** (failures - 1));
      return [c / 2, c];
    };
    const first = attempts[0]!.start - t0;
    expect(first).toBeGreaterThanOrEqual(bounds(1)[0]);
    expect(first).toBeLessThanOrEqual(bounds(1)[1]);
    gaps.forEach((gap, i) => {
      const [lo, hi] = bounds(i + 2);
      expect(gap, `gap ${i}`).toBeGreaterThanOrEqual(lo);
      expect(gap, `gap ${i}`).toBeLessThanOrEqual(hi);
    });
    expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
    // The reconnect is the first attempt at or after the refusal ends.
    expect(attempts.at(-1)!.start).toBeGreaterThanOrEqual(t0 + 1000);
    expect(attempts.at(-2)!.start).toBeLessThan(t0 + 1000);
    expect(client.state).toBe(ConnectionState.RECONNECTED);
    await clock.advance(10);
  });
});
