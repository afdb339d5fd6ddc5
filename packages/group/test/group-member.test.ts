/** GroupMember on the embedded server: convergence, expiry, a full outage, duplicate ids, close. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { ConnectionState, type Client } from '@tenure/client';
import { GroupMember, NodeConflictError, type Membership } from '../src/index.js';
import { EventEmitter } from 'node:events';
import { nextEvent } from '@tenure/testing';
import { connect, roundTrip, serverWatches, startServer, untilChangedUnder, untilView } from './harness.js';

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
    await Promise.all(all.map(({ member }) => untilView(member, (m) => view(m) === expected, 8000)));
    expect(server.node('/group')!.children).toHaveLength(20);
    // A payload change reaches everyone.
    const seen = all.map(({ member }) => untilView(member, (m) => m.get('m07')?.toString() === 'moved'));
    await all[7]!.member.setPayload('moved');
    await Promise.all(seen);
  });

  it("when one member's session expires the others see it leave and come back", async () => {
    server = startServer();
    const a = await join('a');
    const b = await join('b');
    const c = await join('c');
    await Promise.all([a, c].map(({ member }) => untilView(member, (m) => ids(m) === 'a,b,c')));
    const seenByA: string[] = [];
    a.member.on('change', (m) => void seenByA.push(ids(m)));
    const T = b.client.negotiatedTimeoutMs;
    const left = nextEvent(a.member, 'change', () => seenByA.includes('a,c'), { timeoutMs: 3000 });
    const back = nextEvent(a.member, 'change', () => seenByA.includes('a,c') && seenByA.at(-1) === 'a,b,c', { timeoutMs: T + 2000 });
    server.expireSession(b.client.sessionId);
    await left; // a sees b leave
    await back; // and come back
    expect(server.node('/group/b')!.stat.ephemeralOwner).toBe(b.client.sessionId);
    await untilView(c.member, (m) => ids(m) === 'a,b,c');
  });

  it('after the whole server is down past the session timeout, every member is present exactly once', async () => {
    server = startServer();
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => join(`m${i}`)));
    await Promise.all(all.map(({ member }) => untilView(member, (m) => m.size === 8)));
    const before = new Map(all.map(({ client }) => [client.sessionId, true]));
    const T = all[0]!.client.negotiatedTimeoutMs;
    const renewed = all.map(({ client }) =>
      nextEvent(client, 'stateChanged', (s) => s === ConnectionState.RECONNECTED && !before.has(client.sessionId), {
        timeoutMs: 2 * T + 5000,
      }),
    );
    await server.restart(T + 800); // every session expires while it refuses connections
    await Promise.all(renewed); // every client on a new session
    const observer = all[0]!.client;
    await untilChangedUnder(observer, '/group', () =>
      all.every(({ member, client }) => server.node(`/group/${member.memberId}`)?.stat.ephemeralOwner === client.sessionId),
    ); // every member node owned by its new session
    expect(server.node('/group')!.children.sort()).toEqual(all.map(({ member }) => member.memberId).sort());
    await Promise.all(all.map(({ member }) => untilView(member, (m) => m.size === 8))); // every view complete
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
    const retried = nextEvent(second, 'conflict', () => conflicts.length >= 2, { timeoutMs: 3000 });
    await second.start({ timeoutMs: 3000 });
    await retried; // a conflict, then another after a retry
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
    await untilView(a.member, (m) => ids(m) === 'a');
    const seen: string[] = [];
    const took = new EventEmitter<{ snapshot: [] }>(); // the iterating loop took one more snapshot
    const iterating = (async () => {
      for await (const m of a.member) {
        seen.push(view(m));
        took.emit('snapshot');
      }
    })();
    const joined = nextEvent(took, 'snapshot', () => seen.at(-1) === 'a=A,b=B');
    const b = await join('b', 'B');
    await joined;
    const left = nextEvent(took, 'snapshot', () => seen.at(-1) === 'a=A');
    await b.member.close();
    await left;
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
    await roundTrip(client); // a create the member had sent before the close has been served
    expect(server.node('/g2')?.children ?? []).toEqual([]);
    expect(serverWatches(server, client)).toBe(0);
  });

  it('works with one-shot watches (ZooKeeper 3.5 servers)', async () => {
    server = startServer({ persistentWatches: false });
    const a = await join('a', 'A', { persistentWatches: false });
    const b = await join('b', 'B', { persistentWatches: false });
    await Promise.all([a, b].map(({ member }) => untilView(member, (m) => ids(m) === 'a,b')));
    const left = untilView(a.member, (m) => ids(m) === 'a');
    await b.member.close();
    await left;
    await a.member.close();
    expect(serverWatches(server, a.client)).toBe(0);
  });
});
