/** Protected creates (Curator's withProtection) under lost replies. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import {
  ConnectionLossError,
  ConnectionState,
  CreateMode,
  RetryPolicies,
  newProtectedId,
  protectedIdOf,
  unprotectedName,
  type Client,
} from '../src/index.js';
import { childrenUntil } from '@tenure/testing';
import { connect, startServer } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function open(opts: Parameters<typeof connect>[1] = {}) {
  const r = await connect(server, opts);
  clients.push(r.client);
  return r;
}

const NAME = /^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\d{10}$/;

describe('protected create', () => {
  it('names the node _c_<uuid>-<name>', async () => {
    server = startServer();
    const { client } = await open();
    await client.create('/locks');
    const r = await client.create('/locks/lock-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL, protection: true });
    const name = r.path.slice('/locks/'.length);
    expect(name).toMatch(NAME);
    expect(unprotectedName(name)).toMatch(/^lock-\d{10}$/);
    expect(protectedIdOf(name)).toHaveLength(36);
    expect(r.stat.ephemeralOwner).toBe(client.sessionId);
  });

  it('loseNextReply on an ephemeral-sequential create leaves exactly one node, and it is ours', async () => {
    server = startServer();
    const { client, states } = await open();
    await client.create('/locks');
    server.loseNextReply(client.sessionId);
    const r = await client.create('/locks/lock-', 'payload', { mode: CreateMode.EPHEMERAL_SEQUENTIAL, protection: true });
    expect(states).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED, ConnectionState.RECONNECTED]);
    const { children } = await client.getChildren('/locks');
    expect(children).toHaveLength(1);
    expect('/locks/' + children[0]).toBe(r.path);
    expect(children[0]).toMatch(NAME);
    const { data, stat } = await client.getData(r.path);
    expect(stat.ephemeralOwner).toBe(client.sessionId);
    expect(data.toString()).toBe('payload');
    expect(r.stat.czxid).toBe(stat.czxid);
  });

  it("without protection, Curator's blind retry (retryAmbiguousWrites: 'raw') leaves a duplicate (what protection is for)", async () => {
    server = startServer();
    const { client } = await open({ retryAmbiguousWrites: 'raw' });
    await client.create('/q');
    server.loseNextReply(client.sessionId);
    await client.create('/q/item-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    expect((await client.getChildren('/q')).children).toHaveLength(2);
  });

  it('without protection, by default: an ephemeral sequential is not sent again; its node (ours, newer) is found', async () => {
    server = startServer();
    const { client } = await open();
    await client.create('/q');
    server.loseNextReply(client.sessionId);
    const r = await client.create('/q/item-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    expect((await client.getChildren('/q')).children).toEqual([r.path.slice('/q/'.length)]);
  });

  it('a protected node found under another session is deleted, not adopted', async () => {
    server = startServer();
    const { client: other } = await open();
    const { client } = await open();
    await client.create('/p');
    const id = newProtectedId();
    // Another session holds an ephemeral with our prefix (say, a previous session of ours).
    await other.create(`/p/_c_${id}-node`, null, { mode: CreateMode.EPHEMERAL });
    server.loseNextReply(client.sessionId);
    const r = await client.create('/p/node', 'ours', { mode: CreateMode.EPHEMERAL, protection: id });
    expect(r.path).toBe(`/p/_c_${id}-node`);
    const stat = await client.exists(r.path);
    expect(stat!.ephemeralOwner).toBe(client.sessionId);
    expect((await client.getChildren('/p')).children).toEqual([`_c_${id}-node`]);
  });

  it('a protected create that finally fails deletes its orphan in the background', async () => {
    server = startServer();
    const { client } = await open({ retryPolicy: RetryPolicies.none() });
    await client.create('/o');
    server.loseNextReply(client.sessionId);
    await expect(client.create('/o/n-', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL, protection: true })).rejects.toBeInstanceOf(
      ConnectionLossError,
    );
    // The create landed on the server; the clean-up finds it by its prefix and deletes it.
    await childrenUntil(client, '/o', (kids) => kids.length === 0, { timeoutMs: 5000 }); // the orphan deleted
  });

  it('a given protected id must be a UUID', async () => {
    server = startServer();
    const { client } = await open();
    await expect(client.create('/x', null, { protection: 'not-a-uuid' })).rejects.toMatchObject({ name: 'BadArgumentsError' });
  });

  it('a protected create with parents and a namespace', async () => {
    server = startServer();
    const { client } = await open();
    const app = client.usingNamespace('app');
    server.loseNextReply(client.sessionId);
    const r = await app.create('/a/b/m-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL, protection: true, createParentContainers: true });
    expect(r.path.startsWith('/a/b/_c_')).toBe(true);
    expect((await app.getChildren('/a/b')).children).toHaveLength(1);
    expect(await client.exists('/app' + r.path)).not.toBeNull();
  });
});
