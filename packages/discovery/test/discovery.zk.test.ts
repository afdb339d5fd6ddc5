/**
 * ServiceDiscovery on a real ZooKeeper 3.8: expiry (expireSession) and re-registration with the
 * same id, close, and a registering process killed with SIGKILL.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ZooKeeperSuite, expireSession, nextEvent, realZooKeeper } from '@tenure/testing';
import type { Client } from '@tenure/client';
import { ServiceDiscovery, type ServiceInstance } from '../src/index.js';
import { roundTrip, untilChangedUnder, untilInstances } from './harness.js';
import { Registrant } from './registrant.js';

const zk = realZooKeeper();
const TICK_MS = 200; // TestingServer's tickTime
const ids = (set: readonly ServiceInstance<unknown>[]): string => set.map((i) => i.id).join(',');

describe.skipIf(!zk.available)('ServiceDiscovery on ZooKeeper 3.8', () => {
  const suite = new ZooKeeperSuite();
  const registries: ServiceDiscovery[] = [];
  const children: Registrant[] = [];
  beforeAll(() => suite.start());
  afterEach(async () => {
    for (const c of children.splice(0)) await c.kill();
    await Promise.all(registries.splice(0).map((d) => d.close()));
    await suite.afterEach();
  });
  afterAll(() => suite.close());

  async function registry(sessionTimeoutMs = 2000, client?: Client): Promise<ServiceDiscovery> {
    client ??= await suite.clients.open({ sessionTimeoutMs });
    const d = new ServiceDiscovery(client, { basePath: '/zk-services', rejoinJitterMs: 300 });
    registries.push(d);
    await d.start();
    return d;
  }

  it("after expireSession, the DYNAMIC instance is back with the same id within the session timeout + 2 s; another process's cache sees it leave and come back", async () => {
    const client = await suite.clients.open({ sessionTimeoutMs: 2000 });
    const discovery = new ServiceDiscovery(client, { basePath: '/zk-services', rejoinJitterMs: 300 });
    registries.push(discovery);
    await discovery.start();
    const registered = await discovery.registerService({ name: 'orders', id: 'o-exp', port: 8080, uriSpec: '{scheme}://{address}:{port}' });
    const watcher = await registry();
    const cache = watcher.serviceCache('orders');
    const seen: string[] = [];
    cache.on('change', (set) => void seen.push(ids(set)));
    await cache.start({ timeoutMs: 10_000 });
    expect(ids(cache.instances)).toBe('o-exp');

    const admin = await suite.clients.open();
    const before = await admin.getData('/zk-services/orders/o-exp');
    const T = client.negotiatedTimeoutMs;
    const cameBack = nextEvent(cache, 'change', () => seen.includes('') && seen.at(-1) === 'o-exp', { timeoutMs: T + 8000 });
    const t0 = Date.now();
    // The instance back on the new session: checked again at each change under the service.
    const back = untilChangedUnder(
      admin,
      '/zk-services/orders',
      async () => {
        const stat = await admin.exists('/zk-services/orders/o-exp');
        return stat !== null && stat.ephemeralOwner === client.sessionId && stat.ephemeralOwner !== before.stat.ephemeralOwner;
      },
      T + 2000,
    );
    await expireSession(client, suite.server);
    await back;
    expect(Date.now() - t0).toBeLessThan(T + 2000);
    expect((await admin.getData('/zk-services/orders/o-exp')).data.toString()).toBe(before.data.toString());
    expect(await watcher.queryForInstance('orders', 'o-exp')).toEqual(registered);
    await cameBack; // the cache saw it leave and come back
  });

  it('close() leaves no instance node and no watch', async () => {
    const client = await suite.clients.open({ sessionTimeoutMs: 2000 });
    const discovery = await registry(2000, client);
    await discovery.registerService({ name: 'billing', id: 'b1' });
    await discovery.registerService({ name: 'billing', id: 'b2', serviceType: 'STATIC' });
    const provider = discovery.serviceProvider('billing');
    await provider.start();
    expect(ids(provider.getAllInstances())).toBe('b1,b2');
    await discovery.close();
    const admin = await suite.clients.open();
    expect((await admin.getChildren('/zk-services/billing').catch(() => ({ children: [] }))).children).toEqual([]);
    await roundTrip(client); // close() removed its watches; anything else it sent has been served too
    expect(await suite.server.fourLetterWord('wchp')).not.toContain('/zk-services/billing');
  });

  it('a registering process that closes leaves nothing; one killed with SIGKILL is gone from a cache within its session timeout + 1 tick', async () => {
    const watcher = await registry();
    const cache = watcher.serviceCache('payments');
    await cache.start({ timeoutMs: 10_000 });
    const SESSION_MS = 1500;
    const polite = await Registrant.start(suite.server.connectString, SESSION_MS, '/zk-services', {
      name: 'payments',
      id: 'polite',
      port: 1,
    });
    const doomed = await Registrant.start(suite.server.connectString, SESSION_MS, '/zk-services', {
      name: 'payments',
      id: 'doomed',
      port: 2,
    });
    children.push(doomed);
    await untilInstances(cache, (set) => ids(set) === 'doomed,polite'); // both cached
    const politeGone = untilInstances(cache, (set) => ids(set) === 'doomed', 3000);
    expect(await polite.close()).toBe(0);
    await politeGone; // the closed one gone at once
    const admin = await suite.clients.open();
    expect((await admin.getChildren('/zk-services/payments')).children).toEqual(['doomed']);

    const doomedGone = untilInstances(cache, (set) => set.length === 0, SESSION_MS + TICK_MS + 2000);
    const killedAt = Date.now();
    await doomed.kill();
    await doomedGone; // the killed one gone
    const took = Date.now() - killedAt;
    if (process.env.TENURE_DISCOVERY_TIMINGS)
      console.log(`SIGKILL -> gone from the cache: ${took} ms (session ${SESSION_MS} ms, tick ${TICK_MS} ms)`);
    // ZooKeeper expires a session on a tick boundary after its timeout; allow for a loaded machine.
    expect(took).toBeLessThan(SESSION_MS + TICK_MS + 1000);
    expect(took).toBeGreaterThan(SESSION_MS - TICK_MS - 200);
  });
});
