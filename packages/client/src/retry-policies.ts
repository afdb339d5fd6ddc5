/**
 * Retry policies, with Curator's names and arithmetic. A policy only says whether to retry and how
 * long to sleep first; which errors are retried is fixed (see `isRetryableError`).
 */
import { KeeperError, isRetryableCode } from '@tenure/protocol';

export interface RetryPolicy {
  /**
   * @param retryCount 0 before the first retry, 1 before the second, ...
   * @param elapsedMs time since the operation started
   * @returns the sleep before the retry, in ms, or `false` to give up
   */
  allowRetry(retryCount: number, elapsedMs: number): number | false;
}

/** Only ConnectionLoss, OperationTimeout and SessionMoved are retried; SessionExpired never is. */
export function isRetryableError(err: unknown): boolean {
  return err instanceof KeeperError && isRetryableCode(err.code);
}

const MAX_RETRIES_LIMIT = 29;

function checkCount(name: string, value: number): void {
  if (typeof value !== 'number' || !(value >= 0) || (!Number.isFinite(value) && value !== Infinity)) {
    throw new RangeError(`${name} must be a number >= 0, got ${String(value)}`);
  }
}

function exponential(baseSleepMs: number, maxRetries: number, maxSleepMs: number): RetryPolicy {
  checkCount('baseSleepMs', baseSleepMs);
  checkCount('maxRetries', maxRetries);
  checkCount('maxSleepMs', maxSleepMs);
  const retries = Math.min(maxRetries, MAX_RETRIES_LIMIT);
  return {
    allowRetry(retryCount) {
      if (retryCount >= retries) return false;
      // Curator (after Hadoop): base × a random integer in [1, 2^(retryCount+1)).
      const factor = Math.max(1, Math.floor(Math.random() * 2 ** (retryCount + 1)));
      return Math.min(baseSleepMs * factor, maxSleepMs);
    },
  };
}

function fixed(name: string, sleepMs: number, allow: (retryCount: number, elapsedMs: number) => boolean): RetryPolicy {
  checkCount(`${name} sleepMs`, sleepMs);
  return { allowRetry: (retryCount, elapsedMs) => (allow(retryCount, elapsedMs) ? sleepMs : false) };
}

export const RetryPolicies = {
  /** Up to `maxRetries` (at most 29) retries, sleeping base × random(1 .. 2^(n+1)), capped at `maxSleepMs`. */
  exponentialBackoff(baseSleepMs: number, maxRetries: number, maxSleepMs = Infinity): RetryPolicy {
    return exponential(baseSleepMs, maxRetries, maxSleepMs);
  },
  /** Curator's BoundedExponentialBackoffRetry: exponential, each sleep at most `maxSleepMs`. */
  boundedExponentialBackoff(baseSleepMs: number, maxSleepMs: number, maxRetries: number): RetryPolicy {
    return exponential(baseSleepMs, maxRetries, maxSleepMs);
  },
  /** `n` retries, `sleepMs` apart. */
  nTimes(n: number, sleepMs: number): RetryPolicy {
    checkCount('n', n);
    return fixed('nTimes', sleepMs, (count) => count < n);
  },
  /** One retry after `sleepMs`. */
  oneTime(sleepMs: number): RetryPolicy {
    return fixed('oneTime', sleepMs, (count) => count < 1);
  },
  /** Retries `sleepMs` apart until `maxElapsedMs` have passed since the operation started. */
  untilElapsed(maxElapsedMs: number, sleepMs: number): RetryPolicy {
    checkCount('maxElapsedMs', maxElapsedMs);
    return fixed('untilElapsed', sleepMs, (_count, elapsed) => elapsed < maxElapsedMs);
  },
  /** Retries `sleepMs` apart for as long as the client is open. */
  forever(sleepMs: number): RetryPolicy {
    return fixed('forever', sleepMs, () => true);
  },
  /** Never retries. */
  none(): RetryPolicy {
    return { allowRetry: () => false };
  },
} as const;
