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

export { eventually, sleep } from '@tenure/testing';
/** Watch entries the server holds for the client's session (0 when none). */
export function serverWatches(server: EmbeddedServer, client: Client): number {
  return server.watchCounts().get(client.sessionId) ?? 0;
}
