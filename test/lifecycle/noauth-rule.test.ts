/**
 * The kit's one NoAuth rule, recipe by recipe (Curator's): a NoAuth is not retried; the recipe
 * reports it through its error path and stops that work, and close() still releases everything.
 * A fast retry policy would make a retrying recipe report again and again within the pause below.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { NoAuthError, Perms, RetryPolicies, silentLogger, type Client, type Logger } from '@tenure/client';
import { PersistentNode } from '@tenure/nodes';
import { TreeCache } from '@tenure/cache';
import { LeaderLatch, LeaderSelector } from '@tenure/leader';
import { DistributedQueue } from '@tenure/queues';
import { EventLog, TestClients, sleep, startTestServer } from '@tenure/testing';
import type { EmbeddedServer } from '@tenure/server';

const anyone = { scheme: 'world', id: 'anyone' };
/** Long enough for a retrying recipe (10 ms pauses) to have tried many times. */
const QUIET_MS = 300;

let server: EmbeddedServer;
let clients: TestClients;
afterEach(async () => {
  await clients?.closeAll();
  await server?.close();
});

async function open(): Promise<Client> {
  server = startTestServer();
  clients = new TestClients(() => server.transport());
  const client = await clients.open({ retryPolicy: RetryPolicies.forever(10) });
  await client.create('/sealed', null, { acl: [{ perms: Perms.READ, id: anyone }] }); // no CREATE below it
  await client.create('/hidden', null, { acl: [{ perms: Perms.CREATE | Perms.WRITE | Perms.DELETE, id: anyone }] }); // no READ
  return client;
}

function errorsOf(emitter: { on(event: 'error', fn: (e: Error) => void): unknown }): EventLog<Error> {
  const errors = new EventLog<Error>();
  emitter.on('error', (e) => errors.push(e));
  return errors;
}

async function reportedOnce(errors: EventLog<Error>): Promise<void> {
  await errors.atLeast(1, { timeoutMs: 3000 }); // the NoAuth is reported
  await sleep(QUIET_MS);
  expect(errors).toHaveLength(1);
  expect(errors[0]).toBeInstanceOf(NoAuthError);
}

describe('NoAuth is reported once and stops that work', () => {
  it('PersistentNode stops keeping its node; waitForInitialCreate rejects with it', async () => {
    const client = await open();
    await using node = new PersistentNode(client, { path: '/sealed/member' });
    const errors = errorsOf(node);
    await node.start();
    await expect(node.waitForInitialCreate({ timeoutMs: 3000 })).rejects.toBeInstanceOf(NoAuthError);
    await reportedOnce(errors);
  });

  it('TreeCache stops reading that path and still initializes', async () => {
    const client = await open();
    await using cache = new TreeCache(client, '/hidden');
    const errors = errorsOf(cache);
    await cache.start({ timeoutMs: 3000 });
    await reportedOnce(errors);
    expect(cache.state).toBe('started');
  });

  it('LeaderLatch stops trying to join; start() rejects with it', async () => {
    const client = await open();
    await using latch = new LeaderLatch(client, '/sealed/election');
    const errors = errorsOf(latch);
    await expect(latch.start({ timeoutMs: 3000 })).rejects.toBeInstanceOf(NoAuthError);
    await reportedOnce(errors);
    await expect(latch.await({ timeoutMs: 100 })).rejects.toBeInstanceOf(NoAuthError);
  });

  it('LeaderSelector (autoRequeue) does not queue again', async () => {
    const client = await open();
    await using selector = new LeaderSelector(client, '/sealed/jobs', { autoRequeue: true, takeLeadership: () => {} });
    const errors = errorsOf(selector);
    await selector.start();
    await reportedOnce(errors);
  });

  it("a queue's consumer stops (logged as an error)", async () => {
    const client = await open();
    const logged = new EventLog<unknown>();
    const logger: Logger = {
      ...silentLogger,
      warn: (obj: unknown) => void logged.push(obj),
      error: (obj: unknown) => void logged.push(obj),
    };
    await using queue = new DistributedQueue(client, '/hidden', { consumer: async () => {}, logger });
    await queue.start();
    await logged.atLeast(1, { timeoutMs: 3000 }); // the NoAuth is logged
    await sleep(QUIET_MS);
    expect(logged).toHaveLength(1);
    expect((logged[0] as { err: unknown }).err).toBeInstanceOf(NoAuthError);
  });
});
