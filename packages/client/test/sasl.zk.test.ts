/**
 * The client's SASL DIGEST-MD5 against a real ZooKeeper 3.8 with JAAS (SaslZooKeeper from
 * @tenure/testing): sasl:bob ACLs, a wrong password (AuthFailedError at once, no retries), and
 * re-authentication after a dropped TCP connection (FaultProxy) and after LOST (expireSession).
 * The interplay with ZooKeeper's Java client is in test/interop/sasl-java.slow.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { FaultProxy, SaslZooKeeper, expireSession, realZooKeeper, sleep } from '@tenure/testing';
import {
  AuthFailedError,
  ConnectionState,
  NoAuthError,
  Perms,
  RetryPolicies,
  createClient,
  type ACL,
  type Client,
  type ClientOptions,
} from '../src/index.js';

const zk = realZooKeeper();
let server: SaslZooKeeper;
const closers: Array<() => Promise<void>> = [];
const BOB_ONLY: ACL[] = [{ perms: Perms.ALL, id: { scheme: 'sasl', id: 'bob' } }];

function client(options: Partial<ClientOptions> = {}): { client: Client; states: ConnectionState[]; failures: AuthFailedError[] } {
  const c = createClient({
    connectString: server.connectString,
    sessionTimeoutMs: 3000,
    connectionTimeoutMs: 5000,
    retryPolicy: RetryPolicies.exponentialBackoff(50, 10, 500),
    ...options,
  });
  const states: ConnectionState[] = [];
  const failures: AuthFailedError[] = [];
  c.on('stateChanged', (s) => states.push(s));
  c.on('authFailed', (e) => failures.push(e));
  closers.push(() => c.close());
  return { client: c, states, failures };
}

const as = (username: string, password: string) => ({ sasl: { mechanism: 'DIGEST-MD5' as const, username, password } });

async function whoAmI(c: Client): Promise<string[]> {
  return (await c.whoAmI()).map((i) => `${i.authScheme}:${i.user}`).sort();
}

describe.skipIf(!zk.available)('SASL DIGEST-MD5 on real ZooKeeper (JAAS)', () => {
  beforeAll(async () => {
    server = await SaslZooKeeper.start();
  }, 120_000);
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => {});
  });
  afterAll(async () => {
    await server?.close();
  });

  it('bob is sasl:bob; a sasl:bob ACL refuses alice and an unauthenticated client', async () => {
    const bob = client(as('bob', 'bobsecret'));
    await bob.client.start();
    expect(bob.states).toEqual([ConnectionState.CONNECTED]);
    expect(await whoAmI(bob.client)).toEqual(['ip:127.0.0.1', 'sasl:bob']);
    await bob.client.create('/tenure-bob', Buffer.from('bobdata'), { acl: BOB_ONLY });
    expect((await bob.client.getACL('/tenure-bob')).acl).toEqual(BOB_ONLY);
    expect((await bob.client.getData('/tenure-bob')).data.toString()).toBe('bobdata');

    const alice = client(as('alice', 'alicesecret'));
    await alice.client.start();
    expect(await whoAmI(alice.client)).toEqual(['ip:127.0.0.1', 'sasl:alice']);
    await expect(alice.client.getData('/tenure-bob')).rejects.toBeInstanceOf(NoAuthError);
    const nobody = client();
    await nobody.client.start();
    await expect(nobody.client.getData('/tenure-bob')).rejects.toBeInstanceOf(NoAuthError);
    await bob.client.delete('/tenure-bob');
  });

  it('a wrong password: start() rejects with AuthFailedError at once; nothing is retried', async () => {
    const w = client(as('bob', 'wrong'));
    const t0 = performance.now();
    const err = await w.client.start().catch((e: unknown) => e);
    const took = performance.now() - t0;
    expect(err).toBeInstanceOf(AuthFailedError);
    expect(took).toBeLessThan(3000);
    expect(w.states).toEqual([]);
    expect(w.failures).toHaveLength(1);
    await expect(w.client.exists('/')).rejects.toBeInstanceOf(AuthFailedError);
    // One refusal in the server's log, and no more after a while: the client stopped.
    const refusals = (): number => readFileSync(server.logFile, 'utf8').split('Mismatched response').length - 1;
    const seen = refusals();
    expect(seen).toBeGreaterThanOrEqual(1);
    await sleep(1000);
    expect(refusals()).toBe(seen);
  });

  it('re-authenticates after a dropped TCP connection: RECONNECTED, sasl:bob again, the ACL still admits bob', async () => {
    const proxy = await FaultProxy.start(server.connectString);
    closers.push(() => proxy.close());
    const bob = client({ ...as('bob', 'bobsecret'), connectString: proxy.connectString });
    await bob.client.start();
    await bob.client.create('/tenure-reconnect', Buffer.from('v'), { acl: BOB_ONLY });
    const session = bob.client.sessionId;
    proxy.reset();
    // Sent while disconnected: it must wait for SASL on the new connection, or the ACL refuses it.
    const read = bob.client.getData('/tenure-reconnect');
    await bob.client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 10_000 });
    expect((await read).data.toString()).toBe('v');
    expect(bob.client.sessionId).toBe(session);
    expect(bob.states).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED, ConnectionState.RECONNECTED]);
    expect(await whoAmI(bob.client)).toEqual(['ip:127.0.0.1', 'sasl:bob']);
    await bob.client.delete('/tenure-reconnect');
  });

  it('re-authenticates after LOST (expireSession): a new session, sasl:bob again', async () => {
    const bob = client(as('bob', 'bobsecret'));
    await bob.client.start();
    await bob.client.create('/tenure-lost', Buffer.from('v'), { acl: BOB_ONLY });
    const first = bob.client.sessionId;
    await expireSession(bob.client, server.connectString);
    await bob.client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 15_000 });
    expect(bob.states).toContain(ConnectionState.LOST);
    expect(bob.client.sessionId).not.toBe(first);
    expect(await whoAmI(bob.client)).toEqual(['ip:127.0.0.1', 'sasl:bob']);
    expect((await bob.client.getData('/tenure-lost')).data.toString()).toBe('v');
    await bob.client.delete('/tenure-lost');
  });
});
