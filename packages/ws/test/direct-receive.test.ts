/**
 * The client's direct receive path (receiveBinaryMessagesDirectly, set up by batchingSends): replies
 * read in place past `ws`' Receiver, against the embedded server's WebSocket listener. Many replies
 * per read, a reply spanning many reads, and the server's pings (control frames, still `ws`') answered.
 */
import { afterEach, expect, test } from 'vitest';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { createClient, type Client } from '@tenure/client';
import { webSocket } from '@tenure/ws';

let server: EmbeddedServer;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await server?.close();
});

test('500 pipelined replies, a 900 KB reply, and the server’s pings between them', async () => {
  server = createEmbeddedServer();
  const { url } = await server.listen({ webSocket: { pingIntervalMs: 400 } });
  client = createClient({ transport: webSocket(url), sessionTimeoutMs: 10_000 });
  await client.start();
  const big = Buffer.alloc(900_000);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
  await client.create('/big', big);
  for (let i = 0; i < 10; i++) await client.create(`/n${i}`, Buffer.from(`value ${i}`));
  for (let round = 0; round < 3; round++) {
    const replies = await Promise.all(Array.from({ length: 500 }, (_, i) => client!.getData(`/n${i % 10}`)));
    replies.forEach((r, i) => expect(r.data.toString()).toBe(`value ${i % 10}`));
    expect((await client.getData('/big')).data.equals(big)).toBe(true);
  }
  // Three pings, with the connection idle (a loaded loop must not miss one): a client that did not
  // answer them would be closed at the next.
  await new Promise((r) => setTimeout(r, 1300));
  expect((await client.getData('/n1')).data.toString()).toBe('value 1');
  expect(client.state).toBe('CONNECTED');
});
