/** GroupMembers of one process share one mirror per client and path: reads counted on `tenure:client:request`. */
import { tracingChannel } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { IllegalStateError, REQUEST_CHANNEL, type Client, type RequestMessage } from '@tenure/client';
import { GroupMember } from '../src/index.js';
import { connect, serverWatches, startServer, untilView } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
const members: GroupMember[] = [];
afterEach(async () => {
  await Promise.all(members.splice(0).map((m) => m.close()));
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

const READS = new Set(['getData', 'getChildren', 'exists', 'multiRead', 'getAllChildrenNumber']);

/** Counts the read requests `client`'s session sends while subscribed. */
function countReads(client: Client): { readonly count: number; stop(): void } {
  const channel = tracingChannel<unknown, RequestMessage>(REQUEST_CHANNEL);
  let count = 0;
  const handlers = {
    start(m: RequestMessage) {
      if (m.sessionId === client.sessionId && READS.has(m.op)) count++;
    },
  };
  channel.subscribe(handlers as never);
  return {
    get count() {
      return count;
    },
    stop: () => channel.unsubscribe(handlers as never),
  };
}

async function open(): Promise<Client> {
  const { client } = await connect(server);
  clients.push(client);
  return client;
}

describe('GroupMember: one mirror per client and path', () => {
  it('30 members on one client: a change costs that session one read, not one per member', async () => {
    server = startServer();
    const host = await open();
    const writer = await open();
    const mine = Array.from({ length: 30 }, (_, i) => new GroupMember(host, '/group', `m${i}`, `p${i}`, { rejoinJitterMs: 0 }));
    members.push(...mine);
    await Promise.all(mine.map((m) => m.start({ timeoutMs: 5000 })));
    await Promise.all(mine.map((m) => m.waitForJoined({ timeoutMs: 5000 })));
    await Promise.all(mine.map((m) => untilView(m, (v) => v.size === 30)));
    const reads = countReads(host);
    try {
      const seen = mine.map((m) => untilView(m, (v) => v.get('outsider')?.toString() === 'o'));
      await writer.create('/group/outsider', 'o');
      await Promise.all(seen);
      expect(reads.count).toBe(1); // the new node's getData, once for all 30
      const changed = mine.map((m) => untilView(m, (v) => v.get('outsider')?.toString() === 'moved'));
      await writer.setData('/group/outsider', 'moved');
      await Promise.all(changed);
      expect(reads.count).toBe(2);
    } finally {
      reads.stop();
    }
    // The mirror lives while one member uses it, and its watch goes with the last.
    await Promise.all(mine.slice(1).map((m) => m.close()));
    expect(serverWatches(server, host)).toBeGreaterThan(0);
    const gone = untilView(mine[0]!, (v) => !v.has('outsider'));
    await writer.delete('/group/outsider');
    await gone;
    await mine[0]!.close();
    expect(serverWatches(server, host)).toBe(0);
    expect(server.node('/group')?.children ?? []).toEqual([]);
  });

  it('a member that starts after the mirror is loaded sees the membership at once', async () => {
    server = startServer();
    const host = await open();
    const a = new GroupMember(host, '/group', 'a', 'A');
    members.push(a);
    await a.start({ timeoutMs: 5000 });
    await a.waitForJoined({ timeoutMs: 5000 });
    await untilView(a, (v) => v.size === 1);
    const b = new GroupMember(host, '/group', 'b', 'B');
    members.push(b);
    const reads = countReads(host);
    try {
      await b.start({ timeoutMs: 5000 });
      expect([...b.getCurrentMembers().keys()].sort()).toEqual(['a', 'b']); // a from the mirror, b itself
      expect(reads.count).toBeLessThanOrEqual(1); // at most the read of b's own new node: the membership is not re-read
    } finally {
      reads.stop();
    }
    await untilView(a, (v) => v.get('b')?.toString() === 'B');
  });

  it('snapshots are shared and read-only; getCurrentMembers() is a copy of ones own', async () => {
    server = startServer();
    const host = await open();
    const a = new GroupMember(host, '/group', 'a', 'A');
    const b = new GroupMember(host, '/group', 'b', 'B');
    members.push(a, b);
    await Promise.all([a.start({ timeoutMs: 5000 }), b.start({ timeoutMs: 5000 })]);
    await Promise.all([a, b].map((m) => untilView(m, (v) => v.size === 2)));
    const [snapshot] = await Promise.all([
      (async () => {
        for await (const m of a) return m;
      })(),
    ]);
    expect(() => snapshot!.set('x', Buffer.from('y'))).toThrow(IllegalStateError);
    expect(() => snapshot!.delete('a')).toThrow(IllegalStateError);
    const copy = a.getCurrentMembers();
    copy.delete('b');
    expect([...a.getCurrentMembers().keys()].sort()).toEqual(['a', 'b']);
  });
});
