/**
 * Recipes pace their retries with the kit's RetryPacer: the retry policy's pause, on the client's
 * clock, so a ManualClock drives it (no retry runs before its time, and each runs at it).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CreateMode, RetryPolicies, type Client } from '@tenure/client';
import { PersistentNode } from '@tenure/nodes';
import { LeaderLatch } from '@tenure/leader';
import { ManualClock, TestClients, eventually, settle, startTestServer } from '@tenure/testing';
import type { EmbeddedServer } from '@tenure/server';

const PAUSE_MS = 250;

let server: EmbeddedServer;
let clients: TestClients;
afterEach(async () => {
  await clients?.closeAll();
  await server?.close();
});

async function open(clock: ManualClock): Promise<Client> {
  server = startTestServer();
  clients = new TestClients(() => server.transport());
  const client = await clients.open({ clock, sessionTimeoutMs: 30_000, retryPolicy: RetryPolicies.forever(PAUSE_MS) });
  // Children of an ephemeral are refused (NoChildrenForEphemerals): a failure the recipes report and retry.
  await client.create('/eph', null, { mode: CreateMode.EPHEMERAL });
  return client;
}

async function expectPaced(clock: ManualClock, attempts: () => number): Promise<void> {
  await eventually(() => attempts() === 1, 3000, 'the first attempt failed');
  for (let n = 1; n <= 3; n++) {
    await clock.advance(PAUSE_MS - 1);
    await settle();
    expect(attempts()).toBe(n); // not before its time
    await clock.advance(1);
    await eventually(() => attempts() === n + 1, 3000, `retry ${n} at ${PAUSE_MS} ms`);
  }
}

describe("retries go at the retry policy's pace, on the client's clock", () => {
  it('PersistentNode', async () => {
    const clock = new ManualClock();
    const client = await open(clock);
    await using node = new PersistentNode(client, { path: '/eph/child', mode: CreateMode.PERSISTENT });
    let errors = 0;
    node.on('error', () => errors++);
    await node.start();
    await expectPaced(clock, () => errors);
  });

  it('LeaderLatch', async () => {
    const clock = new ManualClock();
    const client = await open(clock);
    await using latch = new LeaderLatch(client, '/eph/election');
    let errors = 0;
    latch.on('error', () => errors++);
    void latch.start().catch(() => {});
    await expectPaced(clock, () => errors);
  });
});
