import { createEmbeddedServer } from '@tenure/server';
import { createClient } from '@tenure/client';
import { webSocket } from '@tenure/ws';

await using server = createEmbeddedServer();
const { url } = await server.listen({ port: 0, webSocket: { path: '/zookeeper' } });
await using client = createClient({ transport: webSocket(url), sessionTimeoutMs: 10_000 });
await client.start();
await client.create('/hello', Buffer.from('over WebSocket'));
console.log((await client.getData('/hello')).data.toString(), 'from', client.connectedServer);
