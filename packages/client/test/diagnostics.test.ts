/** The diagnostics channels: tenure:client:request (a TracingChannel) and tenure:client:state. */
import diagnostics_channel from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import {
  ConnectionState,
  CreateMode,
  NoNodeError,
  REQUEST_CHANNEL,
  STATE_CHANNEL,
  WatcherType,
  requestChannel,
  stateChannel,
  type Client,
  type RequestMessage,
  type StateMessage,
} from '../src/index.js';
import { connect, startServer } from './harness.js';

const { CONNECTED, SUSPENDED, RECONNECTED, LOST } = ConnectionState;

let server: EmbeddedServer;
const clients: Client[] = [];
const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const undo of cleanups.splice(0)) undo();
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function open(opts: Parameters<typeof connect>[1] = {}): Promise<Client> {
  const { client } = await connect(server, opts);
  clients.push(client);
  return client;
}

type Hook = 'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error';

/** Records every request event as [hook, op, path] plus the message; unsubscribed after the test. */
function recordRequests(): { events: Array<[Hook, string, string | undefined]>; messages: RequestMessage[] } {
  const events: Array<[Hook, string, string | undefined]> = [];
  const messages: RequestMessage[] = [];
  const on =
    (hook: Hook) =>
    (m: RequestMessage): void => {
      events.push([hook, m.op, m.path]);
      if (!messages.includes(m)) messages.push(m);
    };
  const subscribers = { start: on('start'), end: on('end'), asyncStart: on('asyncStart'), asyncEnd: on('asyncEnd'), error: on('error') };
  requestChannel.subscribe(subscribers);
  cleanups.push(() => requestChannel.unsubscribe(subscribers));
  return { events, messages };
}

describe('tenure:client:request', () => {
  it('is the TracingChannel of that name, silent while nobody subscribes', () => {
    expect(REQUEST_CHANNEL).toBe('tenure:client:request');
    expect(diagnostics_channel.tracingChannel(REQUEST_CHANNEL).start).toBe(requestChannel.start);
    expect(requestChannel.hasSubscribers).toBe(false);
  });

  it('a successful operation: start, end, asyncStart, asyncEnd, with op, path and result', async () => {
    server = startServer();
    const client = await open();
    await client.create('/a', 'x');
    const { events, messages } = recordRequests();
    const got = await client.getData('/a');
    expect(events).toEqual([
      ['start', 'getData', '/a'],
      ['end', 'getData', '/a'],
      ['asyncStart', 'getData', '/a'],
      ['asyncEnd', 'getData', '/a'],
    ]);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.result).toBe(got);
    expect(messages[0]!.error).toBeUndefined();
  });

  it('a NoNode: error then asyncEnd, with the error and its code in the message', async () => {
    server = startServer();
    const client = await open();
    const { events, messages } = recordRequests();
    await expect(client.getData('/none')).rejects.toBeInstanceOf(NoNodeError);
    expect(events.map(([hook]) => hook)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(messages[0]).toMatchObject({ op: 'getData', path: '/none', code: 'NONODE' });
    expect(messages[0]!.error).toBeInstanceOf(NoNodeError);
    expect(messages[0]!.result).toBeUndefined();
  });

  it('traces every public operation, in the caller’s namespace', async () => {
    server = startServer();
    const root = await open();
    const client = root.usingNamespace('app');
    const { events } = recordRequests();
    await client.create('/n', 'x', { createParents: true });
    await client.exists('/n');
    await client.getData('/n');
    await client.setData('/n', 'y');
    await client.getChildren('/');
    await client.getACL('/n');
    await client.setACL('/n', (await client.getACL('/n')).acl);
    await client.getAllChildrenNumber('/');
    await client.getEphemerals();
    await client.multiRead([{ type: 'getData', path: '/n' }]);
    await client.whoAmI();
    await client.sync('/n');
    await client.transaction().setData('/n', 'z').commit();
    await client.addAuth('digest', 'u:p');
    const w = await client.addWatch('/n');
    await client.removeWatches('/n', WatcherType.Persistent);
    await w.close();
    await client.delete('/n');
    const ops = events.filter(([hook]) => hook === 'asyncEnd').map(([, op, path]) => `${op} ${path ?? '-'}`);
    expect(ops).toEqual([
      'create /n',
      'exists /n',
      'getData /n',
      'setData /n',
      'getChildren /',
      'getACL /n',
      'getACL /n',
      'setACL /n',
      'getAllChildrenNumber /',
      'getEphemerals /',
      'multiRead -',
      'whoAmI -',
      'sync /n',
      'transaction -',
      'addAuth -',
      'addWatch /n',
      'removeWatches /n',
      'delete /n',
    ]);
    // Each operation's start comes before its end events, with no interleaving here.
    expect(events.filter(([hook]) => hook === 'start')).toHaveLength(ops.length);
  });

  it('carries the server, the session and the data size; start runs in the caller’s async context', async () => {
    server = startServer();
    const client = await open();
    const { AsyncLocalStorage } = await import('node:async_hooks');
    const store = new AsyncLocalStorage<string>();
    const seenAtStart: Array<string | undefined> = [];
    const onStart = (): void => void seenAtStart.push(store.getStore());
    requestChannel.start.subscribe(onStart);
    cleanups.push(() => requestChannel.start.unsubscribe(onStart));
    const { messages } = recordRequests();
    await store.run('caller-1', async () => {
      await client.create('/sized', 'héllo');
      await client.setData('/sized', Buffer.alloc(7));
    });
    await store.run('caller-2', () => client.getData('/sized'));
    await expect(client.getData('/missing')).rejects.toBeInstanceOf(NoNodeError);
    expect(seenAtStart).toEqual(['caller-1', 'caller-1', 'caller-2', undefined]);
    const server1 = client.connectedServer;
    expect(server1).toBeTruthy(); // host:port over TCP, the transport’s name in process
    expect(messages.map((m) => [m.op, m.size, m.server, m.sessionId])).toEqual([
      ['create', 6, server1, client.sessionId],
      ['setData', 7, server1, client.sessionId],
      ['getData', 7, server1, client.sessionId],
      ['getData', undefined, server1, client.sessionId],
    ]);
  });

  it('a rejection that is not a KeeperError is named by the error', async () => {
    server = startServer();
    const client = await open();
    const { messages } = recordRequests();
    await expect(client.getData('/x', { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    await expect(client.create('bad')).rejects.toMatchObject({ name: 'InvalidPathError' });
    expect(messages.map((m) => m.code)).toEqual(['AbortError', 'InvalidPathError']);
  });
});

describe('tenure:client:state', () => {
  it('publishes every state change with previous and sessionId: CONNECTED, SUSPENDED, RECONNECTED, LOST', async () => {
    server = startServer();
    const seen: StateMessage[] = [];
    const onState = (m: unknown): void => void seen.push(m as StateMessage);
    diagnostics_channel.subscribe(STATE_CHANNEL, onState);
    cleanups.push(() => diagnostics_channel.unsubscribe(STATE_CHANNEL, onState));
    expect(stateChannel.hasSubscribers).toBe(true);

    const client = await open({ sessionTimeoutMs: 600 });
    const first = client.sessionId;
    await client.create('/e', null, { mode: CreateMode.EPHEMERAL });
    server.dropConnection(first);
    await client.waitForState(SUSPENDED, { timeoutMs: 2000 });
    await client.waitForState(RECONNECTED, { timeoutMs: 2000 });
    expect(client.sessionId).toBe(first);
    server.silence(first, 3000);
    await client.waitForState(LOST, { timeoutMs: 3000 });
    await client.waitForState(RECONNECTED, { timeoutMs: 5000 });
    expect(seen).toEqual([
      { state: CONNECTED, previous: null, sessionId: first },
      { state: SUSPENDED, previous: CONNECTED, sessionId: first },
      { state: RECONNECTED, previous: SUSPENDED, sessionId: first },
      { state: SUSPENDED, previous: RECONNECTED, sessionId: first },
      { state: LOST, previous: SUSPENDED, sessionId: first },
      { state: RECONNECTED, previous: LOST, sessionId: client.sessionId },
    ]);
    expect(client.sessionId).not.toBe(first);
  });
});
