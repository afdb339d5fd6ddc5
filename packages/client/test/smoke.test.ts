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

describe('logging', () => {
  it('is silent by default and speaks through an injected pino-compatible logger', async () => {
    server = startServer();
    const lines: string[] = [];
    const rec = (level: string) => (obj: unknown, msg?: string) => void lines.push(`${level} ${typeof obj === 'string' ? obj : msg}`);
    const logger = { trace: rec('trace'), debug: rec('debug'), info: rec('info'), warn: rec('warn'), error: rec('error') };
    const { client } = await connect(server, { logger });
    server.dropConnection(client.sessionId);
    await client.waitForState(ConnectionState.RECONNECTED);
    await client.close();
    expect(lines).toContain('info connection state CONNECTED');
    expect(lines).toContain('info connection state SUSPENDED');
    expect(lines.some((l) => l.startsWith('info connected'))).toBe(true);
  });
});

describe('servers without persistent watches', () => {
  it('addWatch on a 3.5-like server fails with a typed error and the client recovers', async () => {
    server = startServer({ persistentWatches: false });
    const { client, states } = await connect(server);
    await expect(client.addWatch('/', { recursive: true })).rejects.toMatchObject({ name: 'UnimplementedError' });
    await client.waitForState(ConnectionState.RECONNECTED); // the server closed the connection, as 3.5 does
    expect(states).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED, ConnectionState.RECONNECTED]);
    expect(await client.exists('/')).not.toBeNull();
    await client.close();
  });
});
