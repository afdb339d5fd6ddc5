/**
 * SASL DIGEST-MD5 end to end: the embedded server with a user table, a node only bob may touch,
 * bob reading it, alice refused, and a wrong password refused at once. The client README's "SASL"
 * section shows this file; `test/readme/sasl.test.ts` runs it.
 */
import { AuthFailedError, NoAuthError, Perms, createClient } from '@tenure/client';
import { createEmbeddedServer } from '@tenure/server';

export async function saslExample(): Promise<string[]> {
  const out: string[] = [];
  await using server = createEmbeddedServer({ sasl: { users: { bob: 'secret', alice: 'alicesecret' } } });
  const { connectString } = await server.listen({ port: 0 });
  const as = (username: string, password: string) => createClient({ connectString, sasl: { mechanism: 'DIGEST-MD5', username, password } });

  await using bob = as('bob', 'secret');
  await bob.start(); // CONNECTED only after the SASL exchange
  out.push((await bob.whoAmI()).map((i) => `${i.authScheme}:${i.user}`).join(' ')); // 'ip:127.0.0.1 sasl:bob'
  await bob.create('/bob', 'for bob', { acl: [{ perms: Perms.ALL, id: { scheme: 'sasl', id: 'bob' } }] });
  out.push((await bob.getData('/bob')).data.toString()); // 'for bob'

  await using alice = as('alice', 'alicesecret');
  await alice.start();
  await alice.getData('/bob').catch((e: unknown) => out.push(e instanceof NoAuthError ? 'alice: NoAuth' : String(e)));

  await using wrong = as('bob', 'guess');
  await wrong.start().catch((e: unknown) => out.push(e instanceof AuthFailedError ? 'wrong password: AuthFailed' : String(e)));
  return out;
}
