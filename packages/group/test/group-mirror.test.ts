/**
 * The membership mirror (one per client and path) on the embedded server: members of one process
 * share its reads, a lone observer's burst of events costs a few passes (reads counted on
 * `tenure:client:request`), a node replaced within one burst is still a change, snapshots are
 * read-only, and the last member's close removes its watches.
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { IllegalStateError, REQUEST_CHANNEL, type Client, type RequestMessage } from '@tenure/client';
import { nextEvent } from '@tenure/testing';
import { GroupMember, type Membership } from '../src/index.js';
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

/** Counts the read requests (by op) `client`'s session sends while subscribed. */
function countReads(client: Client): { readonly count: number; of(op: string): number; stop(): void } {
  const channel = tracingChannel<unknown, RequestMessage>(REQUEST_CHANNEL);
  const byOp = new Map<string, number>();
  const handlers = {
    start(m: RequestMessage) {
      if (m.sessionId === client.sessionId && READS.has(m.op)) byOp.set(m.op, (byOp.get(m.op) ?? 0) + 1);
    },
  };
  channel.subscribe(handlers as never);
  return {
    get count() {
      return [...byOp.values()].reduce((a, b) => a + b, 0);
    },
    of: (op) => byOp.get(op) ?? 0,
    stop: () => channel.unsubscribe(handlers as never),
  };
}

async function open(): Promise<Client> {
  const { client } = await connect(server);
  clients.push(client);
  return client;
}

function member(client: Client, id: string, payload: string, options: ConstructorParameters<typeof GroupMember>[4] = {}): GroupMember {
  const m = new GroupMember(client, '/group', id, payload, { rejoinJitterMs: 0, ...options });
  members.push(m);
  return m;
}

const ids = (m: Membership): string => [...m.keys()].sort().join(',');

describe('GroupMember: one mirror per client and path', () => {
  it('30 members on one client: a change costs that session one read, not one per member', async () => {
    server = startServer();
    const host = await open();
    const writer = await open();
    const mine = Array.from({ length: 30 }, (_, i) => member(host, `m${i}`, `p${i}`));
    await Promise.all(mine.map((m) => m.start({ timeoutMs: 5000 })));
    await Promise.all(mine.map((m) => m.waitForJoined({ timeoutMs: 5000 })));
    await Promise.all(mine.map((m) => untilView(m, (v) => v.size === 30)));
    const reads = countReads(host);
    try {
      const seen = mine.map((m) => untilView(m, (v) => v.get('outsider')?.toString() === 'o'));
      await writer.create('/group/outsider', 'o');
      await Promise.all(seen);
      expect(reads.count).toBe(1); // the new node's data, once for all 30
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

  it('a member that starts after the mirror is loaded sees the membership without re-reading it', async () => {
    server = startServer();
    const [host, writer] = [await open(), await open()];
    const a = member(host, 'a', 'A');
    await a.start({ timeoutMs: 5000 });
    await a.waitForJoined({ timeoutMs: 5000 });
    await writer.create('/group/w', 'W'); // once a sees w, the mirror has read a's node too (its event came first)
    await untilView(a, (v) => v.has('w'));
    const b = member(host, 'b', 'B');
    const reads = countReads(host);
    try {
      await b.start({ timeoutMs: 5000 });
      expect(ids(b.getCurrentMembers())).toBe('a,b,w'); // a and w from the mirror, b itself
      expect(reads.of('getChildren')).toBe(0);
    } finally {
      reads.stop();
    }
    await untilView(a, (v) => v.get('b')?.toString() === 'B');
  });

  it('snapshots are shared and read-only; getCurrentMembers() is a copy of ones own', async () => {
    server = startServer();
    const host = await open();
    const a = member(host, 'a', 'A');
    const b = member(host, 'b', 'B');
    await Promise.all([a.start({ timeoutMs: 5000 }), b.start({ timeoutMs: 5000 })]);
    await Promise.all([a, b].map((m) => untilView(m, (v) => v.size === 2)));
    let snapshot: Membership | undefined;
    for await (const m of a) {
      snapshot = m;
      break;
    }
    expect(() => snapshot!.set('x', Buffer.from('y'))).toThrow(IllegalStateError);
    expect(() => snapshot!.delete('a')).toThrow(IllegalStateError);
    const copy = a.getCurrentMembers();
    copy.delete('b');
    expect(ids(a.getCurrentMembers())).toBe('a,b');
  });

  for (const persistentWatches of [true, false]) {
    const mode = persistentWatches ? 'a persistent watch' : 'one-shot watches';

    it(`${mode}: a node deleted and created again in one burst, same id and payload, is seen leaving and coming back`, async () => {
      server = startServer({ persistentWatches });
      const [observer, writer] = [await open(), await open()];
      const a = member(observer, 'a', 'A', { persistentWatches });
      await a.start({ timeoutMs: 5000 });
      await writer.create('/group/x', 'X');
      await untilView(a, (v) => ids(v) === 'a,x');
      const seen: string[] = [];
      a.on('change', (m) => void seen.push(`${ids(m)}:${m.get('x')?.toString() ?? '-'}`));
      const back = nextEvent(a, 'change', () => seen.at(-1) === 'a,x:X', { timeoutMs: 5000 });
      // One transaction: the observer's events for it arrive together, so its reads see only the new node.
      await writer.transaction().delete('/group/x').create('/group/x', 'X').commit();
      await back;
      expect(seen).toEqual(['a:-', 'a,x:X']);
    });

    it(`${mode}: a lone observer sees 100 members leave and rejoin for a few reads, not one per member`, async () => {
      server = startServer({ persistentWatches });
      const [host, observer] = [await open(), await open()];
      const group = Array.from({ length: 100 }, (_, i) => member(host, `m${String(i).padStart(3, '0')}`, `p${i}`, { persistentWatches }));
      await Promise.all(group.map((m) => m.start({ timeoutMs: 10_000 })));
      await Promise.all(group.map((m) => m.waitForJoined({ timeoutMs: 10_000 })));
      const watcher = member(observer, 'observer', 'o', { persistentWatches });
      await watcher.start({ timeoutMs: 5000 });
      await untilView(watcher, (v) => v.size === 101);
      const reads = countReads(observer);
      try {
        const left = untilView(watcher, (v) => v.size < 101, 10_000);
        const back = left.then(() => untilView(watcher, (v) => v.size === 101, 20_000));
        server.expireSession(host.sessionId);
        await back;
        // Before the mirror: one getData per deletion and one per creation (200). Now a deletion
        // costs no read, and each pass covers what arrived while the one before was in flight.
        if (persistentWatches) {
          expect(reads.of('getChildren')).toBe(0); // the watch names each node
          expect(reads.of('getData')).toBe(0);
          expect(reads.of('multiRead')).toBeLessThan(25); // the new nodes' data, a batch per pass
        } else {
          expect(reads.of('getChildren')).toBeLessThan(25); // one listing per pass, not per member
          // New names (multiRead sets no watches), and now and then one listed just before it went.
          expect(reads.of('getData')).toBeLessThan(110);
        }
      } finally {
        reads.stop();
      }
      for (const m of group) expect(server.node(`/group/${m.memberId}`)?.stat.ephemeralOwner).toBe(host.sessionId);
    });
  }
});
