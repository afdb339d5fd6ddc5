/** ServiceCache and ServiceProvider on the embedded server. */
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionState } from '@tenure/client';
import { InvalidInstanceError, type ServiceInstance } from '../src/index.js';
import { ManualClock, nextEvent } from '@tenure/testing';
import { DiscoveryHarness, sleep, untilInstances } from './harness.js';

let h: DiscoveryHarness;
afterEach(async () => h?.close());

const ids = (instances: readonly ServiceInstance<unknown>[]): string => instances.map((i) => i.id).join(',');

describe('ServiceCache', () => {
  it('start() resolves with the instances loaded; changes arrive as events and as async-iterated sets', async () => {
    h = new DiscoveryHarness();
    const { discovery: writer } = await h.discovery();
    await writer.registerService({ name: 'api', id: 'a', port: 1 });
    const { discovery: reader } = await h.discovery();
    const cache = reader.serviceCache('api');
    const changes: string[] = [];
    cache.on('change', (set) => void changes.push(ids(set)));
    await cache.start({ timeoutMs: 5000 });
    expect(ids(cache.instances)).toBe('a');
    expect(cache.instances[0]).toMatchObject({ name: 'api', id: 'a', port: 1 });

    const seen: string[] = [];
    const iterating = (async () => {
      for await (const set of cache) seen.push(ids(set));
    })();
    const b = await writer.registerService({ name: 'api', id: 'b', port: 2 });
    await untilInstances(cache, (set) => ids(set) === 'a,b'); // b seen
    await writer.updateService({ ...b, port: 3 });
    await untilInstances(cache, (set) => set[1]?.port === 3); // the update seen
    await writer.unregisterService(b);
    await untilInstances(cache, (set) => ids(set) === 'a'); // b gone
    expect(changes).toEqual(['a', 'a,b', 'a,b', 'a']);
    await cache.close();
    await iterating;
    expect(seen).toEqual(['a', 'a,b', 'a,b', 'a']);
    expect(cache.instances).toEqual([]);
  });

  it('a cache of a service nobody registered yet starts empty and sees the first registration', async () => {
    h = new DiscoveryHarness();
    const { discovery } = await h.discovery();
    const cache = discovery.serviceCache('later');
    await cache.start({ timeoutMs: 5000 });
    expect(cache.instances).toEqual([]);
    expect(h.server.node('/services/later')).toBeUndefined(); // the cache creates nothing
    await discovery.registerService({ name: 'later', id: 'x' });
    await untilInstances(cache, (set) => ids(set) === 'x');
  });

  it('a child that is not an instance is reported and left out', async () => {
    h = new DiscoveryHarness();
    const { client, discovery } = await h.discovery();
    await client.create('/services/api/junk', 'not json', { createParents: true });
    await discovery.registerService({ name: 'api', id: 'ok' });
    const cache = discovery.serviceCache('api');
    const errors: Error[] = [];
    cache.on('error', (e) => void errors.push(e));
    await cache.start();
    expect(ids(cache.instances)).toBe('ok');
    expect(errors[0]).toBeInstanceOf(InvalidInstanceError);
    expect(errors[0]!.message).toContain('/services/api/junk');
    await expect(discovery.queryForInstances('api')).rejects.toThrow(InvalidInstanceError);
  });

  it('while the registry is unreachable it keeps the last set and says how stale it is (lastSyncedAt)', async () => {
    h = new DiscoveryHarness();
    const { discovery: writer } = await h.discovery();
    await writer.registerService({ name: 'api', id: 'a' });
    const { client, discovery } = await h.discovery();
    const cache = discovery.serviceCache('api');
    await cache.start();
    expect(cache.synced).toBe(true);
    expect(Math.abs(cache.lastSyncedAt! - Date.now())).toBeLessThan(100);
    const suspended = client.waitForState(ConnectionState.SUSPENDED, { timeoutMs: 5000 });
    const reconnected = nextEvent(client, 'stateChanged', (s) => s === ConnectionState.RECONNECTED);
    const restarted = h.server.restart(1200); // the server refuses connections for 1.2 s
    await suspended;
    const lostAt = cache.lastSyncedAt!;
    expect(cache.synced).toBe(false);
    await sleep(300);
    expect(cache.lastSyncedAt).toBe(lostAt);
    expect(Date.now() - cache.lastSyncedAt!).toBeGreaterThanOrEqual(250);
    expect(ids(cache.instances)).toBe('a');
    await reconnected; // the cache follows the client's states
    await restarted;
    expect(cache.synced).toBe(true); // synced again
    expect(Math.abs(cache.lastSyncedAt! - Date.now())).toBeLessThan(100);
  });
});

describe('ServiceProvider', () => {
  /** Registers i1, i2, i3 (ports 1, 2, 3) through a registry of its own, returned. */
  async function threeInstances(clock?: ManualClock) {
    h = new DiscoveryHarness(clock);
    const { discovery } = await h.discovery();
    for (const id of ['i1', 'i2', 'i3']) await discovery.registerService({ name: 'api', id, port: Number(id.slice(1)) });
    return discovery;
  }

  it('start() resolves after the initial load; roundRobin cycles over the instances in order', async () => {
    await threeInstances();
    const { discovery } = await h.discovery();
    const provider = discovery.serviceProvider('api');
    await provider.start();
    const picked = Array.from({ length: 7 }, () => provider.getInstance()!.id);
    expect(picked).toEqual(['i1', 'i2', 'i3', 'i1', 'i2', 'i3', 'i1']);
    expect(ids(provider.getAllInstances())).toBe('i1,i2,i3');
  });

  it('random covers every instance; sticky keeps one until it is gone', async () => {
    const writer = await threeInstances();
    const { discovery } = await h.discovery();
    const random = discovery.serviceProvider('api', { strategy: 'random' });
    await random.start();
    const seen = new Set(Array.from({ length: 200 }, () => random.getInstance()!.id));
    expect([...seen].sort()).toEqual(['i1', 'i2', 'i3']);

    const sticky = discovery.serviceProvider('api', { strategy: 'sticky' });
    await sticky.start();
    const first = sticky.getInstance()!;
    expect(Array.from({ length: 5 }, () => sticky.getInstance()!.id)).toEqual(Array(5).fill(first.id));
    await writer.unregisterService(first);
    await untilInstances(sticky.cache, (set) => set.length === 2); // the sticky one gone
    expect(sticky.getAllInstances()).toHaveLength(2);
    const next = sticky.getInstance()!;
    expect(next.id).not.toBe(first.id);
    expect(sticky.getInstance()!.id).toBe(next.id);
  });

  it('downInstancePolicy: an instance reported errorThreshold times is skipped for timeoutMs', async () => {
    const clock = new ManualClock(); // the provider's down list runs on its client's clock
    await threeInstances(clock);
    const { discovery } = await h.discovery();
    const provider = discovery.serviceProvider('api', { downInstancePolicy: { timeoutMs: 600, errorThreshold: 2 } });
    await provider.start();
    const i2 = provider.getAllInstances()[1]!;
    provider.noteError(i2);
    expect(ids(provider.getAllInstances())).toBe('i1,i2,i3');
    provider.noteError(i2);
    expect(ids(provider.getAllInstances())).toBe('i1,i3');
    expect(new Set(Array.from({ length: 6 }, () => provider.getInstance()!.id))).toEqual(new Set(['i1', 'i3']));
    await clock.advance(599);
    expect(ids(provider.getAllInstances())).toBe('i1,i3'); // skipped for timeoutMs
    // Reports expire at timeoutMs and are purged at most every timeoutMs / 2: that read purged at 599, the next purge is at 899.
    await clock.advance(299);
    expect(ids(provider.getAllInstances())).toBe('i1,i3');
    await clock.advance(1);
    expect(ids(provider.getAllInstances())).toBe('i1,i2,i3');
  });

  it('filter narrows the candidates; disabled instances are skipped; none left gives null', async () => {
    await threeInstances();
    const { discovery } = await h.discovery();
    const odd = discovery.serviceProvider('api', { filter: (i) => (i.port ?? 0) % 2 === 1 });
    await odd.start();
    expect(ids(odd.getAllInstances())).toBe('i1,i3');
    const writer = (await h.discovery()).discovery;
    await writer.registerService({ name: 'api', id: 'i5', port: 5, enabled: false });
    await untilInstances(odd.cache, (set) => set.length === 4); // i5 cached
    expect(ids(odd.getAllInstances())).toBe('i1,i3');
    const none = discovery.serviceProvider('api', { filter: () => false });
    await none.start();
    expect(none.getInstance()).toBeNull();
    const empty = discovery.serviceProvider('nothing');
    await empty.start();
    expect(empty.getInstance()).toBeNull();
    await none.close();
    await expect(none.start()).rejects.toThrow(/closed/);
  });

  it('refuses unknown strategies and bad policies', async () => {
    h = new DiscoveryHarness();
    const { discovery } = await h.discovery();
    expect(() => discovery.serviceProvider('api', { strategy: 'fastest' as never })).toThrow(/unknown strategy/);
    expect(() => discovery.serviceProvider('api', { downInstancePolicy: { errorThreshold: 0 } })).toThrow(/errorThreshold/);
  });
});
