import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { Mutex } from '../src/index.js';
import { Clients, startServer, ephemeralsUnder } from './harness.js';

let server: EmbeddedServer;
let clients: Clients;
afterEach(async () => {
  await clients.closeAll();
  await server.close();
});

describe('smoke', () => {
  it('acquires and releases', async () => {
    server = startServer();
    clients = new Clients(() => server.transport());
    const c = await clients.open();
    const m = new Mutex(c, '/locks/a');
    const lease = await m.acquire();
    expect(lease.path).toMatch(/^\/locks\/a\/_c_[0-9a-f-]{36}-lock-\d{10}$/);
    expect(lease.isHeld()).toBe(true);
    expect(server.node(lease.path)!.stat.czxid).toBe(lease.fencingToken);
    const m2 = new Mutex(c, '/locks/a');
    await expect(m2.acquire({ timeoutMs: 100 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(ephemeralsUnder(server, '/locks')).toEqual([lease.path]);
    await lease.release();
    expect(lease.isHeld()).toBe(false);
    expect(lease.signal.aborted).toBe(true);
    const l2 = await m2.acquire();
    expect(l2.fencingToken).toBeGreaterThan(lease.fencingToken);
    await l2.release();
    expect(ephemeralsUnder(server, '/locks')).toEqual([]);
  });
});
