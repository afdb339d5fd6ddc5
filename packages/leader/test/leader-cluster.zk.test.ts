/**
 * At most one leader when the leader's ZooKeeper server is killed (SIGKILL) in a 3-node ensemble.
 * The leader's client is suspended (its term ends under the standard policy), moves to a live
 * server within its session timeout and resumes on the same node with the same token; nobody else
 * leads meanwhile. Then the server comes back, and the next kill may hit the quorum's leader.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient, RetryPolicies, type Client } from '@tenure/client';
import { TestingCluster, realZooKeeper } from '@tenure/testing';
import { LeaderLatch } from '../src/index.js';
import { aborted } from './harness.js';
import { LeadershipRecorder } from './recorder.js';

const zk = realZooKeeper();

describe.skipIf(!zk.available)("at most one leader when the leader's server dies (3-node ZooKeeper 3.8)", () => {
  let cluster: TestingCluster;
  const clients: Client[] = [];
  const latches: LeaderLatch[] = [];

  beforeAll(async () => {
    cluster = await TestingCluster.start({ size: 3 });
  });
  afterAll(async () => {
    await Promise.all(latches.map((l) => l.close()));
    await Promise.all(clients.map((c) => c.close()));
    await cluster?.close();
  });

  test("kill the leader participant's server three times: its term ends, then resumes on the same node; no one else leads meanwhile", async () => {
    const recorder = new LeadershipRecorder();
    for (let i = 0; i < 4; i++) {
      const client = createClient({
        connectString: cluster.connectString,
        sessionTimeoutMs: 4000,
        connectionTimeoutMs: 8000,
        retryPolicy: RetryPolicies.exponentialBackoff(50, 10, 500),
      });
      clients.push(client);
      await client.start();
      const latch = new LeaderLatch(client, '/amo/cluster', { id: `p${i}`, closeMode: 'notifyLeader' });
      recorder.attach(`p${i}`, latch);
      latches.push(latch);
      await latch.start();
    }
    const leader = latches[0]!;
    expect(leader.hasLeadership()).toBe(true);
    const token = leader.leadership!.fencingToken;
    const path = leader.ourPath;
    for (let round = 0; round < 3; round++) {
      const n = cluster.serverOf(leader.client);
      expect(n).toBeGreaterThanOrEqual(0);
      const term = leader.leadership!;
      await cluster.killServer(n);
      await aborted(term.signal); // the leader's term ends as its client is suspended
      const again = await leader.await({ timeoutMs: 20_000 });
      expect(again.fencingToken).toBe(token);
      expect(leader.ourPath).toBe(path);
      expect(cluster.serverOf(leader.client)).not.toBe(n);
      await cluster.restartServer(n);
      recorder.assertSafe();
    }
    // Nobody else ever led, and every participant agrees.
    expect(new Set(recorder.terms.map((t) => t.who))).toEqual(new Set(['p0']));
    for (const l of latches) expect((await l.getLeader())!.id).toBe('p0');
    expect(recorder.terms.length).toBeGreaterThanOrEqual(4);
  }, 120_000);
});
