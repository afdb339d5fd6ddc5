/** SharedValue and SharedCount on the embedded server: Curator's bytes, the cache, trySet, change, clean close. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { CorruptedValueError, OutcomeUnknownError, SharedCount, SharedValue, type VersionedValue } from '../src/index.js';
import { Clients, faultyTransport, nextEvent, startServer, totalWatches, whenCount, whenTree } from './harness.js';

let server: EmbeddedServer;
let clients: Clients;
const handles: Array<{ close(): Promise<void> }> = [];

async function started<T extends SharedCount | SharedValue>(h: T): Promise<T> {
  handles.push(h);
  await h.start();
  return h;
}

function setup(): void {
  server = startServer();
  clients = new Clients(() => server.transport());
}
afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.close()));
  await clients.closeAll();
  await server.close();
});

describe('SharedCount', () => {
  it("start() creates the node with the seed as Curator's 4-byte big-endian int, parents as containers", async () => {
    setup();
    const c = await clients.open();
    const observer = await clients.open();
    const count = await started(new SharedCount(c, '/app/counts/a', -2));
    expect(server.node('/app/counts/a')!.data).toEqual(Buffer.from([0xff, 0xff, 0xff, 0xfe]));
    expect(server.node('/app/counts/a')!.stat.ephemeralOwner).toBe(0n);
    expect(count.count).toBe(-2);
    expect(count.getVersionedValue()).toEqual({ value: -2, version: 0 });
    await count.close();
    await c.delete('/app/counts/a');
    // The parents were containers: the reaper deletes them, which the observer hears.
    await whenTree(observer, '/app', () => server.node('/app') === undefined);
  });

  it('start() keeps an existing value and resolves after the first read; extra bytes are ignored', async () => {
    setup();
    const c = await clients.open();
    await c.create('/n', Buffer.from([0, 0, 1, 2, 9]));
    await c.setData('/n', Buffer.from([0, 0, 1, 2, 9]));
    const count = await started(new SharedCount(c, '/n', 7));
    expect(count.getVersionedValue()).toEqual({ value: 258, version: 1 });
  });

  it('getVersionedValue() is synchronous and cached: the same object until the version moves', async () => {
    setup();
    const c = await clients.open();
    const count = await started(new SharedCount(c, '/n', 1));
    const v = count.getVersionedValue();
    expect(count.getVersionedValue()).toBe(v);
    expect(Object.isFrozen(v)).toBe(true);
    expect(await count.trySetCount(2, v)).toBe(true);
    expect(count.getVersionedValue()).toEqual({ value: 2, version: 1 });
  });

  it('trySetCount is false when someone changed the count since; the cache is re-read by then', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const ca = await started(new SharedCount(a, '/n', 0));
    const cb = await started(new SharedCount(b, '/n', 0));
    const seen = cb.getVersionedValue();
    expect(await ca.trySetCount(5, ca.getVersionedValue())).toBe(true);
    // cb may not have heard yet: the server refuses the stale version and cb re-reads.
    expect(await cb.trySetCount(9, seen)).toBe(false);
    expect(cb.getVersionedValue()).toEqual({ value: 5, version: 1 });
    // A stale expected value is refused without a round trip.
    expect(await cb.trySetCount(9, seen)).toBe(false);
    expect(await cb.trySetCount(6, cb.getVersionedValue())).toBe(true);
    expect(server.node('/n')!.data).toEqual(Buffer.from([0, 0, 0, 6]));
  });

  it('emits change for writes by others and by itself, in version order', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const ca = await started(new SharedCount(a, '/n', 0));
    const cb = await started(new SharedCount(b, '/n', 0));
    const seen: VersionedValue<number>[] = [];
    cb.on('change', (v) => seen.push(v));
    await ca.setCount(3);
    await whenCount(cb, 3);
    await cb.trySetCount(4, cb.getVersionedValue());
    await a.setData('/n', Buffer.from([0, 0, 0, 10]));
    await whenCount(cb, 10);
    expect(seen).toEqual([
      { value: 3, version: 1 },
      { value: 4, version: 2 },
      { value: 10, version: 3 },
    ]);
  });

  it('4 clients x 50 successful trySetCount(count + 1) loops end at exactly 200', async () => {
    setup();
    const cs = await clients.openMany(4);
    const counts = await Promise.all(cs.map((c) => started(new SharedCount(c, '/shared', 0))));
    let refused = 0;
    await Promise.all(
      counts.map(async (count) => {
        for (let done = 0; done < 50;) {
          const v = count.getVersionedValue();
          if (await count.trySetCount(v.value + 1, v)) done++;
          else refused++;
        }
      }),
    );
    expect(server.node('/shared')!.data!.readInt32BE(0)).toBe(200);
    expect(refused).toBeGreaterThan(0);
  });

  it('follows the node when it is deleted and created again (a new incarnation, version 0)', async () => {
    setup();
    const c = await clients.open();
    const count = await started(new SharedCount(c, '/n', 0));
    await count.setCount(1);
    await count.setCount(2);
    const recreated = nextEvent(count, 'change', (v: { value: number }) => v.value === 42);
    await c.delete('/n');
    await c.create('/n', Buffer.from([0, 0, 0, 42]));
    await recreated;
    expect(count.count).toBe(42);
    expect(count.getVersionedValue().version).toBe(0);
    expect(await count.trySetCount(43, count.getVersionedValue())).toBe(true);
  });

  it('bytes of another type: count throws CorruptedValueError, trySetCount is false', async () => {
    setup();
    const c = await clients.open();
    await c.create('/n', Buffer.from([1, 2]));
    const count = await started(new SharedCount(c, '/n', 0));
    expect(() => count.count).toThrow(CorruptedValueError);
    expect(() => count.count).toThrow('Corrupted data for node "/n": [0x1, 0x2]');
  });

  it('a trySetCount whose reply is lost (applied, then the connection drops) rejects with OutcomeUnknownError, never false', async () => {
    setup();
    const t = faultyTransport(server);
    const c = await clients.open({ transport: t });
    const count = await started(new SharedCount(c, '/n', 0));
    t.arm('lose-reply');
    const err = await count.trySetCount(1, count.getVersionedValue()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(server.node('/n')!.data).toEqual(Buffer.from([0, 0, 0, 1])); // it had landed
  });

  it('a trySetCount whose connection drops before it is sent is retried and lands once', async () => {
    setup();
    const t = faultyTransport(server);
    const c = await clients.open({ transport: t });
    const count = await started(new SharedCount(c, '/n', 0));
    t.arm('drop-before');
    expect(await count.trySetCount(1, count.getVersionedValue())).toBe(true);
    expect(server.node('/n')!.stat.version).toBe(1);
  });

  it('close() leaves no watch on the server; the node stays', async () => {
    setup();
    const c = await clients.open();
    const count = await started(new SharedCount(c, '/n', 0));
    await count.setCount(1);
    expect(totalWatches(server)).toBe(1);
    await count.close();
    await c.sync('/'); // after the watch removal the close sent
    expect(totalWatches(server)).toBe(0);
    expect(server.node('/n')).toBeDefined();
    await expect(count.setCount(2)).rejects.toThrow(/needs start/);
  });
});

describe('SharedValue', () => {
  it('raw bytes: seed, value (a copy), trySetValue and setValue', async () => {
    setup();
    const c = await clients.open();
    const v = await started(new SharedValue(c, '/v', Buffer.from('seed')));
    expect(v.value.toString()).toBe('seed');
    v.value.fill(0);
    expect(v.value.toString()).toBe('seed');
    expect(await v.trySetValue(Buffer.from('one'), v.getVersionedValue())).toBe(true);
    expect(v.getVersionedValue()).toEqual({ value: Buffer.from('one'), version: 1 });
    expect(await v.trySetValue(Buffer.from('x'), { value: Buffer.from('seed'), version: 0 })).toBe(false);
    await v.setValue(Buffer.from('two'));
    expect(server.node('/v')!.data!.toString()).toBe('two');
    expect(v.value.toString()).toBe('two');
  });

  it('trySetValue before start() throws (a version of -1 would write unconditionally)', async () => {
    setup();
    const c = await clients.open();
    const v = new SharedValue(c, '/v', Buffer.from('seed'));
    await expect(v.trySetValue(Buffer.from('x'), v.getVersionedValue())).rejects.toThrow(/needs start/);
  });
});
