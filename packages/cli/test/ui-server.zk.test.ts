/**
 * The `tenure ui` page server against a real ZooKeeper 3.8: its one persistent recursive watch
 * pushes a lock hand-over and a leader change as server-sent events, and the sessions come from
 * ZooKeeper's own `cons` / `dump`.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, RetryPolicies, type Client } from '@tenure/client';
import { LeaderLatch } from '@tenure/leader';
import { Mutex } from '@tenure/locks';
import { EventLog, realZooKeeper, TestingServer } from '@tenure/testing';
import { sessionHex, startUi } from '../src/index.js';
import type { Overview, UiStatus } from '../src/ui/index.js';

const zk = realZooKeeper();

/** The overviews a page would receive, from /api/events. */
function listen(url: string): { overviews: EventLog<Overview>; close(): void } {
  const overviews = new EventLog<Overview>();
  const req = request(`${url}api/events`, (res) => {
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (/^event: overview$/m.test(block)) overviews.push(JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as Overview);
      }
    });
  });
  req.on('error', () => {});
  req.end();
  return { overviews, close: () => req.destroy() };
}

describe.skipIf(!zk.available)('tenure ui on ZooKeeper 3.8', () => {
  let server: TestingServer;
  const clients: Client[] = [];
  async function open(): Promise<Client> {
    const c = createClient({
      connectString: server.connectString,
      sessionTimeoutMs: 6000,
      retryPolicy: RetryPolicies.exponentialBackoff(20, 5, 200),
    });
    clients.push(c);
    await c.start();
    return c;
  }
  beforeAll(async () => {
    server = await TestingServer.start();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server?.close();
  });

  it('pushes the lock hand-over and the leader change within 2 s; sessions from cons and dump', async () => {
    const [a, b, alphaClient, betaClient] = [await open(), await open(), await open(), await open()];
    const holder = await new Mutex(a, '/locks/orders', { data: 'holder-A' }).acquire();
    const waiter = new Mutex(b, '/locks/orders', { data: 'waiter-B' }).acquire();
    const alpha = new LeaderLatch(alphaClient, '/election', { id: 'alpha' });
    await alpha.start();
    await alpha.await({ timeoutMs: 5000 });
    const beta = new LeaderLatch(betaClient, '/election', { id: 'beta' });
    await beta.start();

    await using ui = await startUi({ client: await open(), connectString: server.connectString, port: 0 });
    const status = await new Promise<UiStatus>((resolve, reject) =>
      request(`${ui.url}api/status`, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(JSON.parse(body) as UiStatus));
      })
        .on('error', reject)
        .end(),
    );
    expect(status.live).toBe('push');
    const feed = listen(ui.url);
    try {
      const latest = (): Overview | undefined => feed.overviews.at(-1);
      const holderOf = (o?: Overview) => o?.report?.locks.find((l) => l.path === '/locks/orders')?.holder?.data.value;
      const leaderOf = (o?: Overview) => o?.report?.elections.find((e) => e.path === '/election')?.leader?.id;
      await feed.overviews.until(() => holderOf(latest()) === 'holder-A' && leaderOf(latest()) === 'alpha');
      const sessions = latest()!.sessions!;
      expect(sessions.source).toBe('four-letter-words');
      expect(
        sessions.sessions.find((s) => s.sessionId === sessionHex(a.sessionId))?.ephemerals.some((p) => p.startsWith('/locks/orders/')),
      ).toBe(true);

      const t0 = performance.now();
      await holder.release();
      await feed.overviews.until(() => holderOf(latest()) === 'waiter-B', { timeoutMs: 2000 }); // waiter-B holds
      const t1 = performance.now();
      await alpha.close();
      await feed.overviews.until(() => leaderOf(latest()) === 'beta', { timeoutMs: 2000 }); // beta leads
      console.log(
        `ZooKeeper 3.8: hand-over pushed in ${Math.round(t1 - t0)} ms, leader change in ${Math.round(performance.now() - t1)} ms`,
      );
    } finally {
      feed.close();
      await (await waiter).release();
      await beta.close();
    }
  });
});
