/**
 * What a registration costs in requests, counted on the client's diagnostics channel
 * (`tenure:client:request`), against Curator 5.4's ServiceDiscoveryImpl.internalRegisterService:
 * one create (creatingParentContainersIfNeeded: parents only on NoNode); on NodeExists, a delete
 * and the create again. DYNAMIC instances are kept by a RECONNECTED listener there, by a watch here
 * (one exists, after registerService resolved).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import { requestChannel, type RequestMessage } from '@tenure/client';
import { nextEvent } from '@tenure/testing';
import { DiscoveryHarness } from './harness.js';

/** Curator's requests before registerService returns, from its source. */
const CURATOR = { freePath: 1, nodeInTheWay: 3 } as const;

let h: DiscoveryHarness;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const undo of cleanups.splice(0)) undo();
  await h?.close();
});

/** Every operation started from now on (process-wide: nothing else runs meanwhile); `ended` emits 'end' as each completes. */
function recordOps(): RequestMessage[] & { ended: EventEmitter<{ end: [RequestMessage] }> } {
  const ops = Object.assign([] as RequestMessage[], { ended: new EventEmitter<{ end: [RequestMessage] }>() });
  const subscribers = {
    start: (m: RequestMessage): void => void ops.push(m),
    asyncEnd: (m: RequestMessage): void => void ops.ended.emit('end', m),
  };
  requestChannel.subscribe(subscribers as never);
  cleanups.push(() => requestChannel.unsubscribe(subscribers as never));
  return ops;
}

/** Resolves when the recorded `op` on `path` has completed (the watch it sets is registered). */
const completed = (ops: ReturnType<typeof recordOps>, op: string, path: string): Promise<RequestMessage> =>
  nextEvent<RequestMessage>(ops.ended, 'end', (m) => m.op === op && m.path === path);

/** `op path[ CODE]` of each (the code once it failed). */
const show = (ops: RequestMessage[]): string[] => ops.map((m) => `${m.op} ${m.path ?? ''}${m.code ? ` ${m.code}` : ''}`);

describe('registration round trips', () => {
  it("a free path: one create before registerService resolves, as Curator's; then the node's watch", async () => {
    h = new DiscoveryHarness();
    const { discovery } = await h.discovery();
    const first = recordOps();
    const firstWatched = completed(first, 'exists', '/services/orders/o-1');
    await discovery.registerService({ name: 'orders', id: 'o-1', port: 1 }); // the parents exist from now on
    await firstWatched;
    cleanups.pop()!();
    expect(h.server.sessions().every((s) => s.watches === 1)).toBe(true); // o-1's watch is set
    const ops = recordOps();
    const watched = completed(ops, 'exists', '/services/orders/o-2');
    await discovery.registerService({ name: 'orders', id: 'o-2', port: 2 });
    // The watch may already be on its way when registerService resolves: it is sent after the create's reply.
    const before = ops.filter((m) => m.op !== 'exists');
    expect(show(before)).toEqual(['create /services/orders/o-2']);
    expect(before).toHaveLength(CURATOR.freePath);
    await watched;
    expect(show(ops)).toEqual(['create /services/orders/o-2', 'exists /services/orders/o-2']);
  });

  it("a node in the way: create, delete, create, as Curator's; watchers see it go", async () => {
    h = new DiscoveryHarness();
    const admin = await h.clients.open();
    await admin.create('/services/api/dup', 'stale', { createParents: true });
    const events: string[] = [];
    await admin.exists('/services/api/dup', { watch: (e) => void events.push(e.type) });
    const { client, discovery } = await h.discovery();
    const ops = recordOps();
    const watched = completed(ops, 'exists', '/services/api/dup');
    await discovery.registerService({ name: 'api', id: 'dup', port: 1 });
    const before = ops.filter((m) => m.op !== 'exists');
    expect(show(before)).toEqual(['create /services/api/dup NODEEXISTS', 'delete /services/api/dup', 'create /services/api/dup']);
    expect(before).toHaveLength(CURATOR.nodeInTheWay);
    // The watch, after the create (nothing checked before it).
    await watched;
    expect(show(ops)).toEqual([...show(before), 'exists /services/api/dup']);
    expect(events).toEqual(['NodeDeleted']);
    expect(h.server.node('/services/api/dup')!.stat.ephemeralOwner).toBe(client.sessionId);
  });
});
