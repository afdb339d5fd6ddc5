/** The sequence queue: order, position, the predecessor wait (tracked watches) and abandon. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import {
  CreateMode,
  abandonNode,
  queuePosition,
  sequenceAfter,
  sortBySequence,
  waitForPredecessor,
  watchNode,
  type Client,
  type WatchEvent,
} from '../src/index.js';
import { EventLog } from '@tenure/testing';
import { connect, startServer } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function open(): Promise<Client> {
  const { client } = await connect(server);
  clients.push(client);
  return client;
}

const serverWatches = (c: Client): number => server.watchCounts().get(c.sessionId) ?? 0;

describe('order and position', () => {
  it("sorts by the sequence after the last occurrence of the name, stably (Curator's standardFixForSorting)", () => {
    expect(sequenceAfter('_c_1-lock-lock-0000000007', 'lock-')).toBe('0000000007');
    expect(sequenceAfter('other', 'lock-')).toBe('other');
    const children = ['_c_b-lock-0000000002', 'x-lock-0000000001', '_c_a-lock-0000000002', 'lock-0000000000'];
    expect(sortBySequence(children, 'lock-')).toEqual([
      'lock-0000000000',
      'x-lock-0000000001',
      '_c_b-lock-0000000002',
      '_c_a-lock-0000000002',
    ]);
    expect(sortBySequence(['b9', 'a1'], (n) => n.slice(1))).toEqual(['a1', 'b9']);
  });

  it("applies Curator's maxLeases rule: granted below maxLeases, else watch maxLeases places ahead", () => {
    const sorted = ['n0', 'n1', 'n2', 'n3'];
    expect(queuePosition(sorted, 'n0')).toEqual({ index: 0, granted: true });
    expect(queuePosition(sorted, 'n2')).toEqual({ index: 2, granted: false, watch: 'n1' });
    expect(queuePosition(sorted, 'n1', 2)).toEqual({ index: 1, granted: true });
    expect(queuePosition(sorted, 'n3', 2)).toEqual({ index: 3, granted: false, watch: 'n1' });
    expect(queuePosition(sorted, 'gone')).toBeNull();
  });
});

describe('watching and waiting for the predecessor', () => {
  it('watchNode: null for a missing node; a change calls back once; cancel takes the watch back on both sides', async () => {
    server = startServer();
    const c = await open();
    expect(await watchNode(c, '/missing', () => {})).toBeNull();
    expect(serverWatches(c)).toBe(0);
    await c.create('/q', null);
    const seen = new EventLog<WatchEvent>();
    const w = (await watchNode(c, '/q', (ev) => seen.push(ev)))!;
    expect(serverWatches(c)).toBe(1);
    await w.cancel();
    expect(w.fired).toBe(false);
    expect(serverWatches(c)).toBe(0);
    const w2 = (await watchNode(c, '/q', (ev) => seen.push(ev)))!;
    await c.setData('/q', 'x');
    await seen.atLeast(1);
    expect(w2.fired).toBe(true);
    expect(seen.map((e) => e.type)).toEqual(['NodeDataChanged']);
    await w2.cancel();
  });

  it('waitForPredecessor: true when the predecessor goes; on timeout it throws and leaves no watch', async () => {
    server = startServer();
    const [a, b] = [await open(), await open()];
    await a.create('/p', null, { mode: CreateMode.EPHEMERAL });
    {
      using scope = b.waitScope({ timeoutMs: 50 }, 'wait for /p');
      await expect(waitForPredecessor(b, '/p', b.sessionId, scope)).rejects.toMatchObject({ name: 'TimeoutError' });
    }
    await b.sync('/'); // answered after the watch's removal
    expect(serverWatches(b)).toBe(0);
    using scope = b.waitScope({ timeoutMs: 5000 }, 'wait for /p');
    const waiting = waitForPredecessor(b, '/p', b.sessionId, scope);
    await b.sync('/'); // answered after the watching read
    expect(serverWatches(b)).toBe(1);
    await a.delete('/p');
    expect(await waiting).toBe(true);
    expect(serverWatches(b)).toBe(0);
    expect(await waitForPredecessor(b, '/p', b.sessionId, scope)).toBe(true); // already gone
  });

  it('waitForPredecessor: false once our session has ended', async () => {
    server = startServer();
    const [a, b] = [await open(), await open()];
    await a.create('/p', null, { mode: CreateMode.EPHEMERAL });
    using scope = b.waitScope({ timeoutMs: 10_000 }, 'wait for /p');
    const waiting = waitForPredecessor(b, '/p', b.sessionId, scope);
    await b.sync('/'); // answered after the watching read
    expect(serverWatches(b)).toBe(1);
    server.expireSession(b.sessionId);
    expect(await waiting).toBe(false);
  });
});

describe('abandon', () => {
  it('deletes the node and resolves once it is gone; a node of an earlier session is left alone', async () => {
    server = startServer();
    const c = await open();
    const { path, stat } = await c.create('/n-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    await abandonNode(c, path, stat.ephemeralOwner);
    expect(server.node(path)).toBeUndefined();
    expect(c.pendingDeletes).toEqual([]);
    const other = await c.create('/m', null, { mode: CreateMode.EPHEMERAL });
    await abandonNode(c, other.path, stat.ephemeralOwner + 1n);
    expect(server.node('/m')).toBeDefined();
  });
});
