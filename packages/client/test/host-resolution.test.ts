/**
 * Host names are resolved at every connect attempt through the `lookup` hook: a server moved
 * behind the same name is found (the session re-attaches there), and a name that does not
 * resolve is skipped with one log line while the rest of the list serves.
 *
 * One embedded server, reached through two FaultProxies on two loopback addresses (127.0.0.1
 * and 127.0.0.2) with the same port: "zk.test" resolves to one or the other.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { FaultProxy, TestingEmbeddedServer } from '@tenure/testing';
import { ConnectionState, createClient, type Client, type Logger } from '../src/index.js';

function recordingLogger(lines: { level: string; msg: string }[]): Logger {
  const at =
    (level: string) =>
    (objOrMsg: unknown, msg?: string): void => {
      lines.push({ level, msg: typeof objOrMsg === 'string' ? objOrMsg : (msg ?? '') });
    };
  return { trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const notFound = (name: string) => Object.assign(new TypeError(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });

describe('host names resolved at each connect attempt', () => {
  let server: TestingEmbeddedServer;
  let first: FaultProxy;
  let second: FaultProxy;
  let client: Client | undefined;
  beforeEach(async () => {
    server = await TestingEmbeddedServer.start();
    first = await FaultProxy.start(server.connectString);
    second = await FaultProxy.start(server.connectString, { host: '127.0.0.2', port: first.port });
  });
  afterEach(async () => {
    await client?.close();
    await Promise.all([first.close(), second.close()]);
    await server.close();
  });

  test('a server moved behind the same name is found, in the same session', async () => {
    let answer = '127.0.0.1';
    const asked: string[] = [];
    client = createClient({
      connectString: `zk.test:${first.port}`,
      sessionTimeoutMs: 10_000,
      lookup: async (name) => {
        asked.push(name);
        if (name !== 'zk.test') throw notFound(name);
        return [answer];
      },
    });
    await client.start();
    expect(client.connectedServer).toBe(`zk.test:${first.port}`);
    expect(first.connections).toHaveLength(1);
    const sessionId = client.sessionId;
    // The name now points at the other address; the old one goes away.
    answer = '127.0.0.2';
    const reconnected = client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 10_000 });
    await first.close();
    await reconnected;
    expect(client.sessionId).toBe(sessionId);
    expect(second.connections).toHaveLength(1);
    expect(asked.length).toBeGreaterThanOrEqual(2);
    expect(new Set(asked)).toEqual(new Set(['zk.test']));
  });

  test('an unresolvable name is skipped with one log line; the rest of the list serves', async () => {
    const lines: { level: string; msg: string }[] = [];
    client = createClient({
      connectString: `nowhere.test:${first.port},${first.address}`,
      sessionTimeoutMs: 10_000,
      logger: recordingLogger(lines),
      random: () => 0.99, // the shuffle keeps the order: nowhere.test is tried first
      lookup: (name) => Promise.reject(notFound(name)),
    });
    await client.start();
    expect(client.connectedServer).toBe(first.address);
    const skipped = lines.filter((l) => l.msg.includes('cannot resolve'));
    expect(skipped).toEqual([{ level: 'warn', msg: `cannot resolve nowhere.test:${first.port}: skipped` }]);
  });
});
