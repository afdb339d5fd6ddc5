/**
 * READ_ONLY on a real ZooKeeper ensemble started with readonlymode.enabled: when a server loses its
 * quorum it serves read-only clients; a client with canBeReadOnly reports READ_ONLY there, and
 * RECONNECTED once a read-write server is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestingCluster, realZooKeeper } from '@tenure/testing';
import { ConnectionState, NotReadOnlyError, createClient, type Client, type ConnectionState as State } from '../src/index.js';

const zk = realZooKeeper();

describe.skipIf(!zk.available)('read-only servers', () => {
  let cluster: TestingCluster;
  let client: Client | undefined;
  beforeAll(async () => {
    // ZooKeeper 3.8 creates sessions on a read-only server only as local sessions.
    cluster = await TestingCluster.start({
      size: 3,
      systemProperties: { 'readonlymode.enabled': true },
      config: { localSessionsEnabled: true },
    });
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await cluster?.close();
  });

  it('READ_ONLY while only a minority runs, RECONNECTED when the quorum is back', async () => {
    const t0 = performance.now();
    const log = (l: string) => (o: unknown, m?: string) =>
      process.env.DEBUG_RO &&
      console.log(
        Math.round(performance.now() - t0),
        l,
        m,
        JSON.stringify(o, (_k, v) => (typeof v === 'bigint' ? String(v) : v instanceof Error ? `${v.name}: ${v.message}` : v)),
      );
    const logger = { trace: log('trace'), debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
    client = createClient({
      connectString: cluster.connectString,
      sessionTimeoutMs: 4000,
      connectionTimeoutMs: 20_000,
      canBeReadOnly: true,
      logger,
    });
    const states: State[] = [];
    client.on('stateChanged', (s) => states.push(s));
    await client.start();
    await client.create('/ro', 'data');
    const mine = cluster.serverOf(client);
    const others = [0, 1, 2].filter((n) => n !== mine);
    for (const n of others) await cluster.killServer(n);
    await client.waitForState(ConnectionState.READ_ONLY, { timeoutMs: 30_000 });
    expect((await client.getData('/ro')).data.toString()).toBe('data');
    await expect(client.setData('/ro', 'x')).rejects.toBeInstanceOf(NotReadOnlyError);
    for (const n of others) await cluster.restartServer(n, { wait: false });
    await client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 60_000 });
    await client.setData('/ro', 'rw again');
    // A 3.8 read-only server answers the re-attach of a global session with "expired": LOST, then a
    // local session there (READ_ONLY), then a new global session once a read-write server is back.
    expect(states).toEqual([
      ConnectionState.CONNECTED,
      ConnectionState.SUSPENDED,
      ConnectionState.LOST,
      ConnectionState.READ_ONLY,
      ...(states.length === 6 ? [ConnectionState.SUSPENDED] : []),
      ConnectionState.RECONNECTED,
    ]);
  }, 120_000);
});
