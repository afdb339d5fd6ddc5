/**
 * Clients for recipe tests on an embedded server with a short tick: started, state-recording, and
 * closed together. Session timeouts are small so faults play out in test time.
 */
import { createClient, RetryPolicies, type Client, type ClientOptions, type ConnectionState, type Transport } from '@tenure/client';
import { createEmbeddedServer, type EmbeddedServer, type EmbeddedServerOptions } from '@tenure/server';

/** An embedded server with a 100 ms tick (ZooKeeper's 2 s is too slow for tests). */
export function startTestServer(options: EmbeddedServerOptions = {}): EmbeddedServer {
  return createEmbeddedServer({ tickMs: 100, containerCheckIntervalMs: 100, ...options });
}

/** Small timeouts and a quick retry policy, overridable per client. */
function testClient(target: EmbeddedServer | Transport | string, options: Partial<ClientOptions>, sessionTimeoutMs: number): Client {
  const where =
    typeof target === 'string'
      ? { connectString: target }
      : { transport: 'transport' in target && typeof target.transport === 'function' ? target.transport() : (target as Transport) };
  return createClient({
    ...where,
    sessionTimeoutMs,
    connectionTimeoutMs: 3000,
    retryPolicy: RetryPolicies.exponentialBackoff(20, 10, 200),
    ...options,
  });
}

export interface RecordedClient {
  client: Client;
  states: ConnectionState[];
}

/** A started client on `target` (a server, a transport or a connect string) whose state events are recorded. */
export async function connectRecording(
  target: EmbeddedServer | Transport | string,
  options: Partial<ClientOptions> = {},
): Promise<RecordedClient> {
  const client = testClient(target, options, 1000);
  const states: ConnectionState[] = [];
  client.on('stateChanged', (s) => void states.push(s));
  await client.start();
  return { client, states };
}

/** Clients opened by a test, closed by `closeAll`. */
export class TestClients {
  readonly all: Client[] = [];

  constructor(private readonly transport: () => Transport) {}

  async open(options: Partial<ClientOptions> = {}): Promise<Client> {
    const client = testClient(this.transport(), options, 1500);
    this.all.push(client);
    await client.start();
    return client;
  }

  async openMany(n: number, options: Partial<ClientOptions> = {}): Promise<Client[]> {
    return Promise.all(Array.from({ length: n }, () => this.open(options)));
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.all.splice(0).map((c) => c.close()));
  }
}
