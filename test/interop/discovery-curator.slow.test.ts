/**
 * Tenure's service discovery and Apache Curator's (Debian's libcurator-discovery-java 5.4, with
 * its JsonInstanceSerializer in the default compatible mode) on one real ZooKeeper, in one
 * registry: each finds the other's instances with every field equal, both providers round-robin
 * over a mixed set, both caches see an expiry and a SIGKILL, and a Spring Cloud Zookeeper payload
 * round-trips. The Java side is test/interop/discovery-java/CuratorDiscoveryWorker.java (and a
 * stand-in for Spring's ZookeeperInstance class), compiled by this suite and driven line by line.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { TestingServer, TestClients, eventually, expireSession, realZooKeeper } from '@tenure/testing';
import { JsonInstanceSerializer, ServiceDiscovery, springCloudPayload, type ServiceInstance } from '@tenure/discovery';
import { Registrant } from '../../packages/discovery/test/registrant.js';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

/** Curator's discovery (which needs the recipes for its cache) and an slf4j binding. */
const DISCOVERY_JARS = [
  '/usr/share/java/curator-x-discovery.jar',
  '/usr/share/java/curator-recipes.jar',
  '/usr/share/java/slf4j-simple.jar',
];
const zk = realZooKeeper();
const java = javaToolchain(DISCOVERY_JARS);
const DIR = fileURLToPath(new URL('./discovery-java/', import.meta.url));
const SOURCES = [`${DIR}CuratorDiscoveryWorker.java`, `${DIR}org/springframework/cloud/zookeeper/discovery/ZookeeperInstance.java`];
const BASE = '/services';
const TICK_MS = 200; // TestingServer's tickTime

/** The fields the Java worker prints for an instance. */
interface JavaFields {
  name: string;
  id: string;
  address: string | null;
  port: number | null;
  sslPort: number | null;
  registrationTimeUTC: number;
  serviceType: string;
  uriSpec: string | null;
  enabled: boolean;
  payload: unknown;
  payloadClass: string | null;
}

const javaView = (i: ServiceInstance<unknown>): Omit<JavaFields, 'payloadClass'> => ({
  name: i.name,
  id: i.id,
  address: i.address,
  port: i.port,
  sslPort: i.sslPort,
  registrationTimeUTC: i.registrationTimeUTC,
  serviceType: i.serviceType,
  uriSpec: i.uriSpec,
  enabled: i.enabled,
  payload: i.payload,
});
const parse = <T>(line: string, prefix: string): T => JSON.parse(line.slice(prefix.length + 1)) as T;
const ids = (set: readonly ServiceInstance<unknown>[]): string =>
  set
    .map((i) => i.id)
    .sort()
    .join(',') || '-';
const counts = (picked: readonly string[]): Record<string, number> =>
  picked.reduce<Record<string, number>>((m, id) => ((m[id] = (m[id] ?? 0) + 1), m), {});

describe.skipIf(!zk.available || !java.available)('Curator discovery interop on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let compiled: CompiledJava;
  let curator: JavaProgram;
  let clients: TestClients;
  const registries: ServiceDiscovery[] = [];
  const extra: JavaProgram[] = [];
  const children: Registrant[] = [];

  const startWorker = (sessionMs = 4000): Promise<JavaProgram> =>
    JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorDiscoveryWorker', args: [server.connectString, String(sessionMs), BASE] },
      /^ready$/,
      60_000,
    );

  async function registry(
    sessionTimeoutMs = 2000,
  ): Promise<{ discovery: ServiceDiscovery; client: Awaited<ReturnType<TestClients['open']>> }> {
    const client = await clients.open({ sessionTimeoutMs });
    const discovery = new ServiceDiscovery(client, { basePath: BASE, rejoinJitterMs: 300 });
    registries.push(discovery);
    await discovery.start();
    return { discovery, client };
  }

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava(SOURCES, DISCOVERY_JARS), TestingServer.start()]);
    curator = await startWorker();
    clients = new TestClients(() => server.transport());
  }, 120_000);
  afterEach(async () => {
    for (const c of children.splice(0)) await c.kill();
    await Promise.all(extra.splice(0).map((p) => p.stop()));
    await Promise.all(registries.splice(0).map((d) => d.close()));
    await clients.closeAll();
  });
  afterAll(async () => {
    await curator?.stop();
    await server?.close();
    compiled?.dispose();
  });

  it('Java finds Tenure: a Tenure process registers orders; ServiceDiscoveryBuilder + JsonInstanceSerializer read every field', async () => {
    const instance = {
      name: 'orders',
      id: 'orders-t1',
      address: '10.0.0.5',
      port: 8080,
      sslPort: 8443,
      serviceType: 'DYNAMIC' as const,
      uriSpec: '{scheme}://{address}:{ssl-port}/orders',
      payload: 'eu-west',
    };
    const child = await Registrant.start(server.connectString, 4000, BASE, instance);
    children.push(child);
    const { discovery } = await registry();
    const registered = (await discovery.queryForInstance('orders', 'orders-t1'))!;
    // A disabled instance stays disabled for Java (we write enabled: false even in compatible mode).
    const disabled = await discovery.registerService({
      name: 'orders',
      id: 'orders-t2',
      enabled: false,
      payload: { '@class': 'java.util.LinkedHashMap', weight: 5 },
    });
    const [got, off] = parse<JavaFields[]>(await curator.ask('query orders', /^instances /), 'instances');
    expect(got).toEqual({ ...javaView(registered), payloadClass: 'java.lang.String' });
    expect(got).toMatchObject(instance);
    expect(off).toEqual({ ...javaView(disabled), payload: { weight: 5 }, payloadClass: 'java.util.LinkedHashMap' });
    expect((await curator.ask('provider orders 3', /^picked /)).slice('picked '.length)).toBe('orders-t1,orders-t1,orders-t1');
  });

  it('Tenure finds Java with every field equal; the Java provider and the Tenure provider both round-robin over a mixed set', async () => {
    const fromJava: JavaFields[] = [];
    for (const id of ['billing-j1', 'billing-j2']) {
      const spec = {
        name: 'billing',
        id,
        address: '10.0.1.1',
        port: 9000,
        serviceType: 'DYNAMIC',
        uriSpec: '{scheme}://{address}:{port}',
        payload: `java-${id}`,
      };
      fromJava.push(parse<JavaFields>(await curator.ask(`register ${JSON.stringify(spec)}`, /^registered /), 'registered'));
    }
    const { discovery } = await registry();
    for (const id of ['billing-t1', 'billing-t2'])
      await discovery.registerService({ name: 'billing', id, address: '10.0.2.2', port: 9001, payload: `tenure-${id}` });

    const found = await discovery.queryForInstances('billing');
    expect(found.map((i) => i.id)).toEqual(['billing-j1', 'billing-j2', 'billing-t1', 'billing-t2']);
    for (const j of fromJava) {
      const { payloadClass: _, ...fields } = j;
      expect(javaView(found.find((i) => i.id === j.id)!)).toEqual(fields);
    }

    const javaPicked = (await curator.ask('provider billing 8', /^picked /)).slice('picked '.length).split(',');
    expect(counts(javaPicked)).toEqual({ 'billing-j1': 2, 'billing-j2': 2, 'billing-t1': 2, 'billing-t2': 2 });
    // Round robin: each cycle of 4 is a permutation.
    expect(new Set(javaPicked.slice(0, 4)).size).toBe(4);
    const provider = discovery.serviceProvider('billing');
    await provider.start();
    const picked = Array.from({ length: 8 }, () => provider.getInstance()!.id);
    expect(picked).toEqual([
      'billing-j1',
      'billing-j2',
      'billing-t1',
      'billing-t2',
      'billing-j1',
      'billing-j2',
      'billing-t1',
      'billing-t2',
    ]);
    for (const id of ['billing-j1', 'billing-j2']) await curator.ask(`unregister billing ${id}`, /^unregistered /);
    await eventually(() => ids(provider.getAllInstances()) === 'billing-t1,billing-t2', 5000, 'the Java instances gone from our cache');
  });

  it("expiry: after expireSession the DYNAMIC instance is back with the same id within the session timeout + 2 s; Java's ServiceCache and Tenure's see it leave and come back", async () => {
    const { discovery, client } = await registry(2000);
    const registered = await discovery.registerService({ name: 'expiring', id: 'exp-1', port: 1 });
    const watcher = (await registry()).discovery;
    const cache = watcher.serviceCache('expiring');
    const seen: string[] = [];
    cache.on('change', (set) => void seen.push(ids(set)));
    await cache.start({ timeoutMs: 10_000 });
    await curator.ask('cache expiring', /^cache expiring exp-1$/);
    const javaLeft = curator.waitFor(/^cache expiring -$/, 10_000);

    const T = client.negotiatedTimeoutMs;
    const t0 = Date.now();
    await expireSession(client, server);
    await javaLeft;
    const javaBack = curator.waitFor(/^cache expiring exp-1$/, T + 2000);
    await javaBack;
    if (process.env.TENURE_DISCOVERY_TIMINGS) console.log(`expiry -> back in Curator's cache: ${Date.now() - t0} ms (session ${T} ms)`);
    expect(Date.now() - t0).toBeLessThan(T + 2000);
    await eventually(() => seen.includes('-') && seen.at(-1) === 'exp-1', 5000, 'our cache saw it leave and come back');
    expect(await watcher.queryForInstance('expiring', 'exp-1')).toEqual(registered);
    const [javaSide] = parse<JavaFields[]>(await curator.ask('query expiring', /^instances /), 'instances');
    expect(javaSide!.registrationTimeUTC).toBe(registered.registrationTimeUTC);
  });

  it("a Tenure process killed with SIGKILL disappears from Java's ServiceCache and Tenure's within its session timeout + 1 tick", async () => {
    const SESSION_MS = 1500;
    const { discovery } = await registry();
    const cache = discovery.serviceCache('killed');
    await cache.start({ timeoutMs: 10_000 });
    await curator.ask('cache killed', /^cache killed /);
    const javaSees = curator.waitFor(/^cache killed k1$/, 30_000);
    const child = await Registrant.start(server.connectString, SESSION_MS, BASE, { name: 'killed', id: 'k1', port: 1 });
    children.push(child);
    await javaSees;
    await eventually(() => ids(cache.instances) === 'k1', 5000, 'cached by Tenure');

    const javaGone = curator.waitFor(/^cache killed -$/, SESSION_MS + TICK_MS + 5000).then(() => Date.now());
    const killedAt = Date.now();
    await child.kill();
    await eventually(() => cache.instances.length === 0, SESSION_MS + TICK_MS + 5000, 'gone from our cache');
    const tenureTook = Date.now() - killedAt;
    const javaTook = (await javaGone) - killedAt;
    if (process.env.TENURE_DISCOVERY_TIMINGS)
      console.log(
        `SIGKILL -> gone: Tenure's cache ${tenureTook} ms, Curator's ${javaTook} ms (session ${SESSION_MS} ms, tick ${TICK_MS} ms)`,
      );
    // The session expires on a tick boundary after its timeout; a loaded shared machine adds a little.
    expect(tenureTook).toBeLessThan(SESSION_MS + TICK_MS + 1000);
    expect(javaTook).toBeLessThan(SESSION_MS + TICK_MS + 1000);
  });

  it('Spring Cloud Zookeeper: a ZookeeperInstance payload round-trips through Tenure byte for byte, and Java binds ours', async () => {
    // Java registers as a Spring service does.
    const spec = {
      name: 'app',
      id: 'spring-j1',
      address: '10.0.3.3',
      port: 8080,
      uriSpec: '{scheme}://{address}:{port}',
      payload: { id: 'application-1', name: 'app', metadata: { instance_status: 'UP', zone: 'eu-1' } },
    };
    await curator.ask(`spring-register ${JSON.stringify(spec)}`, /^registered /);
    const { client, discovery } = await registry();
    const raw = (await client.getData(`${BASE}/app/spring-j1`)).data;
    expect(JSON.parse(raw.toString()).payload['@class']).toBe('org.springframework.cloud.zookeeper.discovery.ZookeeperInstance');
    const read = (await discovery.queryForInstance('app', 'spring-j1'))!;
    expect(new JsonInstanceSerializer().serialize(read).equals(raw)).toBe(true);
    expect(read.payload).toEqual(springCloudPayload({ id: 'application-1', name: 'app', metadata: { zone: 'eu-1' } }));

    // Tenure registers with Spring's payload; Java's ZookeeperInstance serializer binds it, every field equal.
    const ours = await discovery.registerService({
      name: 'app',
      id: 'spring-t1',
      address: '10.0.3.4',
      port: 8081,
      uriSpec: '{scheme}://{address}:{port}',
      payload: springCloudPayload({ id: 'application-2', name: 'app', metadata: { zone: 'eu-2' } }),
    });
    const javaRead = parse<JavaFields[]>(await curator.ask('spring-query app', /^instances /), 'instances');
    const t1 = javaRead.find((i) => i.id === 'spring-t1')!;
    expect(t1.payloadClass).toBe('org.springframework.cloud.zookeeper.discovery.ZookeeperInstance');
    expect(t1).toEqual({
      ...javaView(ours),
      payload: { id: 'application-2', name: 'app', metadata: { instance_status: 'UP', zone: 'eu-2' } },
      payloadClass: t1.payloadClass,
    });
    expect(javaRead.find((i) => i.id === 'spring-j1')).toMatchObject({ ...spec, payload: spec.payload });
  });
});
