/**
 * Group membership with @tenure/group: three members, each with its own client, on the embedded
 * server. Each member is an ephemeral node /services/api/<id> kept by a PersistentNode, so the
 * group heals by itself: a member whose session expires disappears from everyone's view and comes
 * back on its new session.
 *
 *   npx tsc -b && node examples/dist/group-membership.js
 */
import { createClient, RetryPolicies, type Client } from '@tenure/client';
import { GroupMember, type Membership } from '@tenure/group';
import { createEmbeddedServer } from '@tenure/server';

const server = createEmbeddedServer({ tickMs: 200 });
const show = (m: Membership): string =>
  [...m]
    .map(([id, payload]) => `${id}(${payload.toString()})`)
    .sort()
    .join(' ');

async function member(id: string, address: string): Promise<{ client: Client; member: GroupMember }> {
  const client = createClient({
    transport: server.transport(),
    sessionTimeoutMs: 2000,
    retryPolicy: RetryPolicies.exponentialBackoff(50, 10, 500),
  });
  await client.start();
  const member = new GroupMember(client, '/services/api', id, address, { rejoinJitterMs: 200 });
  await member.start({ timeoutMs: 5000 });
  await member.waitForJoined({ timeoutMs: 5000 });
  return { client, member };
}

/** Resolves once `m`'s view satisfies `ok` (now or at a later change). */
const until = (m: GroupMember, ok: (now: Membership) => boolean): Promise<void> =>
  new Promise((resolve) => {
    const check = (now: Membership): void => {
      if (!ok(now)) return;
      m.off('change', check);
      resolve();
    };
    m.on('change', check);
    check(m.getCurrentMembers());
  });
const waitFor = (m: GroupMember, ids: string): Promise<void> => until(m, (now) => [...now.keys()].sort().join(',') === ids);

const a = await member('a', 'http://10.0.0.1:8080');
a.member.on('change', (m) => console.log(`a sees: ${show(m)}`));
const b = await member('b', 'http://10.0.0.2:8080');
const c = await member('c', 'http://10.0.0.3:8080');
await waitFor(a.member, 'a,b,c');

console.log('-- b changes its payload');
await b.member.setPayload('http://10.0.0.2:9090');
await until(a.member, (now) => now.get('b')?.toString() === 'http://10.0.0.2:9090');

console.log("-- c's session expires (as after a long GC pause); c rejoins on its new session");
server.expireSession(c.client.sessionId);
await waitFor(a.member, 'a,b');
await waitFor(a.member, 'a,b,c');

console.log('-- b leaves');
await b.member.close();
await waitFor(a.member, 'a,c');

for (const { member: m, client } of [a, b, c]) {
  await m.close();
  await client.close();
}
console.log(`left behind: ${server.node('/services/api')?.children.length ?? 0} member nodes`);
await server.close();
