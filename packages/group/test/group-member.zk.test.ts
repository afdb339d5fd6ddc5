/**
 * GroupMember on a real 3-node ZooKeeper 3.8 ensemble: 20 members converge; an expired member
 * leaves and comes back in everyone's view; after the whole ensemble is stopped and restarted each
 * member is present exactly once; a duplicate member id raises conflict and deletes nobody's node.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionState, type Client } from '@tenure/client';
import { TestingCluster, expireSession, nextEvent, realZooKeeper } from '@tenure/testing';
import { GroupMember, type Membership, type NodeConflictError } from '../src/index.js';
import { connect, eventually, untilChangedUnder, untilView } from './harness.js';

const zk = realZooKeeper();
const MEMBERS = Number(process.env.TENURE_GROUP_MEMBERS ?? 20);
const ids = (m: Membership): string => [...m.keys()].sort().join(',');

describe.skipIf(!zk.available)('GroupMember on a ZooKeeper 3.8 ensemble', () => {
  let cluster: TestingCluster;
  let admin: Client;
  const clients: Client[] = [];
  const members: GroupMember[] = [];

  beforeAll(async () => {
    cluster = await TestingCluster.start();
    admin = (await connect(cluster.connectString, { sessionTimeoutMs: 4000 })).client;
  });
  afterEach(async () => {
    await Promise.all(members.splice(0).map((m) => m.close()));
    await Promise.all(clients.splice(0).map((c) => c.close()));
    for (let n = 0; n < cluster.size; n++) if (!cluster.running(n)) await cluster.restartServer(n, { wait: false });
    await cluster.waitServing();
  });
  afterAll(async () => {
    await admin?.close();
    await cluster?.close();
  });

  async function join(group: string, id: string, payload = `p-${id}`, sessionTimeoutMs = 2000) {
    const { client } = await connect(cluster.connectString, { sessionTimeoutMs, connectionTimeoutMs: 5000 });
    clients.push(client);
    const member = new GroupMember(client, group, id, payload, { rejoinJitterMs: 500, retryMs: 100, maxRetryMs: 500 });
    members.push(member);
    await member.start({ timeoutMs: 10_000 });
    return { client, member };
  }

  const membersOf = async (group: string): Promise<string[]> => (await admin.getChildren(group)).children.sort();

  it(`${MEMBERS} members, each in its own client, converge on the same membership`, async () => {
    const all = await Promise.all(Array.from({ length: MEMBERS }, (_, i) => join('/zg1', `m${String(i).padStart(2, '0')}`)));
    const expected = all
      .map(({ member }) => member.memberId)
      .sort()
      .join(',');
    await Promise.all(all.map(({ member }) => untilView(member, (m) => ids(m) === expected, 15_000))); // every view complete
    for (const { member } of all) expect(member.getCurrentMembers().get('m03')?.toString()).toBe('p-m03');
    expect((await membersOf('/zg1')).join(',')).toBe(expected);
  });

  it("when one member's session expires the others see it leave and come back", async () => {
    const a = await join('/zg2', 'a');
    const b = await join('/zg2', 'b');
    await Promise.all([a, b].map(({ member }) => untilView(member, (m) => ids(m) === 'a,b')));
    const seen: string[] = [];
    a.member.on('change', (m) => void seen.push(ids(m)));
    const oldId = b.client.sessionId;
    const left = nextEvent(a.member, 'change', () => seen.includes('a'));
    const back = nextEvent(a.member, 'change', () => seen.includes('a') && seen.at(-1) === 'a,b', {
      timeoutMs: b.client.negotiatedTimeoutMs + 8000,
    });
    await expireSession(b.client, cluster);
    await left; // a sees b leave
    await back; // and come back
    const owner = (await admin.exists('/zg2/b'))!.ephemeralOwner;
    expect(owner).toBe(b.client.sessionId);
    expect(owner).not.toBe(oldId);
  });

  it('after the whole ensemble is stopped and restarted, every member is present exactly once', async () => {
    const n = 6;
    const all = await Promise.all(Array.from({ length: n }, (_, i) => join('/zg3', `m${i}`, `p${i}`, 1500)));
    await Promise.all(all.map(({ member }) => untilView(member, (m) => m.size === n, 8000)));
    const old = new Set(all.map(({ client }) => client.sessionId));
    const T = all[0]!.client.negotiatedTimeoutMs;
    await Promise.all([0, 1, 2].map((s) => cluster.killServer(s)));
    await Promise.all(all.map(({ client }) => client.waitForState(ConnectionState.LOST, { timeoutMs: T + 4000 })));
    await Promise.all([0, 1, 2].map((s) => cluster.restartServer(s, { wait: false })));
    await cluster.waitServing();
    // A session opened after the restart: the admin's own may not outlive a slow restart of all three.
    const { client: observer } = await connect(cluster.connectString, { sessionTimeoutMs: 4000 });
    clients.push(observer);
    const membersOfObserved = async (): Promise<string[]> => (await observer.getChildren('/zg3')).children.sort();
    // Every member node owned by its new session: checked again at each change under the group.
    await untilChangedUnder(
      observer,
      '/zg3',
      async () => {
        for (const { member, client } of all) {
          if (old.has(client.sessionId)) return false;
          const s = await observer.exists(`/zg3/${member.memberId}`);
          if (s?.ephemeralOwner !== client.sessionId) return false;
        }
        return true;
      },
      20_000,
    );
    expect(await membersOfObserved()).toEqual(all.map(({ member }) => member.memberId).sort());
    await Promise.all(all.map(({ member }) => untilView(member, (m) => m.size === n))); // every view complete
    // Old sessions the restored quorum still held are gone now: still each exactly once, ours.
    await eventually(async () => !(await cluster.dump()).sessions.some((s) => old.has(s.sessionId)), 4 * T + 4000, 'old sessions gone');
    expect(await membersOfObserved()).toEqual(all.map(({ member }) => member.memberId).sort());
    for (const { member, client } of all) expect((await observer.exists(`/zg3/${member.memberId}`))?.ephemeralOwner).toBe(client.sessionId);
  });

  it("a duplicate member id raises conflict and deletes nobody's node", async () => {
    const first = await join('/zg4', 'dup', 'first');
    await first.member.waitForJoined({ timeoutMs: 5000 });
    const { client } = await connect(cluster.connectString, { sessionTimeoutMs: 2000 });
    clients.push(client);
    const second = new GroupMember(client, '/zg4', 'dup', 'second', { retryMs: 100, maxRetryMs: 300 });
    members.push(second);
    const conflicts: NodeConflictError[] = [];
    second.on('conflict', (e) => void conflicts.push(e));
    const retried = nextEvent(second, 'conflict', () => conflicts.length >= 2);
    await second.start({ timeoutMs: 5000 });
    await retried; // a conflict, then another after a retry
    expect(conflicts[0]!.owner).toBe(first.client.sessionId);
    const { data, stat } = await admin.getData('/zg4/dup');
    expect(stat.ephemeralOwner).toBe(first.client.sessionId);
    expect(data.toString()).toBe('first');
    await second.close();
    expect((await admin.exists('/zg4/dup'))?.ephemeralOwner).toBe(first.client.sessionId);
    const on = cluster.serverOf(client);
    expect((await cluster.dump(on)).sessions.find((s) => s.sessionId === client.sessionId)?.watches ?? 0).toBe(0);
  });
});
