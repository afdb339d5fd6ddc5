/**
 * Retry policies, with Curator's names and arithmetic. A policy only says whether to retry and how
 * long to sleep first; which errors are retried is fixed (see `isRetryableError`).
 */
import { KeeperError, isRetryableCode, InvalidArgumentError } from '@tenure/protocol';

export interface RetryPolicy {
  /**
   * @param retryCount 0 before the first retry, 1 before the second, ...
   * @param elapsedMs time since the operation started
   * @returns the sleep before the retry, in ms, or `false` to give up
   */
  allowRetry(retryCount: number, elapsedMs: number): number | false;
  /**
   * The pause before attempt `attempt` (0 before the first retry) of work that goes on until it
   * succeeds or its owner closes: a recipe re-creating its node, a background delete. Unlike
   * `allowRetry` it never gives up; once the policy's retries are spent, its last range repeats.
   * A policy without it is paced by what `allowRetry` allowed last (see `backoffMs`).
   */
  delayMs?(attempt: number): number;
}

/**
 * The pause before attempt `attempt` of work retried until it succeeds, under `policy`: the
 * policy's `delayMs`, else `allowRetry` with the count held at the last one it allowed, else
 * NEVER_RETRY_PACE_MS (work that must go on is never retried in a hot loop).
 */
export function backoffMs(policy: RetryPolicy, attempt: number): number {
  const n = Math.max(0, Math.floor(attempt));
  if (policy.delayMs) return policy.delayMs(n);
  for (let k = Math.min(n, MAX_RETRIES_LIMIT); k >= 0; k--) {
    const ms = policy.allowRetry(k, 0);
    if (ms !== false) return ms;
  }
  return NEVER_RETRY_PACE_MS;
}

/** How `none()` (or a policy that allows nothing) paces work that must go on: Curator's base sleep. */
const NEVER_RETRY_PACE_MS = 1000;

/** Only ConnectionLoss, OperationTimeout and SessionMoved are retried; SessionExpired never is. */
export function isRetryableError(err: unknown): boolean {
  return err instanceof KeeperError && isRetryableCode(err.keeperCode);
}

const MAX_RETRIES_LIMIT = 29;

function checkCount(name: string, value: number): void {
  if (typeof value !== 'number' || !(value >= 0) || (!Number.isFinite(value) && value !== Infinity)) {
    throw new InvalidArgumentError(`${name} must be a number >= 0, got ${String(value)}`);
  }
}

function exponential(baseSleepMs: number, maxRetries: number, maxSleepMs: number): RetryPolicy {
  checkCount('baseSleepMs', baseSleepMs);
  checkCount('maxRetries', maxRetries);
  checkCount('maxSleepMs', maxSleepMs);
  const retries = Math.min(maxRetries, MAX_RETRIES_LIMIT);
  // Curator (after Hadoop): base × a random integer in [1, 2^(retryCount+1)).
  const sleepFor = (retryCount: number): number =>
    Math.min(baseSleepMs * Math.max(1, Math.floor(Math.random() * 2 ** (retryCount + 1))), maxSleepMs);
  return {
    allowRetry: (retryCount) => (retryCount >= retries ? false : sleepFor(retryCount)),
    delayMs: (attempt) => sleepFor(Math.min(attempt, Math.max(0, retries - 1))),
  };
}

function fixed(name: string, sleepMs: number, allow: (retryCount: number, elapsedMs: number) => boolean): RetryPolicy {
  checkCount(`${name} sleepMs`, sleepMs);
  return { allowRetry: (retryCount, elapsedMs) => (allow(retryCount, elapsedMs) ? sleepMs : false), delayMs: () => sleepMs };
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
    return { allowRetry: () => false, delayMs: () => NEVER_RETRY_PACE_MS };
  },
} as const;
