/**
 * Connection attempts: shuffled hosts, a timeout of T / hosts per attempt (handshake included),
 * and reconnects that back off. One embedded server is reached under two host names, so that
 * the client sees an ensemble of two; the faults are the server's own (pause, restart).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import type { ConnectParams, ConnectionHandlers, Transport } from '@tenure/protocol';
import { ConnectionState, createClient, type Client } from '../src/index.js';
import { sleep, startServer } from './harness.js';

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

/** The server under two names, recording every attempt. */
function twoNames(s: EmbeddedServer, attempts: Attempt[]): Transport {
  const inner = s.transport();
  return {
    hosts: ['h1:2181', 'h2:2181'],
    async connect(host: string, params: ConnectParams, handlers: ConnectionHandlers) {
      const a: Attempt = { host, start: performance.now() };
      attempts.push(a);
      try {
        const r = await inner.connect(inner.hosts[0]!, params, handlers);
        a.outcome = r.kind;
        return r;
      } catch (err) {
        a.outcome = (err as Error).name;
        throw err;
      } finally {
        a.end = performance.now();
      }
    },
  };
}

describe('connect pacing', () => {
  it('each attempt times out after T / hosts; hosts alternate', async () => {
    server = startServer();
    const attempts: Attempt[] = [];
    const client = createClient({ transport: twoNames(server, attempts), sessionTimeoutMs: 1000, connectionTimeoutMs: 5000 });
    clients.push(client);
    void server.pause(1400); // handshakes wait: every attempt must be cut by the client's own timer
    const t0 = performance.now();
    await client.start();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1300);
    const timedOut = attempts.filter((a) => a.outcome === 'AbortError');
    expect(timedOut.length).toBeGreaterThanOrEqual(2);
    for (const a of timedOut) {
      expect(a.end! - a.start).toBeGreaterThanOrEqual(490); // 1000 ms / 2 hosts
      expect(a.end! - a.start).toBeLessThan(800);
    }
    for (let i = 1; i < attempts.length; i++) expect(attempts[i]!.host).not.toBe(attempts[i - 1]!.host);
  });

  it('reconnect attempts against a refusing server back off, capped at min(1 s, T/3)', async () => {
    server = startServer();
    const attempts: Attempt[] = [];
    const client = createClient({ transport: twoNames(server, attempts), sessionTimeoutMs: 1800, connectionTimeoutMs: 5000 });
    clients.push(client);
    await client.start();
    attempts.length = 0;
    const restarted = server.restart(1000); // refuses connections for 1 s (the LOST deadline is 1.8 s)
    await client.waitForState(ConnectionState.SUSPENDED);
    await restarted;
    await client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 3000 });
    const refused = attempts.filter((a) => a.outcome === 'ConnectionLossError');
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(refused.length).toBeLessThan(40); // backing off, not spinning
    const gaps = attempts.slice(1).map((a, i) => a.start - attempts[i]!.end!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(600 + 50); // cap: min(1000, 1800 / 3)
    // Exponential from 10 ms with jitter in the upper half: [5, 10], [10, 20], [20, 40] ms, ...
    expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
    expect(client.state).toBe(ConnectionState.RECONNECTED);
    await sleep(10);
  });
});
