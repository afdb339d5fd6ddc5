/**
 * The client's SASL against the embedded server's (`sasl: { users }`), over TCP: CONNECTED only
 * after the exchange, the `sasl` ACL scheme enforced, a wrong password (start() rejects with
 * AuthFailedError at once, no state, no retries), a running client refused on a reconnect (the
 * `authFailed` event, no new state, no more attempts), and re-authentication after a dropped TCP
 * connection (FaultProxy) and after LOST (expireSession). Faults are real: sockets, sessions.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { DigestMd5Client } from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { FaultProxy, expireSession, nextEvent, sleep } from '@tenure/testing';
import {
  AuthFailedError,
  ConnectionState,
  InvalidArgumentError,
  NoAuthError,
  Perms,
  RetryPolicies,
  createClient,
  type ACL,
  type Client,
  type ClientOptions,
  type SaslExchange,
  type SaslMechanism,
} from '../src/index.js';
import { countingClock } from './harness.js';

const USERS = { bob: 'secret', alice: 'alicesecret' };
const BOB_ONLY: ACL[] = [{ perms: Perms.ALL, id: { scheme: 'sasl', id: 'bob' } }];

let server: EmbeddedServer;
let connectString: string;
const cleanup: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => {});
  await server?.close();
});

async function startServer(): Promise<void> {
  server = createEmbeddedServer({ tickMs: 100, sasl: { users: USERS } });
  connectString = (await server.listen({ port: 0 })).connectString;
}

function client(options: Partial<ClientOptions> & { sasl?: ClientOptions['sasl'] }): {
  client: Client;
  states: ConnectionState[];
  failures: AuthFailedError[];
} {
  const c = createClient({
    connectString,
    sessionTimeoutMs: 2000,
    connectionTimeoutMs: 3000,
    retryPolicy: RetryPolicies.exponentialBackoff(20, 10, 200),
    ...options,
  });
  const states: ConnectionState[] = [];
  const failures: AuthFailedError[] = [];
  c.on('stateChanged', (s) => states.push(s));
  c.on('authFailed', (e) => failures.push(e));
  cleanup.push(() => c.close());
  return { client: c, states, failures };
}

const bob = { mechanism: 'DIGEST-MD5', username: 'bob', password: 'secret' } as const;

async function whoAmI(c: Client): Promise<string[]> {
  return (await c.whoAmI()).map((i) => `${i.authScheme}:${i.user}`).sort();
}

describe('SASL DIGEST-MD5 against the embedded server', () => {
  test('CONNECTED comes after the exchange; the connection is sasl:bob; a sasl:bob ACL admits bob only', async () => {
    await startServer();
    const b = client({ sasl: bob });
    await b.client.start();
    expect(b.states).toEqual([ConnectionState.CONNECTED]);
    expect(await whoAmI(b.client)).toEqual(['ip:127.0.0.1', 'sasl:bob']);
    await b.client.create('/bob', Buffer.from('bobdata'), { acl: BOB_ONLY });
    expect((await b.client.getData('/bob')).data.toString()).toBe('bobdata');

    const a = client({ sasl: { mechanism: 'DIGEST-MD5', username: 'alice', password: 'alicesecret' } });
    await a.client.start();
    expect(await whoAmI(a.client)).toEqual(['ip:127.0.0.1', 'sasl:alice']);
    await expect(a.client.getData('/bob')).rejects.toBeInstanceOf(NoAuthError);
    await expect(a.client.setData('/bob', 'x')).rejects.toBeInstanceOf(NoAuthError);
    const nobody = client({});
    await nobody.client.start();
    await expect(nobody.client.getData('/bob')).rejects.toBeInstanceOf(NoAuthError);
    expect(b.failures).toEqual([]);
  });

  test('a wrong password: start() rejects with AuthFailedError at once, no state, no retries, no timers left', async () => {
    await startServer();
    const clock = countingClock();
    for (const sasl of [
      { ...bob, password: 'wrong' },
      { ...bob, username: 'mallory' },
    ]) {
      const w = client({ sasl, clock });
      const t0 = performance.now();
      const err = await w.client.start().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuthFailedError);
      expect(String((err as Error).message)).toMatch(/SASL DIGEST-MD5 with 127\.0\.0\.1:\d+/);
      expect(performance.now() - t0).toBeLessThan(1500);
      expect(w.states).toEqual([]);
      expect(w.client.state).toBeNull();
      expect(w.failures).toHaveLength(1);
      // Again: the same refusal at once, and no new attempt reaches the server.
      const before = server.connectionCount;
      await expect(w.client.start()).rejects.toBeInstanceOf(AuthFailedError);
      await expect(w.client.exists('/')).rejects.toBeInstanceOf(AuthFailedError);
      await sleep(300);
      expect(server.connectionCount).toBe(before);
      expect(w.failures).toHaveLength(1);
      await w.client.close();
      expect(clock.live()).toBe(0);
    }
    expect(server.connectionCount).toBe(0);
  });

  test('re-authenticates after a dropped TCP connection (FaultProxy reset), before waiting requests', async () => {
    await startServer();
    const proxy = await FaultProxy.start(connectString);
    cleanup.push(() => proxy.close());
    const b = client({ sasl: bob, connectString: proxy.connectString });
    await b.client.start();
    await b.client.create('/bob', Buffer.from('v1'), { acl: BOB_ONLY });
    const session = b.client.sessionId;
    proxy.reset();
    // Issued while disconnected: it waits, and goes out only after SASL on the new connection
    // (otherwise the sasl:bob ACL would refuse it).
    const read = b.client.getData('/bob');
    await b.client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 5000 });
    expect((await read).data.toString()).toBe('v1');
    expect(b.client.sessionId).toBe(session);
    expect(b.states).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED, ConnectionState.RECONNECTED]);
    expect(await whoAmI(b.client)).toEqual(['ip:127.0.0.1', 'sasl:bob']);
    expect(proxy.connections.length).toBeGreaterThanOrEqual(1);
  });

  test('re-authenticates after LOST (expireSession): a new session, sasl:bob again', async () => {
    await startServer();
    const b = client({ sasl: bob });
    await b.client.start();
    await b.client.create('/bob', Buffer.from('v1'), { acl: BOB_ONLY });
    const first = b.client.sessionId;
    await expireSession(b.client, connectString);
    await b.client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 8000 });
    expect(b.states).toContain(ConnectionState.LOST);
    expect(b.client.sessionId).not.toBe(first);
    expect(await whoAmI(b.client)).toEqual(['ip:127.0.0.1', 'sasl:bob']);
    expect((await b.client.getData('/bob')).data.toString()).toBe('v1');
  });

  test('a running client refused on a reconnect: authFailed fires, no new state, no more attempts', async () => {
    await startServer();
    const proxy = await FaultProxy.start(connectString);
    cleanup.push(() => proxy.close());
    // A mechanism of our own (the pluggable layer): DIGEST-MD5 whose password can change, as a
    // rotated credential would.
    let password = 'secret';
    let exchanges = 0;
    const rotating: SaslMechanism = {
      name: 'DIGEST-MD5',
      start(): SaslExchange {
        exchanges++;
        return new DigestMd5Client({ username: 'bob', password });
      },
    };
    const b = client({ sasl: { mechanism: rotating }, connectString: proxy.connectString });
    await b.client.start();
    expect(exchanges).toBe(1);
    const pending = b.client.getData('/'); // fine now
    await pending;
    password = 'rotated-away';
    const failed = nextEvent(b.client, 'authFailed', undefined, { timeoutMs: 5000 });
    proxy.reset();
    await failed;
    expect(b.failures).toHaveLength(1);
    expect(b.failures[0]).toBeInstanceOf(AuthFailedError);
    expect(b.states).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED]);
    await expect(b.client.getData('/')).rejects.toBeInstanceOf(AuthFailedError);
    const attempts = exchanges;
    await sleep(500);
    expect(exchanges).toBe(attempts);
    expect(b.states).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED]);
    await b.client.close();
  });

  test('the in-process transport runs the same exchange', async () => {
    await startServer();
    const b = client({ sasl: bob, transport: server.transport(), connectString: undefined });
    await b.client.start();
    expect(await whoAmI(b.client)).toEqual(['ip:127.0.0.1', 'sasl:bob']);
    const w = client({ sasl: { ...bob, password: 'nope' }, transport: server.transport(), connectString: undefined });
    await expect(w.client.start()).rejects.toBeInstanceOf(AuthFailedError);
    expect(w.failures).toHaveLength(1);
  });

  test('a bad sasl option fails createClient', () => {
    expect(() => createClient({ connectString: '127.0.0.1:1', sasl: { mechanism: 'PLAIN' } as never })).toThrow(InvalidArgumentError);
    expect(() => createClient({ connectString: '127.0.0.1:1', sasl: { mechanism: 'DIGEST-MD5', username: '', password: 'x' } })).toThrow(
      InvalidArgumentError,
    );
  });
});
