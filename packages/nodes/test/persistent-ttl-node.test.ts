/** PersistentTtlNode on the embedded server: kept alive by touching, gone a TTL after close. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import type { Client } from '@tenure/client';
import { PersistentTtlNode } from '../src/index.js';
import { connect, countingClock, eventually, serverWatches, sleep, startServer } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

describe('PersistentTtlNode', () => {
  it('keeps a container with a TTL child alive past the TTL, then both go a TTL after close', async () => {
    server = startServer();
    const { client } = await connect(server);
    clients.push(client);
    const ttl = new PersistentTtlNode(client, { path: '/ttl/svc', ttlMs: 400, data: 'here' });
    await ttl.start();
    await ttl.waitForInitialCreate({ timeoutMs: 3000 });
    await eventually(() => server.node('/ttl/svc/touch') !== undefined, 2000, 'the touch child');
    expect(server.node('/ttl/svc')!.data!.toString()).toBe('here');
    await sleep(1200); // three TTLs: only touching keeps it
    expect(server.node('/ttl/svc/touch')).toBeDefined();
    expect(server.node('/ttl/svc')).toBeDefined();
    await ttl.close();
    expect(serverWatches(server, client)).toBe(0);
    expect(server.node('/ttl/svc')).toBeDefined(); // left to its TTL, as Curator does
    const reaped = new Promise<string>((resolve) => void client.exists('/ttl/svc', { watch: (e) => resolve(e.type) }));
    expect(await reaped).toBe('NodeDeleted'); // the container reaped after the TTL
  });

  it('start followed at once by close leaves nothing once the TTL has passed', async () => {
    server = startServer();
    const { client } = await connect(server);
    clients.push(client);
    await client.create('/ttl2');
    const ttl = new PersistentTtlNode(client, { path: '/ttl2/x', ttlMs: 300 });
    await ttl.start();
    await ttl.close();
    await eventually(() => server.node('/ttl2')!.children.length === 0, 3000, 'nothing left');
    expect(serverWatches(server, client)).toBe(0);
  });

  it('stops touching when its client closes: no timer left, no errors', async () => {
    server = startServer();
    const clock = countingClock();
    const { client } = await connect(server, { clock });
    const ttl = new PersistentTtlNode(client, { path: '/ttl3/x', ttlMs: 100 });
    const errors: Error[] = [];
    ttl.on('error', (e) => void errors.push(e));
    await ttl.start();
    await ttl.waitForInitialCreate({ timeoutMs: 3000 });
    await client.close();
    expect(clock.live).toBe(0);
    await sleep(250);
    expect(errors).toEqual([]);
    await ttl.close();
  });
});
