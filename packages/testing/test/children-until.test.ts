import { describe, expect, test } from 'vitest';
import { createClient } from '@tenure/client';
import { createEmbeddedServer } from '@tenure/server';
import { childrenUntil } from '@tenure/testing';

describe('childrenUntil', () => {
  test('follows the child watch until the predicate holds, through the node going and coming back; leaves no watch', async () => {
    const server = createEmbeddedServer();
    const client = createClient({ transport: server.transport() });
    const writer = createClient({ transport: server.transport() });
    await Promise.all([client.start(), writer.start()]);
    await writer.create('/p');
    await writer.create('/p/a');
    expect(await childrenUntil(client, '/p', (c) => c.length === 1)).toEqual(['a']);
    const two = childrenUntil(client, '/p', (c) => c.length === 2);
    await writer.create('/p/b');
    expect(await two).toEqual(['a', 'b']);
    const back = childrenUntil(client, '/p', (c) => c.includes('x'));
    await writer.delete('/p', { deletingChildren: true });
    await writer.create('/p');
    await writer.create('/p/x');
    expect(await back).toEqual(['x']);
    expect(server.watchCounts().get(client.sessionId) ?? 0).toBe(0);
    await expect(childrenUntil(client, '/p', (c) => c.length === 5, { timeoutMs: 50 })).rejects.toThrow(/timed out.*\["x"\]/);
    await Promise.all([client.close(), writer.close()]);
    await server.close();
  });
});
