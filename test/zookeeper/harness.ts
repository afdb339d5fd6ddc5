/** Helpers for the client-over-real-ZooKeeper suites: clients that record their states. */
import { createClient, RetryPolicies, type Client, type ClientOptions, type ConnectionState } from '@tenure/client';

export interface Recorded {
  client: Client;
  states: ConnectionState[];
  /** [state, ms since the client was created] */
  timeline: Array<[ConnectionState, number]>;
  /** Everything the client logged: [level, object, message]. */
  logs: Array<[string, unknown, string | undefined]>;
}

/** A logger that keeps every record (the client is silent without one). */
function recordingLogger(logs: Recorded['logs']) {
  const at = (level: string) => (obj: unknown, msg?: string) => void logs.push([level, obj, msg]);
  const logger = {
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    child: () => logger,
  };
  return logger;
}

/** A started client on `connectString` whose state events are recorded. */
export async function connect(connectString: string, options: Partial<ClientOptions> = {}, start = true): Promise<Recorded> {
  const logs: Recorded['logs'] = [];
  const client = createClient({
    connectString,
    sessionTimeoutMs: 2000,
    connectionTimeoutMs: 4000,
    retryPolicy: RetryPolicies.exponentialBackoff(20, 10, 200),
    logger: recordingLogger(logs) as unknown as ClientOptions['logger'],
    ...options,
  });
  const states: ConnectionState[] = [];
  const timeline: Array<[ConnectionState, number]> = [];
  const t0 = performance.now();
  client.on('stateChanged', (s) => {
    states.push(s);
    timeline.push([s, performance.now() - t0]);
  });
  if (start) await client.start();
  return { client, states, timeline, logs };
}

export { eventually, sleep } from '@tenure/testing';
