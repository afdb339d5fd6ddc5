/**
 * TenureInstrumentation against an embedded server over TCP, with the SDK's in-memory exporters:
 * operation spans under the caller's span, errors, a contended Mutex's wait span, leadership
 * terms, queue items, and every metric.
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, NoNodeError, requestChannel, stateChannel, type Client } from '@tenure/client';
import { groupMembersChannel, GroupMember } from '@tenure/group';
import { LeaderLatch, LeaderSelector, leaderStateChannel } from '@tenure/leader';
import { acquireChannel, Mutex, Semaphore } from '@tenure/locks';
import { DistributedQueue, itemChannel } from '@tenure/queues';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { nextEvent } from '@tenure/testing';
import * as N from '../src/names.js';
import { countOf, durationMs, points, startTelemetry, type Telemetry } from './harness.js';

let server: EmbeddedServer;
let connectString: string;
let telemetry: Telemetry;
const clients: Client[] = [];

beforeAll(async () => {
  server = createEmbeddedServer();
  connectString = (await server.listen({ port: 0, host: '127.0.0.1' })).connectString;
  telemetry = startTelemetry();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await telemetry.shutdown();
  await server.close();
});

async function open(): Promise<Client> {
  const client = createClient({ connectString, sessionTimeoutMs: 10_000 });
  clients.push(client);
  await client.start();
  return client;
}

const tracer = (): ReturnType<typeof trace.getTracer> => telemetry.tracerProvider.getTracer('test');
const named = (name: string): ReadableSpan[] => telemetry.spans().filter((s) => s.name === name);
const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;

describe('operation spans', () => {
  it('getData under a parent span: a CLIENT child span, across await, with path, server, session and size', async () => {
    const client = await open();
    await client.create('/config', 'twelve bytes');
    telemetry.reset();
    const parentId = await tracer().startActiveSpan('handle request', async (parent) => {
      await new Promise((r) => setTimeout(r, 5)); // the context survives an await before the call
      await client.getData('/config');
      parent.end();
      return parent.spanContext().spanId;
    });
    const [span] = named('zookeeper getData');
    expect(span).toBeDefined();
    expect(span!.kind).toBe(SpanKind.CLIENT);
    expect(parentOf(span!)).toBe(parentId);
    const port = Number(connectString.split(':')[1]);
    expect(span!.attributes).toEqual({
      [N.ATTR_OPERATION]: 'getData',
      [N.ATTR_PATH]: '/config',
      [N.ATTR_SERVER_ADDRESS]: '127.0.0.1',
      [N.ATTR_SERVER_PORT]: port,
      [N.ATTR_SESSION_ID]: `0x${BigInt.asUintN(64, client.sessionId).toString(16).padStart(16, '0')}`, // signed on the wire
      [N.ATTR_DATA_SIZE]: 12,
    });
    expect(span!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('a NoNode: status ERROR, the exception recorded, error.type NONODE', async () => {
    const client = await open();
    telemetry.reset();
    await expect(client.getData('/missing')).rejects.toBeInstanceOf(NoNodeError);
    const [span] = named('zookeeper getData');
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.attributes[N.ATTR_ERROR_TYPE]).toBe('NONODE');
    const exception = span!.events.find((e) => e.name === 'exception');
    // The SDK names an exception by its string code when it has one (a TenureError's 'NONODE').
    expect(exception?.attributes).toMatchObject({ 'exception.type': 'NONODE', 'exception.message': expect.stringContaining('/missing') });
    // exists answering null is a result, not an error.
    await client.exists('/missing');
    expect(named('zookeeper exists')[0]!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('each operation is one span named zookeeper <op>; create and setData carry the bytes written', async () => {
    const client = await open();
    telemetry.reset();
    await client.create('/ops', 'abc');
    await client.setData('/ops', Buffer.alloc(5));
    await client.getChildren('/');
    await client.transaction().delete('/ops').commit();
    expect(telemetry.spans().map((s) => [s.name, s.attributes[N.ATTR_DATA_SIZE]])).toEqual([
      ['zookeeper create', 3],
      ['zookeeper setData', 5],
      ['zookeeper getChildren', undefined],
      ['zookeeper transaction', undefined],
    ]);
  });
});

describe('recipe spans', () => {
  it('a contended Mutex: a `tenure lock acquire` span as long as the wait, under the caller’s span', async () => {
    const [a, b] = [await open(), await open()];
    const holder = await new Mutex(a, '/locks/orders').acquire();
    telemetry.reset();
    const waiter = new Mutex(b, '/locks/orders');
    const releaseAfter = 300;
    const timer = setTimeout(() => void holder.release(), releaseAfter);
    const { waitMs, parentId, lease } = await tracer().startActiveSpan('job', async (parent) => {
      const started = performance.now();
      const lease = await waiter.acquire({ timeoutMs: 10_000 });
      const waitMs = performance.now() - started;
      parent.end();
      return { waitMs, parentId: parent.spanContext().spanId, lease };
    });
    clearTimeout(timer);
    const [span] = named(N.SPAN_LOCK_ACQUIRE);
    expect(parentOf(span!)).toBe(parentId);
    expect(waitMs).toBeGreaterThanOrEqual(releaseAfter - 5);
    expect(Math.abs(durationMs(span!) - waitMs)).toBeLessThanOrEqual(20);
    expect(span!.attributes).toMatchObject({
      [N.ATTR_LOCK_KIND]: 'mutex',
      [N.ATTR_LOCK_PATH]: '/locks/orders',
      [N.ATTR_LOCK_NODE]: lease.path,
      [N.ATTR_FENCING_TOKEN]: lease.fencingToken.toString(),
    });
    // The lock's own ZooKeeper calls are traced too, under the same caller.
    expect(named('zookeeper create').some((s) => parentOf(s) === parentId)).toBe(true);
    await lease.release();

    const wait = points(await telemetry.metric(N.METRIC_LOCK_WAIT_DURATION)).find(
      (p) => p.attributes[N.ATTR_LOCK_PATH] === '/locks/orders' && p.attributes[N.ATTR_LOCK_OUTCOME] === 'acquired',
    );
    expect(countOf(wait?.value)).toBeGreaterThanOrEqual(1); // the holder's acquire came before the reset
    expect((wait!.value as { max: number }).max).toBeGreaterThanOrEqual((releaseAfter - 5) / 1000);
    const hold = points(await telemetry.metric(N.METRIC_LOCK_HOLD_DURATION)).find(
      (p) => p.attributes[N.ATTR_LOCK_PATH] === '/locks/orders',
    );
    expect(countOf(hold?.value)).toBe(2); // the holder's ~300 ms, the waiter's short hold
    expect((hold!.value as { max: number }).max).toBeGreaterThanOrEqual((releaseAfter - 5) / 1000);
  });

  it('a failed wait (timeout) ends its span with status ERROR', async () => {
    const [a, b] = [await open(), await open()];
    const holder = await new Mutex(a, '/locks/busy').acquire();
    telemetry.reset();
    await expect(new Mutex(b, '/locks/busy').acquire({ timeoutMs: 100 })).rejects.toMatchObject({ name: 'TimeoutError' });
    const [span] = named(N.SPAN_LOCK_ACQUIRE);
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(durationMs(span!)).toBeGreaterThanOrEqual(95);
    await holder.release();
  });

  it('leadership changes: a term span per leader with elected and ended events; alpha → beta', async () => {
    const [a, b] = [await open(), await open()];
    telemetry.reset();
    const alpha = new LeaderLatch(a, '/election', { id: 'alpha' });
    const beta = new LeaderLatch(b, '/election', { id: 'beta' });
    await alpha.start();
    await alpha.await({ timeoutMs: 5000 });
    await beta.start();
    const betaLeads = nextEvent(beta, 'isLeader');
    await alpha.close();
    await betaLeads;
    const held = points(await telemetry.metric(N.METRIC_LEADERSHIP_HELD));
    expect(held.map((p) => [p.attributes[N.ATTR_PARTICIPANT_ID], p.value]).sort()).toEqual([
      ['alpha', 0],
      ['beta', 1],
    ]);
    await beta.close();
    const terms = named(N.SPAN_LEADERSHIP);
    expect(terms.map((s) => s.attributes[N.ATTR_PARTICIPANT_ID])).toEqual(['alpha', 'beta']);
    for (const term of terms) {
      expect(parentOf(term)).toBeUndefined(); // a term is a trace of its own
      expect(term.events.map((e) => e.name)).toEqual([N.EVENT_LEADERSHIP_TAKEN, N.EVENT_LEADERSHIP_ENDED]);
      expect(term.attributes[N.ATTR_LEADERSHIP_END]).toBe('closed');
    }
    expect(Number(terms[1]!.attributes[N.ATTR_FENCING_TOKEN])).toBeGreaterThan(Number(terms[0]!.attributes[N.ATTR_FENCING_TOKEN]));
  });

  it('queue items: a CONSUMER span per item, ERROR when the consumer rejects; items consumed counted', async () => {
    const client = await open();
    telemetry.reset();
    let seen = 0;
    let resolveAll: () => void = () => {};
    const done = new Promise<void>((resolve) => (resolveAll = resolve));
    const queue = new DistributedQueue<Buffer>(client, '/jobs', {
      consumer: async (item) => {
        seen++;
        if (seen === 3) resolveAll();
        if (item.toString() === 'bad') throw new Error('cannot do bad');
        await Promise.resolve();
      },
    });
    await queue.start();
    await queue.put(Buffer.from('one'));
    await queue.putMulti([Buffer.from('two'), Buffer.from('bad')]);
    await done;
    await queue.close();
    const items = named(N.SPAN_QUEUE_ITEM);
    expect(items).toHaveLength(3);
    expect(items.every((s) => s.kind === SpanKind.CONSUMER && s.attributes[N.ATTR_QUEUE_PATH] === '/jobs')).toBe(true);
    expect(items.map(parentOf)).toEqual([undefined, undefined, undefined]); // a consumer's item starts a trace
    expect(items.map((s) => [s.attributes[N.ATTR_QUEUE_INDEX], s.status.code])).toEqual([
      [0, SpanStatusCode.UNSET],
      [0, SpanStatusCode.UNSET],
      [1, SpanStatusCode.ERROR],
    ]);
    const consumed = points(await telemetry.metric(N.METRIC_QUEUE_CONSUMED)).filter((p) => p.attributes[N.ATTR_QUEUE_PATH] === '/jobs');
    expect(consumed.map((p) => [p.attributes[N.ATTR_QUEUE_OUTCOME], p.value]).sort()).toEqual([
      ['done', 2],
      ['error', 1],
    ]);
  });

  it('a LeaderSelector term, a Semaphore acquire (its gate nested in time), an items() loop body', async () => {
    const client = await open();
    telemetry.reset();
    let ended: () => void = () => {};
    const led = new Promise<void>((r) => (ended = r));
    const selector = new LeaderSelector(client, '/selection', {
      id: 'sel-1',
      takeLeadership: async () => {
        await new Promise((r) => setTimeout(r, 20));
        ended();
      },
    });
    await selector.start();
    await led;
    await selector.close();
    const [term] = named(N.SPAN_LEADERSHIP);
    expect(term?.attributes).toMatchObject({ [N.ATTR_LEADER_RECIPE]: 'selector', [N.ATTR_PARTICIPANT_ID]: 'sel-1' });
    expect(term!.events.map((e) => e.name)).toEqual([N.EVENT_LEADERSHIP_TAKEN, N.EVENT_LEADERSHIP_ENDED]);

    telemetry.reset();
    const semaphore = new Semaphore(client, '/semaphore', 2);
    const leases = await semaphore.acquire(2);
    const acquires = named(N.SPAN_LOCK_ACQUIRE);
    expect(acquires.map((s) => [s.attributes[N.ATTR_LOCK_KIND], s.attributes[N.ATTR_LOCK_COUNT]]).sort()).toEqual([
      ['mutex', 1],
      ['semaphore', 2],
    ]);
    for (const l of leases) await l.release();
    await semaphore.close();

    telemetry.reset();
    const inbox = new DistributedQueue<Buffer>(client, '/inbox');
    await inbox.start();
    await inbox.put(Buffer.from('x'));
    const loopId = await tracer().startActiveSpan('drain inbox', async (loop) => {
      for await (const item of inbox.items()) {
        expect(item.toString()).toBe('x');
        await new Promise((r) => setTimeout(r, 30));
        break;
      }
      loop.end();
      return loop.spanContext().spanId;
    });
    await inbox.close();
    const [body] = named(N.SPAN_QUEUE_ITEM);
    expect(body?.attributes[N.ATTR_QUEUE_VIA]).toBe('iterator');
    expect(parentOf(body!)).toBe(loopId); // a loop's body belongs to the loop's caller
    expect(durationMs(body!)).toBeGreaterThanOrEqual(25);
  });

  it('group membership: the members gauge follows a GroupMember', async () => {
    const [a, b] = [await open(), await open()];
    const one = new GroupMember(a, '/group', 'one');
    const two = new GroupMember(b, '/group', 'two');
    await one.start();
    const both = nextEvent(one, 'change', (m: Map<string, unknown>) => m.size === 2);
    await two.start();
    await both;
    const members = points(await telemetry.metric(N.METRIC_GROUP_MEMBERS)).find((p) => p.attributes[N.ATTR_GROUP_PATH] === '/group');
    expect(members?.value).toBe(2);
    await two.close();
    await one.close();
  });
});

describe('metrics', () => {
  it('operation duration by op and outcome; session state gauge and transitions', async () => {
    const client = await open();
    await client.getData('/').catch(() => {});
    await client.getData('/nope').catch(() => {});
    const durations = points(await telemetry.metric(N.METRIC_OPERATION_DURATION));
    const ok = durations.find((p) => p.attributes[N.ATTR_OPERATION] === 'getData' && p.attributes[N.ATTR_OUTCOME] === 'ok');
    const failed = durations.find((p) => p.attributes[N.ATTR_OPERATION] === 'getData' && p.attributes[N.ATTR_OUTCOME] === 'error');
    expect(countOf(ok?.value)).toBeGreaterThanOrEqual(1);
    expect(countOf(failed?.value)).toBeGreaterThanOrEqual(1);
    expect(failed!.attributes[N.ATTR_ERROR_TYPE]).toBe('NONODE');
    const metric = await telemetry.metric(N.METRIC_OPERATION_DURATION);
    expect(metric?.descriptor.unit).toBe('s');

    const states = points(await telemetry.metric(N.METRIC_SESSION_STATE));
    const connected = states.find((p) => p.attributes[N.ATTR_SESSION_STATE] === 'CONNECTED');
    expect(connected?.value).toBeGreaterThanOrEqual(1);
    expect(states.map((p) => p.attributes[N.ATTR_SESSION_STATE]).sort()).toEqual([
      'CONNECTED',
      'LOST',
      'READ_ONLY',
      'RECONNECTED',
      'SUSPENDED',
    ]);

    const before = points(await telemetry.metric(N.METRIC_SESSION_TRANSITIONS)).find(
      (p) => p.attributes[N.ATTR_SESSION_STATE] === 'SUSPENDED',
    )?.value as number | undefined;
    server.dropConnection(client.sessionId);
    await client.waitForState('RECONNECTED', { timeoutMs: 5000 });
    const transitions = points(await telemetry.metric(N.METRIC_SESSION_TRANSITIONS));
    const suspended = transitions.find((p) => p.attributes[N.ATTR_SESSION_STATE] === 'SUSPENDED');
    expect(suspended?.value).toBe((before ?? 0) + 1);
    expect(suspended?.attributes[N.ATTR_SESSION_PREVIOUS_STATE]).toBe('CONNECTED');
    expect(transitions.find((p) => p.attributes[N.ATTR_SESSION_STATE] === 'RECONNECTED')?.value).toBeGreaterThanOrEqual(1);
  });
});

describe('cost and lifecycle', () => {
  it('disabled, nothing subscribes: the client and the recipes publish nothing', async () => {
    const channels = [requestChannel, stateChannel, acquireChannel, leaderStateChannel, groupMembersChannel, itemChannel];
    expect(channels.map((c) => c.hasSubscribers)).toEqual(channels.map(() => true));
    telemetry.instrumentation.disable();
    try {
      expect(channels.map((c) => c.hasSubscribers)).toEqual(channels.map(() => false));
      const client = await open();
      telemetry.reset();
      await client.getData('/');
      expect(telemetry.spans()).toEqual([]);
    } finally {
      telemetry.instrumentation.enable();
    }
    expect(channels.map((c) => c.hasSubscribers)).toEqual(channels.map(() => true));
  });
});
