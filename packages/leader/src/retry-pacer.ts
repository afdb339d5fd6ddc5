/** Retrying a step after a failure, paced by a RetryPolicy on the client's clock; one retry pending at most. */
import type { Client, RetryPolicy, TimerHandle } from '@tenure/client';

export class RetryPacer {
  private failures = 0;
  private timer: TimerHandle | null = null;

  constructor(
    private readonly client: Client,
    private readonly policy: RetryPolicy,
  ) {}

  /** Runs `retry` after the policy's delay for the next attempt, instead of a retry still pending. */
  schedule(retry: () => void): void {
    const delay = this.client.backoffMs(this.failures++, this.policy);
    this.cancel();
    this.timer = this.client.clock.setTimeout(() => {
      this.timer = null;
      retry();
    }, delay);
  }

  /** A step went through: the next failure starts again from the first delay. */
  succeeded(): void {
    this.failures = 0;
  }

  cancel(): void {
    if (this.timer !== null) this.client.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}
