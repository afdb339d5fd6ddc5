/** Test harness: an embedded server with a small tick, clients that record their states, polling. */
import { createEmbeddedServer, type EmbeddedServer, type EmbeddedServerOptions } from '@tenure/server';
import { createClient, RetryPolicies, type Client, type ClientOptions, type ConnectionState } from '@tenure/client';

export const TICK_MS = 100;

export function startServer(options: EmbeddedServerOptions = {}): EmbeddedServer {
  return createEmbeddedServer({ tickMs: TICK_MS, containerCheckIntervalMs: 100, ...options });
}

export interface Recorded {
  client: Client;
  states: ConnectionState[];
}

/** A started client on `server` (or on `connectString`) whose state events are recorded. */
export async function connect(target: EmbeddedServer | string, options: Partial<ClientOptions> = {}): Promise<Recorded> {
  const client = createClient({
    ...(typeof target === 'string' ? { connectString: target } : { transport: target.transport() }),
    sessionTimeoutMs: 1000,
    connectionTimeoutMs: 3000,
    retryPolicy: RetryPolicies.exponentialBackoff(20, 10, 200),
    ...options,
  });
  const states: ConnectionState[] = [];
  client.on('stateChanged', (s) => void states.push(s));
  await client.start();
  return { client, states };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns truthy (or throws after `timeoutMs`). */
export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 5000, what = 'condition'): Promise<NonNullable<T>> {
  const until = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (performance.now() > until) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(15);
  }
}

/** Watch entries the server holds for the client's session (0 when none). */
export function serverWatches(server: EmbeddedServer, client: Client): number {
  return server.watchCounts().get(client.sessionId) ?? 0;
}
