/** PersistentNode's `replaceExisting`: create first, and delete then create again only when a node is in the way. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { CreateMode, requestChannel, type Client, type RequestMessage, type WatchEvent, InvalidArgumentError } from '@tenure/client';
import { NodeConflictError, PersistentNode, type PersistentNodeOptions } from '../src/index.js';
import { EventLog, ManualClock, nextEvent } from '@tenure/testing';
import { connect, startServer } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
const nodes: PersistentNode[] = [];
const cleanups: Array<() => void> = [];

afterEach(async () => {
  for (const undo of cleanups.splice(0)) undo();
  await Promise.all(nodes.splice(0).map((n) => n.close()));
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function open(options: Parameters<typeof connect>[1] = {}): Promise<Client> {
  const { client } = await connect(server, options);
  clients.push(client);
  return client;
}

function keep(client: Client, options: PersistentNodeOptions): PersistentNode {
  const node = new PersistentNode(client, { rejoinJitterMs: 0, ...options });
  nodes.push(node);
  return node;
}

/** Every client operation from now on, as `op path[ CODE]` (the channel is process-wide: one client at a time). */
function recordOps(): EventLog<string> {
  const ops = new EventLog<string>();
  const asyncEnd = (m: RequestMessage): void => void ops.push(`${m.op} ${m.path ?? ''}${m.code ? ` ${m.code}` : ''}`);
  const subscribers = { asyncEnd };
  requestChannel.subscribe(subscribers);
  cleanups.push(() => requestChannel.unsubscribe(subscribers));
  return ops;
}

describe('PersistentNode replaceExisting', () => {
  it('a free path costs one create before the initial create is done; then the watch', async () => {
    server = startServer();
    const client = await open();
    await client.create('/free', null);
    const node = keep(client, { path: '/free/n', data: 'x', replaceExisting: true });
    const ops = recordOps();
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    expect(ops).toEqual(['create /free/n']);
    await ops.atLeast(2);
    expect(ops).toEqual(['create /free/n', 'exists /free/n']);
    // Without the option: the check first (exists, then create; the check's watch sees NodeCreated).
    const plain = keep(client, { path: '/free/p', data: 'x' });
    ops.length = 0;
    await plain.start();
    await plain.waitForInitialCreate({ timeoutMs: 3000 });
    expect(ops).toEqual(['exists /free/p', 'create /free/p']);
  });

  it("a node in the way (another session's) is deleted and created again, so watchers fire", async () => {
    server = startServer();
    const other = await open();
    await other.create('/busy', null);
    await other.create('/busy/n', 'old', { mode: CreateMode.EPHEMERAL });
    const events: WatchEvent['type'][] = [];
    await other.getData('/busy/n', { watch: (e) => void events.push(e.type) });
    const client = await open();
    const node = keep(client, { path: '/busy/n', data: 'new', replaceExisting: true });
    const ops = recordOps();
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    expect(ops).toEqual(['create /busy/n NODEEXISTS', 'delete /busy/n', 'create /busy/n']);
    expect(events).toEqual(['NodeDeleted']);
    const snap = server.node('/busy/n')!;
    expect(snap.stat.ephemeralOwner).toBe(client.sessionId);
    expect(snap.data!.toString()).toBe('new');
  });

  it('a PERSISTENT node in the way is replaced too (a new czxid)', async () => {
    server = startServer();
    const client = await open();
    await client.create('/p', null);
    const before = await client.create('/p/n', 'old');
    const node = keep(client, { path: '/p/n', mode: CreateMode.PERSISTENT, data: 'new', replaceExisting: true });
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    const snap = server.node('/p/n')!;
    expect(snap.data!.toString()).toBe('new');
    expect(snap.stat.czxid).not.toBe(before.stat.czxid);
  });

  it('a holder that heals its node is deleted once, then the ownership rule settles it without a fight', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const a = await open({ clock });
    const b = await open({ clock });
    const holder = keep(a, { path: '/dup/x', data: 'A', retryMs: 50, maxRetryMs: 200 });
    await holder.start();
    await holder.waitForInitialCreate({ timeoutMs: 3000 });
    let holderLost = 0;
    holder.on('deleted', () => void holderLost++);
    const conflicts: NodeConflictError[] = [];
    const node = keep(b, { path: '/dup/x', data: 'B', replaceExisting: true, retryMs: 50, maxRetryMs: 200 });
    node.on('conflict', (e) => void conflicts.push(e));
    a.on('error', () => {});
    holder.on('conflict', (e) => void conflicts.push(e));
    holder.on('error', () => {});
    node.on('error', () => {});
    await node.start();
    await clock.advance(800); // sixteen of the 50 ms first retries: a fight would show
    expect(holderLost).toBe(1); // deleted once, never again
    expect(conflicts.length).toBeGreaterThan(0); // whoever lost the race reports it
    const owner = server.node('/dup/x')!.stat.ephemeralOwner;
    const loser = owner === a.sessionId ? node : holder;
    expect(conflicts.every((c) => c.owner === owner)).toBe(true);
    // The loser takes over once the holder goes.
    const tookOver = nextEvent(loser, 'created');
    await (loser === node ? holder : node).close();
    await tookOver;
    expect(server.node('/dup/x')?.stat.ephemeralOwner).toBe((loser === node ? b : a).sessionId);
  });

  it('after a session expiry the node comes back by the ownership rule, with no replace', async () => {
    server = startServer();
    const client = await open();
    const node = keep(client, { path: '/exp/n', data: 'x', replaceExisting: true });
    await node.start();
    await node.waitForInitialCreate({ timeoutMs: 3000 });
    const ops = recordOps();
    const back = nextEvent(node, 'created', undefined, { timeoutMs: 8000 });
    server.expireSession(client.sessionId);
    await back;
    expect(server.node('/exp/n')?.stat.ephemeralOwner).toBe(client.sessionId);
    expect(ops.filter((o) => o.startsWith('delete'))).toEqual([]);
    expect(ops[0]).toMatch(/^exists \/exp\/n/); // checked first, as without the option
  });

  it('needs a fixed name', () => {
    server = startServer();
    const fake = { create() {} } as unknown as Client;
    expect(() => new PersistentNode(fake, { path: '/a', protection: true, replaceExisting: true })).toThrow(InvalidArgumentError);
    expect(() => new PersistentNode(fake, { path: '/a', mode: CreateMode.EPHEMERAL_SEQUENTIAL, replaceExisting: true })).toThrow(
      InvalidArgumentError,
    );
  });
});
