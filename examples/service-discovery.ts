/**
 * Service discovery with @tenure/discovery on the embedded server: two `orders` instances
 * register (in Curator's layout and JSON, so Java services using Curator's ServiceDiscovery or
 * Spring Cloud Zookeeper see them), a client picks one per call with a round-robin provider, an
 * instance that fails twice is skipped, and one whose session expires comes back by itself.
 *
 *   npx tsc -b && node examples/dist/service-discovery.js
 */
import { createClient, RetryPolicies } from '@tenure/client';
import { ServiceDiscovery, buildUri, springCloudPayload } from '@tenure/discovery';
import { createEmbeddedServer } from '@tenure/server';

const server = createEmbeddedServer({ tickMs: 200 });
const connect = async () => {
  const client = createClient({
    transport: server.transport(),
    sessionTimeoutMs: 2000,
    retryPolicy: RetryPolicies.exponentialBackoff(50, 10, 500),
  });
  await client.start();
  return client;
};

// Two instances of "orders", each in its own process in real life (here: its own client).
const clientA = await connect();
const a = new ServiceDiscovery(clientA, { rejoinJitterMs: 200 });
await a.start();
await a.registerService({
  name: 'orders',
  id: 'orders-a',
  address: '10.0.0.1',
  port: 8080,
  uriSpec: '{scheme}://{address}:{port}/v1',
  payload: springCloudPayload({ id: 'orders-1', name: 'orders', metadata: { zone: 'eu-1' } }),
});
const clientB = await connect();
const b = new ServiceDiscovery(clientB, { rejoinJitterMs: 200 });
await b.start();
await b.registerService({ name: 'orders', id: 'orders-b', address: '10.0.0.2', port: 8080, uriSpec: '{scheme}://{address}:{port}/v1' });

// A caller: a provider reads from a cache kept by a watch, so getInstance() costs no round trip.
const clientC = await connect();
const caller = new ServiceDiscovery(clientC);
await caller.start();
console.log('services:', await caller.queryForNames());
const orders = caller.serviceProvider('orders', { strategy: 'roundRobin', downInstancePolicy: { timeoutMs: 1000, errorThreshold: 2 } });
await orders.start(); // resolves after the initial load
for (let i = 0; i < 4; i++) console.log('call', i, '->', buildUri(orders.getInstance()!));

// orders-b fails twice: it is skipped for timeoutMs.
const bad = orders.getAllInstances().find((i) => i.id === 'orders-b')!;
orders.noteError(bad);
orders.noteError(bad);
console.log(
  'after two errors on orders-b:',
  orders
    .getAllInstances()
    .map((i) => i.id)
    .join(', '),
);

// orders-a's session expires: its ephemeral goes, and comes back with the same id.
const seen = new Promise<void>((resolve) => {
  let left = false;
  orders.cache.on('change', (set) => {
    const ids = set.map((i) => i.id).join(', ');
    console.log('cache:', ids || '(none)');
    if (!set.some((i) => i.id === 'orders-a')) left = true;
    else if (left) resolve();
  });
});
server.expireSession(clientA.sessionId);
await seen;
console.log('orders-a is back, payload', JSON.stringify(orders.cache.instances.find((i) => i.id === 'orders-a')!.payload));

// close() unregisters what each registry registered.
await a.close();
await b.close();
await caller.close();
console.log('nodes left under /services/orders:', server.node('/services/orders')?.children.length ?? 0);
await Promise.all([clientA.close(), clientB.close(), clientC.close()]);
await server.close();
