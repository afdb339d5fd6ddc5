/** TestingEmbeddedServer over TCP: connectString, four-letter words, stop() and restart(). */
import { expect, test } from 'vitest';
import { createClient, ConnectionState } from '@tenure/client';
import { CreateMode } from '@tenure/protocol';
import { TestingEmbeddedServer, parseServerDump } from '@tenure/testing';

test("a client reaches it through connectString; dump and wchc parse like ZooKeeper's", async () => {
  await using server = await TestingEmbeddedServer.start();
  expect(server.connectString).toBe(`127.0.0.1:${server.port}`);
  await using client = createClient({ connectString: server.connectString, sessionTimeoutMs: 4000 });
  await client.start();
  await client.create('/e', Buffer.from('x'), { mode: CreateMode.EPHEMERAL });
  await client.getData('/e', { watch: () => {} });
  const fromWords = parseServerDump(await server.fourLetterWord('dump'), await server.fourLetterWord('wchc'));
  const direct = await server.dump();
  expect(fromWords.sessions).toEqual(direct.sessions);
  expect(direct.sessions).toEqual([{ sessionId: client.sessionId, ephemerals: ['/e'], watchedPaths: ['/e'], watches: 1 }]);
  expect(await server.fourLetterWord('ruok')).toBe('imok');
});

test('stop() drops TCP clients and refuses them; restart() lets them re-attach to the same session', async () => {
  await using server = await TestingEmbeddedServer.start();
  await using client = createClient({ connectString: server.connectString, sessionTimeoutMs: 4000 });
  const states: string[] = [];
  client.on('stateChanged', (s) => states.push(s));
  await client.start();
  const id = client.sessionId;
  await client.create('/n', Buffer.from('1'));
  await server.stop();
  await expect.poll(() => states.at(-1), { timeout: 3000 }).toBe(ConnectionState.SUSPENDED);
  await server.restart();
  await expect.poll(() => states.at(-1), { timeout: 5000 }).toBe(ConnectionState.RECONNECTED);
  expect(client.sessionId).toBe(id);
  expect((await client.getData('/n')).data.toString()).toBe('1');
});
