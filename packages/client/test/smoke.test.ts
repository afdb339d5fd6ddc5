import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { ConnectionState, CreateMode } from '../src/index.js';
import { connect, startServer } from './harness.js';

let server: EmbeddedServer;
afterEach(async () => {
  await server?.close();
});

describe('smoke', () => {
  it('connects, creates, reads and closes', async () => {
    server = startServer();
    const { client, states } = await connect(server);
    expect(states).toEqual([ConnectionState.CONNECTED]);
    expect(client.sessionId).not.toBe(0n);
    expect(client.negotiatedTimeoutMs).toBe(1000);
    const r = await client.create('/a', 'hello');
    expect(r.path).toBe('/a');
    const { data, stat } = await client.getData('/a');
    expect(data.toString()).toBe('hello');
    expect(stat.version).toBe(0);
    await client.create('/a/e', null, { mode: CreateMode.EPHEMERAL });
    expect(server.sessions()[0]!.ephemerals).toEqual(['/a/e']);
    await client.close();
    expect(server.sessions()).toEqual([]);
  });
});
