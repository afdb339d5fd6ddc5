/** ServiceDiscovery on the embedded server: layout, modes, registration, update, queries, expiry, close. */
import { afterEach, describe, expect, it } from 'vitest';
import { ClosedError, ConnectionState, TimeoutError } from '@tenure/client';
import { JsonInstanceSerializer, NotRegisteredError, ServiceDiscovery } from '../src/index.js';
import { DiscoveryHarness, gone, roundTrip, sleep, untilChangedUnder, untilInstances } from './harness.js';

let h: DiscoveryHarness;
afterEach(async () => h?.close());

const json = new JsonInstanceSerializer();

describe('ServiceDiscovery', () => {
  it('registers at <basePath>/<name>/<id> with Curator’s JSON, an ephemeral of its session, parents as containers', async () => {
    h = new DiscoveryHarness();
    const { client, discovery } = await h.discovery();
    const registered = await discovery.registerService({
      name: 'orders',
      id: 'o-1',
      address: '10.0.0.1',
      port: 8080,
      payload: 'eu',
      uriSpec: '{scheme}://{address}:{port}',
    });
    const node = h.server.node('/services/orders/o-1')!;
    expect(node.stat.ephemeralOwner).toBe(client.sessionId);
    expect(node.data!.toString()).toBe(json.serialize(registered).toString());
    expect(JSON.parse(node.data!.toString())).toMatchObject({
      name: 'orders',
      id: 'o-1',
      port: 8080,
      payload: 'eu',
      serviceType: 'DYNAMIC',
    });
    expect(h.server.node('/services/orders')!.stat.ephemeralOwner).toBe(0n);
    // Containers: a create under a container works; the server reaps both once empty (below).
    expect(await discovery.queryForNames()).toEqual(['orders']);
    expect(await discovery.queryForInstances('orders')).toEqual([registered]);
    expect(await discovery.queryForInstance('orders', 'o-1')).toEqual(registered);
    expect(await discovery.queryForInstance('orders', 'nope')).toBeNull();
    expect(await discovery.queryForInstances('nothing')).toEqual([]);
  });

  it('STATIC and PERMANENT are persistent, DYNAMIC_SEQUENTIAL an ephemeral <id><seq>; close() removes them all', async () => {
    h = new DiscoveryHarness();
    const { client, discovery } = await h.discovery({ basePath: '/reg' });
    await discovery.registerService({ name: 's', id: 'static', serviceType: 'STATIC' });
    await discovery.registerService({ name: 's', id: 'perm', serviceType: 'PERMANENT' });
    const seq = await discovery.registerService({ name: 's', id: 'seq-', serviceType: 'DYNAMIC_SEQUENTIAL' });
    expect(h.server.node('/reg/s/static')!.stat.ephemeralOwner).toBe(0n);
    expect(h.server.node('/reg/s/perm')!.stat.ephemeralOwner).toBe(0n);
    const names = h.server.node('/reg/s')!.children.sort();
    expect(names).toHaveLength(3);
    const seqName = names.find((n) => n.startsWith('seq-'))!;
    expect(seqName).toMatch(/^seq-\d{10}$/);
    expect(h.server.node(`/reg/s/${seqName}`)!.stat.ephemeralOwner).toBe(client.sessionId);
    expect(JSON.parse(h.server.node(`/reg/s/${seqName}`)!.data!.toString()).id).toBe('seq-');
    // Updating a sequential instance reaches its suffixed node (Curator's misses it).
    await discovery.updateService({ ...seq, port: 99 });
    expect(JSON.parse(h.server.node(`/reg/s/${seqName}`)!.data!.toString()).port).toBe(99);
    await discovery.close();
    expect(h.subtree('/reg').filter((p) => p.startsWith('/reg/s/'))).toEqual([]);
    await gone(client, '/reg'); // the containers reaped
    expect(h.noWatches()).toBe(true);
  });

  it('a registration replaces a node found at its path (deleted and re-created, so watchers fire)', async () => {
    h = new DiscoveryHarness();
    const admin = await h.clients.open();
    await admin.create('/services/api/dup', 'stale', { createParents: true });
    const events: string[] = [];
    await admin.exists('/services/api/dup', { watch: (e) => void events.push(e.type) });
    const { client, discovery } = await h.discovery();
    await discovery.registerService({ name: 'api', id: 'dup', port: 1 });
    expect(events).toEqual(['NodeDeleted']);
    const node = h.server.node('/services/api/dup')!;
    expect(node.stat.ephemeralOwner).toBe(client.sessionId);
    expect(JSON.parse(node.data!.toString()).port).toBe(1);
    // Registering the same id again through the same object replaces it too.
    await discovery.registerService({ name: 'api', id: 'dup', port: 2 });
    expect(JSON.parse(h.server.node('/services/api/dup')!.data!.toString()).port).toBe(2);
    expect(discovery.registeredInstances).toHaveLength(1);
  });

  it('updateService writes the JSON; unregisterService deletes; unknown ones are refused or ignored', async () => {
    h = new DiscoveryHarness();
    const { discovery } = await h.discovery();
    const i = await discovery.registerService({ name: 'api', id: 'a', port: 1, payload: { '@class': 'java.util.LinkedHashMap', v: 1 } });
    await discovery.updateService({ ...i, payload: { '@class': 'java.util.LinkedHashMap', v: 2 }, enabled: false });
    const read = await discovery.queryForInstance('api', 'a');
    expect(read).toMatchObject({ payload: { v: 2 }, enabled: false, registrationTimeUTC: i.registrationTimeUTC });
    await expect(discovery.updateService({ ...i, id: 'other' })).rejects.toBeInstanceOf(NotRegisteredError);
    await discovery.unregisterService(i);
    expect(h.server.node('/services/api/a')).toBeUndefined();
    await discovery.unregisterService(i); // again: nothing to do
    expect(discovery.registeredInstances).toEqual([]);
  });

  it('after its session expires, a DYNAMIC instance is back with the same id and JSON within the session timeout + 2 s', async () => {
    h = new DiscoveryHarness();
    const { client, discovery } = await h.discovery();
    const i = await discovery.registerService({ name: 'api', id: 'e1', port: 7 });
    const before = h.server.node('/services/api/e1')!.data!.toString();
    const oldSession = client.sessionId;
    const T = client.negotiatedTimeoutMs;
    const observer = await h.clients.open();
    const t0 = Date.now();
    h.server.expireSession(oldSession);
    await untilChangedUnder(
      observer,
      '/services/api',
      () => {
        const n = h.server.node('/services/api/e1');
        return n !== undefined && n.stat.ephemeralOwner !== oldSession && n.stat.ephemeralOwner === client.sessionId;
      },
      T + 2000,
    ); // the instance back
    expect(Date.now() - t0).toBeLessThan(T + 2000);
    expect(h.server.node('/services/api/e1')!.data!.toString()).toBe(before);
    expect((await discovery.queryForInstance('api', 'e1'))!.registrationTimeUTC).toBe(i.registrationTimeUTC);
  });

  it('registerService({ signal }) unregisters when the signal aborts', async () => {
    h = new DiscoveryHarness();
    const { discovery } = await h.discovery();
    const healthy = new AbortController();
    await discovery.registerService({ name: 'api', id: 'h1' }, { signal: healthy.signal });
    expect(h.server.node('/services/api/h1')).toBeDefined();
    healthy.abort();
    await gone(await h.clients.open(), '/services/api/h1'); // unregistered
    expect(discovery.registeredInstances).toEqual([]);
    await expect(discovery.registerService({ name: 'api', id: 'h2' }, { signal: healthy.signal })).rejects.toThrow(/aborted/);
    expect(h.server.node('/services/api/h2')).toBeUndefined();
  });

  it('close() leaves no instance, no watch; start() then close() at once leaves nothing; use after close throws', async () => {
    h = new DiscoveryHarness();
    const { client, discovery } = await h.discovery();
    await discovery.registerService({ name: 'a', id: '1' });
    await discovery.registerService({ name: 'b', id: '2' });
    const cache = discovery.serviceCache('a');
    await cache.start();
    const provider = discovery.serviceProvider('b');
    await provider.start();
    expect(provider.getInstance()?.id).toBe('2');
    await discovery.close();
    expect(h.server.node('/services/a/1')).toBeUndefined();
    expect(h.server.node('/services/b/2')).toBeUndefined();
    expect(h.server.watchesOf(client.sessionId)).toEqual({ data: [], child: [] });
    expect(h.noWatches()).toBe(true);
    expect(() => discovery.serviceCache('a')).toThrow(/closed/);
    await expect(discovery.registerService({ name: 'a' })).rejects.toThrow(/closed/);

    const quick = new ServiceDiscovery(client);
    await quick.start();
    const pending = quick.registerService({ name: 'q', id: 'x' });
    await quick.close();
    await expect(pending).rejects.toBeInstanceOf(ClosedError);
    await roundTrip(client); // a create sent before the close has been served
    expect(h.server.node('/services/q/x')).toBeUndefined();
  });

  it('a DYNAMIC instance in its own session, with a thisInstance registered by start()', async () => {
    h = new DiscoveryHarness();
    const { client, discovery } = await h.discovery({ thisInstance: { name: 'self', id: 'me', port: 1 } });
    expect(h.server.node('/services/self/me')!.stat.ephemeralOwner).toBe(client.sessionId);
    expect(discovery.registeredInstances.map((i) => i.id)).toEqual(['me']);
  });

  it('an instance deleted by someone else comes back; a duplicate id in another session is reported, never fought over', async () => {
    h = new DiscoveryHarness();
    const { client: ca, discovery: a } = await h.discovery();
    await a.registerService({ name: 'api', id: 'same', port: 1 });
    const admin = await h.clients.open();
    const back = untilChangedUnder(admin, '/services/api', () => h.server.node('/services/api/same')?.stat.ephemeralOwner === ca.sessionId);
    await admin.delete('/services/api/same');
    await back; // back after a delete

    // Another registry registers the same id: it replaces the node (as Curator does), then the two
    // PersistentNodes settle: one holds it, the other reports a conflict and waits for it to go.
    const { client: cb, discovery: b } = await h.discovery();
    const errors: Error[] = [];
    const conflict = new Promise<void>((resolve) => {
      const onError = (e: Error): void => {
        errors.push(e);
        if (e.name === 'NodeConflictError') resolve();
      };
      a.on('error', onError);
      b.on('error', onError);
    });
    const registering = b.registerService({ name: 'api', id: 'same', port: 2 });
    await conflict; // a conflict reported
    const owner = h.server.node('/services/api/same')!.stat.ephemeralOwner;
    expect([ca.sessionId, cb.sessionId]).toContain(owner);
    const version = h.server.node('/services/api/same')!.stat.version;
    await sleep(500);
    expect(h.server.node('/services/api/same')!.stat.ephemeralOwner).toBe(owner); // no fight
    expect(h.server.node('/services/api/same')!.stat.version).toBe(version);
    // The holder leaves: the other takes over (b's registerService resolves once it holds the node).
    const [holder, otherClient] = owner === ca.sessionId ? [a, cb] : [b, ca];
    if (holder === a) {
      await a.close();
      await registering;
    } else {
      await registering;
      await b.close();
    }
    await untilChangedUnder(
      admin,
      '/services/api',
      () => h.server.node('/services/api/same')?.stat.ephemeralOwner === otherClient.sessionId,
    ); // the other takes over
    expect(JSON.parse(h.server.node('/services/api/same')!.data!.toString()).port).toBe(holder === a ? 2 : 1);
  });

  it('caches work with one-shot watches too (persistentWatches: false, as on ZooKeeper 3.5)', async () => {
    h = new DiscoveryHarness();
    const { discovery } = await h.discovery({ persistentWatches: false });
    await discovery.registerService({ name: 'api', id: 'a' });
    const cache = discovery.serviceCache('api');
    await cache.start();
    expect(cache.instances.map((i) => i.id)).toEqual(['a']);
    await discovery.registerService({ name: 'api', id: 'b' });
    await untilInstances(cache, (set) => set.length === 2); // b seen
    await discovery.close();
    expect(h.noWatches()).toBe(true);
  });

  it('a registration that cannot complete in timeoutMs rejects with TimeoutError and leaves nothing once the server is back', async () => {
    h = new DiscoveryHarness();
    const { client, discovery } = await h.discovery();
    const suspended = client.waitForState(ConnectionState.SUSPENDED, { timeoutMs: 5000 });
    const restarted = h.server.restart(1000);
    await suspended;
    await expect(discovery.registerService({ name: 'api', id: 'late' }, { timeoutMs: 300 })).rejects.toBeInstanceOf(TimeoutError);
    expect(discovery.registeredInstances).toEqual([]);
    await restarted;
    await client.waitForState([ConnectionState.RECONNECTED, ConnectionState.CONNECTED], { timeoutMs: 5000 });
    await roundTrip(client); // the timed-out registration sent nothing that is still to be served
    expect(h.server.node('/services/api/late')).toBeUndefined();
  });
});
