import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { SessionWheel } from '@tenure/server';

/** The wheel under fake timers, with a clock that follows them. */
function makeWheel(tickMs: number) {
  const expired: Array<{ at: number; items: string[] }> = [];
  const clock = {
    now: () => Date.now(),
    setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
    clearTimeout: (h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>),
  };
  const wheel = new SessionWheel<string>(tickMs, (items) => expired.push({ at: clock.now(), items: items.slice().sort() }), clock);
  return { wheel, expired };
}

describe('SessionWheel', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  test('an item expires at the first tick boundary after its timeout: never before, at most one tick late', () => {
    const { wheel, expired } = makeWheel(100);
    vi.advanceTimersByTime(37); // not on a boundary
    const touched = Date.now();
    wheel.touch('a', 250);
    vi.advanceTimersByTime(250);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(100);
    expect(expired).toHaveLength(1);
    expect(expired[0]!.items).toEqual(['a']);
    const after = expired[0]!.at - touched;
    expect(after).toBeGreaterThan(250);
    expect(after).toBeLessThanOrEqual(350);
    expect(wheel.size).toBe(0);
  });

  test('touching moves an item to a later bucket', () => {
    const { wheel, expired } = makeWheel(100);
    wheel.touch('a', 300);
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(200);
      wheel.touch('a', 300);
    }
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(400);
    expect(expired.map((e) => e.items)).toEqual([['a']]);
  });

  test('items due at the same boundary expire together; removed items never expire', () => {
    const { wheel, expired } = makeWheel(100);
    for (const x of ['a', 'b', 'c', 'd']) wheel.touch(x, 200);
    wheel.remove('c');
    wheel.touch('e', 1000);
    vi.advanceTimersByTime(300);
    expect(expired.map((e) => e.items)).toEqual([['a', 'b', 'd']]);
    expect(wheel.size).toBe(1);
    expect(wheel.expiryTime('e')).toBeGreaterThan(Date.now());
  });

  test('one timer serves any number of idle items, and none runs when the wheel is empty', () => {
    const { wheel, expired } = makeWheel(100);
    expect(vi.getTimerCount()).toBe(0);
    for (let i = 0; i < 100_000; i++) wheel.touch(`s${i}`, 200 + (i % 20) * 100);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(2200);
    expect(expired.reduce((n, e) => n + e.items.length, 0)).toBe(100_000);
    expect(expired.length).toBeLessThanOrEqual(21);
    expect(wheel.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  test('after a long stall every overdue bucket expires at once', () => {
    const { wheel, expired } = makeWheel(100);
    wheel.touch('a', 200);
    wheel.touch('b', 900);
    wheel.touch('c', 5000);
    vi.setSystemTime(Date.now() + 2000); // the clock jumps; no timer ran
    vi.advanceTimersByTime(300);
    expect(expired.flatMap((e) => e.items).sort()).toEqual(['a', 'b']);
    vi.advanceTimersByTime(5000);
    expect(expired.flatMap((e) => e.items).sort()).toEqual(['a', 'b', 'c']);
  });

  test('close stops the timer and forgets every item', () => {
    const { wheel, expired } = makeWheel(100);
    wheel.touch('a', 200);
    wheel.close();
    expect(vi.getTimerCount()).toBe(0);
    wheel.touch('b', 200);
    vi.advanceTimersByTime(1000);
    expect(expired).toEqual([]);
  });
});
