/** Retry policies (Curator's arithmetic) and the retry loop's error classes. */
import { describe, expect, it } from 'vitest';
import {
  BadVersionError,
  ConnectionLossError,
  NoNodeError,
  OperationTimeoutError,
  RetryPolicies,
  SessionExpiredError,
  SessionMovedError,
  isRetryableError,
  systemClock,
  InvalidArgumentError,
} from '../src/index.js';
import { runWithRetry } from '../src/retry-loop.js';

const sleeps = (policy: ReturnType<typeof RetryPolicies.nTimes>, n: number, elapsed = 0): Array<number | false> =>
  Array.from({ length: n }, (_, i) => policy.allowRetry(i, elapsed));

describe('retry policies', () => {
  it('exponentialBackoff: base × random [1, 2^(n+1)), maxRetries, maxSleepMs', () => {
    const p = RetryPolicies.exponentialBackoff(10, 5, 100);
    for (let trial = 0; trial < 200; trial++) {
      for (let n = 0; n < 5; n++) {
        const s = p.allowRetry(n, 0);
        expect(s).not.toBe(false);
        expect(s).toBeGreaterThanOrEqual(10);
        expect(s).toBeLessThanOrEqual(Math.min(100, 10 * (2 ** (n + 1) - 1)));
      }
      expect(p.allowRetry(5, 0)).toBe(false);
    }
    // Caps at 29 retries, like Curator.
    const many = RetryPolicies.exponentialBackoff(1, 1000);
    expect(many.allowRetry(28, 0)).not.toBe(false);
    expect(many.allowRetry(29, 0)).toBe(false);
  });

  it('boundedExponentialBackoff bounds every sleep', () => {
    const p = RetryPolicies.boundedExponentialBackoff(100, 250, 10);
    for (let n = 0; n < 10; n++) expect(p.allowRetry(n, 0)).toBeLessThanOrEqual(250);
    expect(p.allowRetry(10, 0)).toBe(false);
  });

  it('nTimes, oneTime, untilElapsed, forever, none', () => {
    expect(sleeps(RetryPolicies.nTimes(3, 7), 4)).toEqual([7, 7, 7, false]);
    expect(sleeps(RetryPolicies.oneTime(5), 2)).toEqual([5, false]);
    const until = RetryPolicies.untilElapsed(1000, 50);
    expect(until.allowRetry(100, 999)).toBe(50);
    expect(until.allowRetry(0, 1000)).toBe(false);
    expect(RetryPolicies.forever(9).allowRetry(1e9, 1e12)).toBe(9);
    expect(RetryPolicies.none().allowRetry(0, 0)).toBe(false);
  });

  it('rejects nonsense arguments', () => {
    expect(() => RetryPolicies.exponentialBackoff(-1, 3)).toThrow(InvalidArgumentError);
    expect(() => RetryPolicies.nTimes(Number.NaN, 1)).toThrow(InvalidArgumentError);
    expect(() => RetryPolicies.forever(-5)).toThrow(InvalidArgumentError);
  });

  it('only ConnectionLoss, OperationTimeout and SessionMoved are retryable; SessionExpired never', () => {
    expect(isRetryableError(new ConnectionLossError())).toBe(true);
    expect(isRetryableError(new OperationTimeoutError())).toBe(true);
    expect(isRetryableError(new SessionMovedError())).toBe(true);
    expect(isRetryableError(new SessionExpiredError())).toBe(false);
    expect(isRetryableError(new NoNodeError())).toBe(false);
    expect(isRetryableError(new Error('x'))).toBe(false);
  });
});

describe('retry loop', () => {
  it('retries retryable errors as the policy allows, then throws the last error', async () => {
    let calls = 0;
    const err = await runWithRetry(
      async () => {
        calls++;
        throw new ConnectionLossError('/x');
      },
      { policy: RetryPolicies.nTimes(3, 1), clock: systemClock },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect(calls).toBe(4);
  });

  it('does not retry other errors', async () => {
    for (const e of [new SessionExpiredError('/x'), new BadVersionError('/x'), new TypeError('bug')]) {
      let calls = 0;
      await expect(
        runWithRetry(
          async () => {
            calls++;
            throw e;
          },
          { policy: RetryPolicies.forever(1), clock: systemClock },
        ),
      ).rejects.toBe(e);
      expect(calls).toBe(1);
    }
  });

  it('succeeds after transient failures; counts a failure made before it was called', async () => {
    let calls = 0;
    const retries: number[] = [];
    const v = await runWithRetry(
      async () => {
        if (++calls < 2) throw new OperationTimeoutError();
        return 42;
      },
      { policy: RetryPolicies.nTimes(2, 1), clock: systemClock, onRetry: (_e, n) => retries.push(n) },
      { error: new ConnectionLossError(), startedAt: systemClock.now() },
    );
    expect(v).toBe(42);
    expect(retries).toEqual([1, 2]);
  });

  it('an abort during the sleep rejects with AbortError', async () => {
    const ac = new AbortController();
    const p = runWithRetry(
      async () => {
        throw new ConnectionLossError();
      },
      { policy: RetryPolicies.forever(10_000), clock: systemClock, signal: ac.signal },
    );
    setTimeout(() => ac.abort(), 10);
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('sleeps on the injected clock', async () => {
    const asked: number[] = [];
    const clock = {
      now: () => 0,
      setTimeout: (fn: () => void, ms: number) => {
        asked.push(ms);
        return setTimeout(fn, 0);
      },
      clearTimeout: (h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>),
    };
    let calls = 0;
    await runWithRetry(
      async () => {
        if (++calls < 3) throw new ConnectionLossError();
      },
      { policy: RetryPolicies.nTimes(5, 12_345), clock },
    );
    expect(asked).toEqual([12_345, 12_345]);
  });
});
