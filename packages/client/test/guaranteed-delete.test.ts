/** Guaranteed deletes survive connection faults. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { ConnectionState, CreateMode, NoNodeError, RetryPolicies, type Client } from '../src/index.js';
import { ManualClock } from '@tenure/testing';
import { connect, startServer } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function open(opts: Parameters<typeof connect>[1] = {}) {
  const r = await connect(server, { retryPolicy: RetryPolicies.none(), ...opts });
  clients.push(r.client);
  return r;
}

describe('guaranteed delete', () => {
  it('survives dropConnection: the delete is retried after the reconnect', async () => {
    server = startServer();
    const clock = new ManualClock(); // the client's: its retry pause (the server's silence is real time)
    const { client } = await open({ clock });
    await client.create('/g', 'x');
    const id = client.sessionId;
    // The request is held while the session is silenced, then the connection drops: the delete never
    // reached the data tree and fails with ConnectionLoss.
    server.silence(id, 200);
    const del = client.delete('/g', { guaranteed: true });
    await new Promise((r) => setTimeout(r, 20));
    server.dropConnection(id);
    await client.waitForState(ConnectionState.SUSPENDED);
    await new Promise((r) => setTimeout(r, 20));
    expect(client.pendingDeletes).toEqual(['/g']);
    await clock.advance(1000); // retryPolicy none(): background work is paced at Curator's 1 s base sleep
    await del;
    expect(client.pendingDeletes).toEqual([]);
    expect(await client.exists('/g')).toBeNull();
    expect(client.state).toBe(ConnectionState.RECONNECTED);
  });

  it('a delete applied but unanswered (loseNextReply) completes on the retry', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client } = await open({ clock });
    await client.create('/g', 'x');
    server.loseNextReply(client.sessionId);
    const del = client.delete('/g', { guaranteed: true });
    await clock.advance(1000); // the reconnect, then the retry after its 1 s pace
    await del;
    expect(await client.exists('/g')).toBeNull();
  });

  it('a plain delete with no retries fails on the same fault', async () => {
    server = startServer();
    const { client } = await open();
    await client.create('/g', 'x');
    server.silence(client.sessionId, 200);
    const del = client.delete('/g');
    await new Promise((r) => setTimeout(r, 20));
    server.dropConnection(client.sessionId);
    await expect(del).rejects.toMatchObject({ name: 'ConnectionLossError' });
  });

  it('NoNode on the first attempt is an error; guaranteed deletingChildren works', async () => {
    const clock = new ManualClock();
    server = startServer({ clock });
    const { client } = await open({ clock });
    await expect(client.delete('/none', { guaranteed: true })).rejects.toBeInstanceOf(NoNodeError);
    await client.create('/t/a/b', null, { createParents: true });
    server.loseNextReply(client.sessionId);
    const del = client.delete('/t', { guaranteed: true, deletingChildren: true });
    await clock.advance(1000);
    await del;
    expect(await client.exists('/t')).toBeNull();
  });

  it('settles when the session ends, and an ephemeral goes with it', async () => {
    server = startServer();
    const { client } = await open({ sessionTimeoutMs: 600 });
    await client.create('/e', null, { mode: CreateMode.EPHEMERAL });
    server.silence(client.sessionId, 3000);
    const del = client.delete('/e', { guaranteed: true });
    await client.waitForState(ConnectionState.LOST);
    await del; // the session that owned the node is gone
    expect(client.pendingDeletes).toEqual([]);
    await client.waitForState(ConnectionState.RECONNECTED);
    // The old session's expiry on the server takes the ephemeral.
    let deleted!: () => void;
    const gone = new Promise<void>((resolve) => (deleted = resolve));
    if ((await client.exists('/e', { watch: () => deleted() })) !== null) await gone;
    expect(await client.exists('/e')).toBeNull();
  });

  it('an aborted caller stops waiting; the delete goes on in the background', async () => {
    server = startServer();
    const clock = new ManualClock(); // the client's: reconnect pacing and the retry pause (the restart is real time)
    const { client } = await open({ clock });
    await client.create('/g');
    const restarted = server.restart(300);
    await client.waitForState(ConnectionState.SUSPENDED);
    const ac = new AbortController();
    const del = client.delete('/g', { guaranteed: true, signal: ac.signal });
    ac.abort();
    await expect(del).rejects.toMatchObject({ name: 'AbortError' });
    expect(client.pendingDeletes).toEqual(['/g']);
    await restarted;
    const reconnected = client.waitForState(ConnectionState.RECONNECTED);
    await clock.advance(1000); // the reconnect, then the background retry after its 1 s pace
    await reconnected;
    expect(client.pendingDeletes).toEqual([]);
    expect(await client.exists('/g')).toBeNull();
  });
});
