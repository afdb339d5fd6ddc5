/** The recipe kit: closedSignal, the waiting primitive, tracked watches, backoff from the policy, logger. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import {
  AbortError,
  ClosedError,
  RetryPolicies,
  TimeoutError,
  backoffMs,
  createClient,
  type Client,
  type Logger,
  type WatchEvent,
  InvalidArgumentError,
} from '../src/index.js';
import { connect, countingClock, startServer } from './harness.js';

let server: EmbeddedServer;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function open(opts: Parameters<typeof connect>[1] = {}): Promise<Client> {
  const { client } = await connect(server, opts);
  clients.push(client);
  return client;
}

describe('closedSignal', () => {
  it('exists before start(), is one object for the whole life, and aborts with ClosedError at close', async () => {
    server = startServer();
    const client = createClient({ transport: server.transport(), sessionTimeoutMs: 1000 });
    const signal = client.closedSignal;
    expect(signal.aborted).toBe(false);
    await client.start();
    expect(client.closedSignal).toBe(signal);
    expect(client.usingNamespace('app').closedSignal).toBe(signal);
    expect(client.trackingWatches().closedSignal).toBe(signal);
    const closing = client.close();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(ClosedError);
    await closing;
    expect(client.closedSignal).toBe(signal);
  });

  it('aborts on a client closed without ever starting', async () => {
    server = startServer();
    const client = createClient({ transport: server.transport() });
    await client.close();
    expect(client.closedSignal.reason).toBeInstanceOf(ClosedError);
  });
});

describe('the waiting primitive', () => {
  it('rejects with TimeoutError on the client clock, AbortError for the caller, ClosedError at close', async () => {
    server = startServer();
    const client = await open();
    const never = new Promise<never>(() => {});
    await expect(client.wait(never, { timeoutMs: 30 }, 'test wait')).rejects.toBeInstanceOf(TimeoutError);
    const ac = new AbortController();
    const aborted = client.wait(never, { signal: ac.signal }, 'test wait');
    ac.abort('why');
    await expect(aborted).rejects.toBeInstanceOf(AbortError);
    const closing = client.wait(
      (signal) => new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error))),
      {},
      'test wait',
    );
    await client.close();
    await expect(closing).rejects.toBeInstanceOf(ClosedError);
  });

  it('passes a typed reason through, resolves with the task, and leaves no timer behind', async () => {
    server = startServer();
    const clock = countingClock();
    const client = await open({ clock });
    const base = clock.live();
    await expect(client.wait(Promise.resolve(7), { timeoutMs: 60_000 }, 'quick')).resolves.toBe(7);
    const outer = client.waitScope({ timeoutMs: 20 }, 'outer');
    await expect(client.wait(new Promise(() => {}), { signal: outer.signal }, 'inner')).rejects.toBeInstanceOf(TimeoutError);
    outer.dispose();
    expect(clock.live()).toBe(base);
    expect(() => client.waitScope({ timeoutMs: -1 }, 'bad')).toThrow(InvalidArgumentError);
  });
});

describe('trackingWatches', () => {
  it('removeAllWatches takes back every watch set through the view, on the server too, and no other', async () => {
    server = startServer();
    const client = await open();
    await client.create('/a', 'x');
    await client.create('/b', 'x');
    const tracked = client.trackingWatches().usingNamespace(null);
    const events: WatchEvent[] = [];
    const cb = (e: WatchEvent): void => void events.push(e);
    await tracked.getData('/a', { watch: cb });
    await tracked.exists('/missing', { watch: cb });
    await tracked.getChildren('/a', { watch: cb });
    const persistent = await tracked.addWatch('/b', { recursive: true });
    const mine = (): void => {};
    await client.getData('/b', { watch: mine }); // not tracked: stays
    expect(tracked.trackedWatchCount).toBe(4);
    expect(server.watchCounts().get(client.sessionId)).toBe(5);
    await tracked.removeAllWatches();
    expect(persistent.closed).toBe(true);
    expect(events.map((e) => e.type).sort()).toEqual(['ChildWatchRemoved', 'DataWatchRemoved', 'DataWatchRemoved']);
    expect(tracked.trackedWatchCount).toBe(0);
    await client.sync('/'); // answered after the removals
    expect(server.watchCounts().get(client.sessionId)).toBe(1);
    await client.setData('/a', 'y'); // nothing fires for the removed watch
    expect(events).toHaveLength(3);
  });

  it('forgets watches that fired, so a long-lived tracker does not grow', async () => {
    server = startServer();
    const client = await open();
    await client.create('/n', '0');
    const tracked = client.trackingWatches();
    for (let i = 0; i < 200; i++) {
      let fired!: () => void;
      const done = new Promise<void>((r) => (fired = r));
      await tracked.getData('/n', { watch: () => fired() });
      await client.setData('/n', String(i));
      await done;
    }
    expect(tracked.trackedWatchCount).toBe(0);
    await tracked.removeAllWatches();
  });
});

describe('backoff from the retry policy', () => {
  it('gives the delay for attempt n, never gives up, and keeps the last range once retries are spent', () => {
    expect(backoffMs(RetryPolicies.nTimes(3, 40), 10)).toBe(40);
    expect(backoffMs(RetryPolicies.none(), 0)).toBeGreaterThan(0);
    const p = RetryPolicies.exponentialBackoff(10, 3, 1000);
    for (let n = 0; n < 50; n++) {
      const ms = backoffMs(p, n);
      expect(ms).toBeGreaterThanOrEqual(10);
      expect(ms).toBeLessThanOrEqual(10 * 2 ** Math.min(n + 1, 3));
    }
    // A policy of one's own, without delayMs: paced by what allowRetry allowed last.
    const own = { allowRetry: (n: number) => (n < 2 ? 100 * (n + 1) : false) };
    expect(backoffMs(own, 0)).toBe(100);
    expect(backoffMs(own, 9)).toBe(200);
  });

  it('is the client policy by default', async () => {
    server = startServer();
    const client = await open({ retryPolicy: RetryPolicies.forever(33) });
    expect(client.backoffMs(5)).toBe(33);
    expect(client.backoffMs(5, RetryPolicies.oneTime(7))).toBe(7);
  });
});

describe('logger and hosts', () => {
  it('exposes the injected logger and children of it', async () => {
    server = startServer();
    const lines: Array<Record<string, unknown>> = [];
    const make = (bindings: Record<string, unknown>): Logger => {
      const log = (obj: object | string): void => void lines.push({ ...bindings, ...(typeof obj === 'string' ? { msg: obj } : obj) });
      return { trace: log, debug: log, info: log, warn: log, error: log, child: (b) => make({ ...bindings, ...b }) };
    };
    const logger = make({});
    const client = await open({ logger });
    expect(client.logger).toBe(logger);
    client.childLogger({ recipe: 'test' }).warn({ x: 1 }, 'hello');
    expect(lines.at(-1)).toMatchObject({ recipe: 'test', x: 1 });
    expect(client.hosts.length).toBeGreaterThan(0);
  });
});
