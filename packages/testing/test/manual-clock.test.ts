import { describe, expect, test } from 'vitest';
import { createClient, ConnectionState } from '@tenure/client';
import { createEmbeddedServer } from '@tenure/server';
import { ManualClock } from '@tenure/testing';
import { InvalidArgumentError } from '@tenure/protocol';

describe('ManualClock', () => {
  test('fires due timers in time order, ties in arming order, with now() at each due time', async () => {
    const clock = new ManualClock(0);
    const fired: Array<[string, number]> = [];
    clock.setTimeout(() => fired.push(['b', clock.now()]), 20);
    clock.setTimeout(() => fired.push(['a', clock.now()]), 10);
    clock.setTimeout(() => fired.push(['c', clock.now()]), 20);
    const cancelled = clock.setTimeout(() => fired.push(['x', clock.now()]), 15);
    clock.clearTimeout(cancelled);
    await clock.advance(19);
    expect(fired).toEqual([['a', 10]]);
    expect(clock.now()).toBe(19);
    await clock.advance(1);
    expect(fired).toEqual([
      ['a', 10],
      ['b', 20],
      ['c', 20],
    ]);
    expect(clock.pending).toBe(0);
  });

  test('timers armed by a timer inside the span fire in the same advance', async () => {
    const clock = new ManualClock(0);
    const at: number[] = [];
    const tick = (): void => {
      at.push(clock.now());
      if (at.length < 5) clock.setTimeout(tick, 100);
    };
    clock.setTimeout(tick, 100);
    await clock.advance(1_000);
    expect(at).toEqual([100, 200, 300, 400, 500]);
    expect(clock.now()).toBe(1_000);
  });

  test('rejects moving backwards', () => {
    expect(() => new ManualClock().advance(-1)).toThrow(InvalidArgumentError);
  });

  test('drives the client and the embedded server: pings hold a session through a minute of manual time; nothing stays armed after close', async () => {
    const clock = new ManualClock();
    const server = createEmbeddedServer({ clock, tickMs: 200 });
    const client = createClient({ transport: server.transport(), sessionTimeoutMs: 2_000, clock });
    const states: Array<[ConnectionState, number]> = [];
    client.on('stateChanged', (s: ConnectionState) => states.push([s, clock.now()]));
    const t0 = clock.now();
    const started = client.start();
    await clock.advanceUntil(() => client.state === ConnectionState.CONNECTED);
    await started;
    // Pings keep it alive for as long as time runs.
    await clock.advance(60_000);
    expect(client.state).toBe(ConnectionState.CONNECTED);
    expect(server.sessions()).toHaveLength(1);
    await client.close();
    await server.close();
    expect(clock.pending).toBe(0);
    expect(states[0]?.[1]).toBe(t0);
  });
});
