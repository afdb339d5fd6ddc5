/**
 * Retry pacing for work a recipe keeps doing until it succeeds or closes: each failure waits the
 * next pause of the retry policy (`backoffMs`, the client's policy by default), on the client's
 * clock, so a ManualClock drives it; a success starts again from the first pause.
 */
import type { Clock, TimerHandle } from '@tenure/protocol';
import { backoffMs, type RetryPolicy } from '../retry-policies.js';
import { sleep } from '../wait-scope.js';

/** What a pacer runs on: a Client has both. */
export interface PacerDeps {
  readonly clock: Clock;
  readonly retryPolicy: RetryPolicy;
}

export class RetryPacer {
  private failures = 0;
  private readonly timers = new Set<TimerHandle>();
  private readonly clock: Clock;
  private readonly policy: RetryPolicy;

  /** @param policy paces the retries instead of `deps.retryPolicy` (a recipe's `retryPolicy` option). */
  constructor(deps: PacerDeps, policy?: RetryPolicy) {
    this.clock = deps.clock;
    this.policy = policy ?? deps.retryPolicy;
  }

  /** Failures since the last success. */
  get attempts(): number {
    return this.failures;
  }

  /** Counts a failure and returns the pause before the retry. */
  nextDelayMs(): number {
    return backoffMs(this.policy, this.failures++);
  }

  /** A step went through: the next failure starts again from the first pause. */
  succeeded(): void {
    this.failures = 0;
  }

  /**
   * Counts a failure and runs `retry` after the pause, instead of a retry still pending (one at
   * most). With `alongside`, the pending retries stay (a recipe retrying several paths at once).
   * Returns the pause.
   */
  schedule(retry: () => void, options: { alongside?: boolean } = {}): number {
    const delay = this.nextDelayMs();
    if (!options.alongside) this.cancel();
    const t = this.clock.setTimeout(() => {
      this.timers.delete(t);
      retry();
    }, delay);
    this.timers.add(t);
    return delay;
  }

  /** Retries scheduled and not yet run. */
  get pending(): number {
    return this.timers.size;
  }

  /** Counts a failure and waits the pause; resolves early (never rejects) when `signal` aborts. */
  async pause(signal?: AbortSignal): Promise<void> {
    await sleep(this.clock, this.nextDelayMs(), signal).catch(() => {});
  }

  /** Drops every retry still pending. */
  cancel(): void {
    for (const t of this.timers) this.clock.clearTimeout(t);
    this.timers.clear();
  }
}
