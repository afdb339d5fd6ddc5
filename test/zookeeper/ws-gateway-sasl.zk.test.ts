/**
 * SASL end to end through the WebSocket gateway: a client over WebSocket runs DIGEST-MD5 with a real
 * ZooKeeper 3.8 (JAAS; SaslZooKeeper from @tenure/testing) through `createWebSocketGateway`, which
 * carries the frames and knows nothing of them. sasl:bob ACLs hold, a wrong password fails at once,
 * and a dropped TCP connection behind the gateway (FaultProxy) re-authenticates on the reconnect.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AuthFailedError, ConnectionState, NoAuthError, Perms, RetryPolicies, createClient, type ACL, type Client } from '@tenure/client';
import { createWebSocketGateway, type WebSocketGateway } from '@tenure/server';
import { FaultProxy, SaslZooKeeper, realZooKeeper } from '@tenure/testing';
import { webSocket } from '@tenure/ws';

const zk = realZooKeeper();
const BOB_ONLY: ACL[] = [{ perms: Perms.ALL, id: { scheme: 'sasl', id: 'bob' } }];
const as = (username: string, password: string) => ({ sasl: { mechanism: 'DIGEST-MD5' as const, username, password } });

describe.skipIf(!zk.available)('SASL through the WebSocket gateway to real ZooKeeper (JAAS)', () => {
  let server: SaslZooKeeper;
  let proxy: FaultProxy;
  let gateway: WebSocketGateway;
  const clients: Client[] = [];

  beforeAll(async () => {
    server = await SaslZooKeeper.start();
    proxy = await FaultProxy.start(server.connectString);
    gateway = await createWebSocketGateway({ connectString: proxy.connectString });
  }, 120_000);
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => {});
  });
  afterAll(async () => {
    await gateway?.close();
    await proxy?.close();
    await server?.close();
  });

  function client(options: Partial<Parameters<typeof createClient>[0]> = {}): Client {
    const c = createClient({
      transport: webSocket(gateway.url),
      sessionTimeoutMs: 4000,
      connectionTimeoutMs: 5000,
      retryPolicy: RetryPolicies.exponentialBackoff(50, 10, 500),
      ...options,
    });
    clients.push(c);
    return c;
  }

  it('bob is sasl:bob over WebSocket; his ACL refuses alice and an unauthenticated client', async () => {
    const bob = client(as('bob', 'bobsecret'));
    await bob.start();
    expect((await bob.whoAmI()).map((i) => `${i.authScheme}:${i.user}`)).toContain('sasl:bob');
    await bob.create('/ws-sasl-bob', Buffer.from('b'), { acl: BOB_ONLY });
    const alice = client(as('alice', 'alicesecret'));
    await alice.start();
    await expect(alice.getData('/ws-sasl-bob')).rejects.toBeInstanceOf(NoAuthError);
    const nobody = client();
    await nobody.start();
    await expect(nobody.getData('/ws-sasl-bob')).rejects.toBeInstanceOf(NoAuthError);
    expect((await bob.getData('/ws-sasl-bob')).data.toString()).toBe('b');
    await bob.delete('/ws-sasl-bob');
  });

  it('a wrong password: start() rejects with AuthFailedError at once', async () => {
    const t0 = performance.now();
    await expect(client(as('bob', 'wrong')).start()).rejects.toBeInstanceOf(AuthFailedError);
    expect(performance.now() - t0).toBeLessThan(4000);
  });

  it('the TCP connection behind the gateway drops: RECONNECTED, authenticated again, the ACL still admits bob', async () => {
    const bob = client(as('bob', 'bobsecret'));
    const states: string[] = [];
    bob.on('stateChanged', (s) => void states.push(s));
    await bob.start();
    await bob.create('/ws-sasl-again', Buffer.from('v'), { acl: BOB_ONLY });
    const id = bob.sessionId;
    proxy.reset();
    const read = bob.getData('/ws-sasl-again');
    await bob.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 10_000 });
    expect((await read).data.toString()).toBe('v');
    expect(bob.sessionId).toBe(id);
    expect(states).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED, ConnectionState.RECONNECTED]);
    await bob.delete('/ws-sasl-again');
  });
});
