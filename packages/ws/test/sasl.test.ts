/**
 * SASL over the WebSocket listener: the embedded server's DIGEST-MD5 (`sasl: { users }`) with a
 * client over `webSocket(url)`; the exchange is frames like any other, so it is the same as on TCP.
 */
import { expect, test } from 'vitest';
import { AuthFailedError, NoAuthError, Perms, createClient } from '@tenure/client';
import { createEmbeddedServer } from '@tenure/server';
import { webSocket } from '@tenure/ws';

const as = (username: string, password: string) => ({ sasl: { mechanism: 'DIGEST-MD5' as const, username, password } });

test('DIGEST-MD5 over WebSocket: sasl:bob, his ACL enforced, a wrong password refused at once', async () => {
  await using server = createEmbeddedServer({ sasl: { users: { bob: 'secret', alice: 'other' } } });
  const { url } = await server.listen({ webSocket: {} });
  await using bob = createClient({ transport: webSocket(url), sessionTimeoutMs: 4000, ...as('bob', 'secret') });
  await bob.start();
  expect((await bob.whoAmI()).map((i) => `${i.authScheme}:${i.user}`)).toContain('sasl:bob');
  await bob.create('/bob', Buffer.from('b'), { acl: [{ perms: Perms.ALL, id: { scheme: 'sasl', id: 'bob' } }] });
  await using alice = createClient({ transport: webSocket(url), sessionTimeoutMs: 4000, ...as('alice', 'other') });
  await alice.start();
  await expect(alice.getData('/bob')).rejects.toBeInstanceOf(NoAuthError);
  await using wrong = createClient({ transport: webSocket(url), sessionTimeoutMs: 4000, ...as('bob', 'nope') });
  await expect(wrong.start()).rejects.toBeInstanceOf(AuthFailedError);
});
