/**
 * Runs an operation under a retry policy. p-retry drives the attempts; the policy decides and the
 * injected clock sleeps, so all timing stays on one clock.
 */
import pRetry from 'p-retry';
import type { Clock } from '@tenure/protocol';
import { isRetryableError, type RetryPolicy } from './retry-policies.js';
import { sleep, typedReason } from './wait-scope.js';

export interface RetryOptions {
  policy: RetryPolicy;
  clock: Clock;
  signal?: AbortSignal | undefined;
  /** Called before each retry sleep. */
  onRetry?: (error: unknown, retryCount: number, sleepMs: number) => void;
  /** Stops retrying (e.g. the client closed); the last error is thrown. */
  stopped?: () => boolean;
}

/**
 * Retries `attempt` while it fails with a retryable error and the policy allows.
 * `firstFailure` is the error of an attempt already made (the client's fast path), counted as attempt 1.
 */
export async function runWithRetry<T>(
  attempt: () => Promise<T>,
  opts: RetryOptions,
  firstFailure?: { error: unknown; startedAt: number },
): Promise<T> {
  const { policy, clock, signal } = opts;
  const startedAt = firstFailure?.startedAt ?? clock.now();
  let retries = 0;
  let retry = false;

  const decide = async (error: unknown): Promise<void> => {
    retry = false;
    if (!isRetryableError(error) || opts.stopped?.()) return;
    const sleepMs = policy.allowRetry(retries, clock.now() - startedAt);
    if (sleepMs === false) return;
    retries++;
    opts.onRetry?.(error, retries, sleepMs);
    await sleep(clock, sleepMs, signal);
    retry = !opts.stopped?.();
  };

  try {
    if (firstFailure) {
      await decide(firstFailure.error);
      if (!retry) throw firstFailure.error;
    }
    return await pRetry(attempt, {
      retries: Infinity,
      minTimeout: 0,
      factor: 1,
      ...(signal ? { signal } : {}),
      onFailedAttempt: ({ error }) => decide(error),
      shouldRetry: () => retry,
    });
  } catch (err) {
    if (signal?.aborted) throw typedReason(signal);
    throw err;
  }
}
