/** Test harness: an embedded server with a small tick, and clients that record their states. */
import { createEmbeddedServer, type EmbeddedServer, type EmbeddedServerOptions } from '@tenure/server';
import { createClient, RetryPolicies, type Client, type ClientOptions, type ConnectionState } from '../src/index.js';

export const TICK_MS = 100;

export function startServer(options: EmbeddedServerOptions = {}): EmbeddedServer {
  return createEmbeddedServer({ tickMs: TICK_MS, ...options });
}

export interface Recorded {
  client: Client;
  states: ConnectionState[];
  /** [state, ms since the client was created] */
  timeline: Array<[ConnectionState, number]>;
}

/** A started client whose state events are recorded. */
export async function connect(server: EmbeddedServer, options: Partial<ClientOptions> = {}): Promise<Recorded> {
  const client = createClient({
    transport: server.transport(),
    sessionTimeoutMs: 1000,
    connectionTimeoutMs: 2000,
    retryPolicy: RetryPolicies.exponentialBackoff(20, 10, 200),
    ...options,
  });
  const states: ConnectionState[] = [];
  const timeline: Array<[ConnectionState, number]> = [];
  const t0 = performance.now();
  client.on('stateChanged', (s) => {
    states.push(s);
    timeline.push([s, performance.now() - t0]);
  });
  await client.start();
  return { client, states, timeline };
}

export { eventually, sleep } from '@tenure/testing';
/** The system clock, counting the timers that are armed and not yet fired or cleared. */
export function countingClock(): import('../src/index.js').Clock & { live(): number } {
  const live = new Set<unknown>();
  return {
    now: () => performance.now(),
    setTimeout(fn, ms) {
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
    clearTimeout(h) {
      live.delete(h);
      clearTimeout(h as ReturnType<typeof setTimeout>);
    },
    live: () => live.size,
  };
}
