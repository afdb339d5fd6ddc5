/** GroupMember on the embedded server: convergence, expiry, a full outage, duplicate ids, close. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { ConnectionState, type Client } from '@tenure/client';
import { GroupMember, NodeConflictError, type Membership } from '../src/index.js';
import { connect, eventually, serverWatches, sleep, startServer } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
const members: GroupMember[] = [];
afterEach(async () => {
  await Promise.all(members.splice(0).map((m) => m.close()));
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function join(
  id: string,
  payload = `payload-${id}`,
  options: ConstructorParameters<typeof GroupMember>[4] = {},
  clientOptions: Parameters<typeof connect>[1] = {},
) {
  const { client } = await connect(server, clientOptions);
  clients.push(client);
  const member = new GroupMember(client, '/group', id, payload, { rejoinJitterMs: 300, ...options });
  members.push(member);
  await member.start({ timeoutMs: 5000 });
  return { client, member };
}

const view = (m: Membership): string =>
  [...m]
    .map(([id, p]) => `${id}=${p.toString()}`)
    .sort()
    .join(',');
const ids = (m: Membership): string => [...m.keys()].sort().join(',');

describe('GroupMember', () => {
  it('20 members, each in its own client, converge on the same membership', async () => {
    server = startServer();
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => join(`m${String(i).padStart(2, '0')}`)));
    const expected = all
      .map(({ member }) => `${member.memberId}=payload-${member.memberId}`)
      .sort()
      .join(',');
    await eventually(() => all.every(({ member }) => view(member.getCurrentMembers()) === expected), 8000, 'every view complete');
    expect(server.node('/group')!.children).toHaveLength(20);
    // A payload change reaches everyone.
    await all[7]!.member.setPayload('moved');
    await eventually(() => all.every(({ member }) => member.getCurrentMembers().get('m07')?.toString() === 'moved'), 5000, 'payload seen');
  });

  it("when one member's session expires the others see it leave and come back", async () => {
    server = startServer();
    const a = await join('a');
    const b = await join('b');
    const c = await join('c');
    await eventually(() => ids(a.member.getCurrentMembers()) === 'a,b,c' && ids(c.member.getCurrentMembers()) === 'a,b,c');
    const seenByA: string[] = [];
    a.member.on('change', (m) => void seenByA.push(ids(m)));
    const T = b.client.negotiatedTimeoutMs;
    server.expireSession(b.client.sessionId);
    await eventually(() => seenByA.includes('a,c'), 3000, 'a sees b leave');
    await eventually(() => seenByA.at(-1) === 'a,b,c', T + 2000, 'a sees b come back');
    expect(server.node('/group/b')!.stat.ephemeralOwner).toBe(b.client.sessionId);
    await eventually(() => ids(c.member.getCurrentMembers()) === 'a,b,c');
  });

  it('after the whole server is down past the session timeout, every member is present exactly once', async () => {
    server = startServer();
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => join(`m${i}`)));
    await eventually(() => all.every(({ member }) => member.getCurrentMembers().size === 8));
    const before = new Map(all.map(({ client }) => [client.sessionId, true]));
    const T = all[0]!.client.negotiatedTimeoutMs;
    await server.restart(T + 800); // every session expires while it refuses connections
    await eventually(
      () => all.every(({ client }) => client.state === ConnectionState.RECONNECTED && !before.has(client.sessionId)),
      T + 5000,
      'every client on a new session',
    );
    await eventually(
      () => all.every(({ member, client }) => server.node(`/group/${member.memberId}`)?.stat.ephemeralOwner === client.sessionId),
      5000,
      'every member node owned by its new session',
    );
    expect(server.node('/group')!.children.sort()).toEqual(all.map(({ member }) => member.memberId).sort());
    await eventually(() => all.every(({ member }) => member.getCurrentMembers().size === 8), 5000, 'every view complete');
  });

  it("a duplicate member id raises conflict and deletes nobody's node", async () => {
    server = startServer();
    const first = await join('dup', 'first');
    await first.member.waitForJoined({ timeoutMs: 3000 });
    const conflicts: NodeConflictError[] = [];
    const { client } = await connect(server);
    clients.push(client);
    const second = new GroupMember(client, '/group', 'dup', 'second', { retryMs: 50, maxRetryMs: 200 });
    members.push(second);
    second.on('conflict', (e) => void conflicts.push(e));
    await second.start({ timeoutMs: 3000 });
    await eventually(() => conflicts.length >= 2, 3000, 'conflicts, retried');
    expect(conflicts[0]!.owner).toBe(first.client.sessionId);
    const node = server.node('/group/dup')!;
    expect(node.stat.ephemeralOwner).toBe(first.client.sessionId);
    expect(node.data!.toString()).toBe('first');
    // Closing the duplicate deletes nothing.
    await second.close();
    expect(server.node('/group/dup')!.stat.ephemeralOwner).toBe(first.client.sessionId);
    expect(serverWatches(server, client)).toBe(0);
  });

  it('snapshots: the current membership first, then each change; close leaves no node and no watch', async () => {
    server = startServer();
    const a = await join('a', 'A');
    await a.member.waitForJoined({ timeoutMs: 3000 });
    await eventually(() => ids(a.member.getCurrentMembers()) === 'a');
    const seen: string[] = [];
    const iterating = (async () => {
      for await (const m of a.member) seen.push(view(m));
    })();
    const b = await join('b', 'B');
    await eventually(() => seen.at(-1) === 'a=A,b=B');
    await b.member.close();
    await eventually(() => seen.at(-1) === 'a=A');
    expect(server.node('/group/b')).toBeUndefined();
    expect(serverWatches(server, b.client)).toBe(0);
    await a.member.close();
    await iterating;
    expect(seen).toEqual(['a=A', 'a=A,b=B', 'a=A']);
    expect(serverWatches(server, a.client)).toBe(0);
    expect(server.node('/group')?.children ?? []).toEqual([]);
  });

  it('this member is in its own view before its node exists; start then close at once leaves nothing', async () => {
    server = startServer();
    const { client } = await connect(server);
    clients.push(client);
    const m = new GroupMember(client, '/g2', 'me', 'mine');
    expect(m.getCurrentMembers().get('me')?.toString()).toBe('mine');
    const starting = m.start();
    await m.close();
    await starting.catch(() => {});
    await sleep(100);
    expect(server.node('/g2')?.children ?? []).toEqual([]);
    expect(serverWatches(server, client)).toBe(0);
  });

  it('works with one-shot watches (ZooKeeper 3.5 servers)', async () => {
    server = startServer({ persistentWatches: false });
    const a = await join('a', 'A', { persistentWatches: false });
    const b = await join('b', 'B', { persistentWatches: false });
    await eventually(() => ids(a.member.getCurrentMembers()) === 'a,b' && ids(b.member.getCurrentMembers()) === 'a,b', 5000);
    await b.member.close();
    await eventually(() => ids(a.member.getCurrentMembers()) === 'a');
    await a.member.close();
    expect(serverWatches(server, a.client)).toBe(0);
  });
});
