/**
 * How often an optimistic update tries again after losing a race. A conflict is not a connection
 * problem: the next attempt can go at once, so the client's connection policy (which sleeps a
 * second) is the wrong one. The default is Curator's RetryNTimes in spirit: 10 retries, the first
 * at once, the others after 0-4 ms of jitter so that contenders fall out of step.
 */
import type { Client, RetryPolicy } from '@tenure/client';

export const DEFAULT_CONFLICT_RETRIES = 10;

export function conflictRetryPolicy(retries = DEFAULT_CONFLICT_RETRIES, maxJitterMs = 4): RetryPolicy {
  const sleep = (count: number): number => (count === 0 ? 0 : Math.floor(Math.random() * (maxJitterMs + 1)));
  return { allowRetry: (count) => (count < retries ? sleep(count) : false), delayMs: sleep };
}

/** Exactly one attempt (Curator's PromotedToLock default, RetryNTimes(0, 0)). */
export const ONE_ATTEMPT: RetryPolicy = { allowRetry: () => false };

/** Sleeps `ms` on the client's clock; rejects with ClosedError if the client closes first. */
export function pause(client: Client, ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return client.wait(
    (signal) =>
      new Promise<void>((resolve) => {
        const timer = client.clock.setTimeout(resolve, ms);
        signal.addEventListener('abort', () => client.clock.clearTimeout(timer), { once: true });
      }),
    undefined,
    'conflict retry pause',
  );
}
