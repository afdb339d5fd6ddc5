/**
 * When PersistentNode's check-and-create pass runs: one at a time, once more when asked while one
 * runs, and at the earliest of the times retries and the rejoin jitter asked for.
 */
import type { Clock, TimerHandle } from '@tenure/client';

export class PassRunner {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private timer: TimerHandle | null = null;
  private timerAt = Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly pass: () => Promise<void>,
    private readonly failed: (err: unknown) => void,
  ) {}

  /** Runs the pass now, or once more after the one in flight. */
  run(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.pass();
        } catch (err) {
          this.failed(err);
        }
      } while (this.again && !this.stopped);
      this.running = null;
    })();
  }

  /** Runs the pass in `ms`, unless a run is already due sooner. */
  runIn(ms: number): void {
    if (this.stopped) return;
    const at = this.clock.now() + ms;
    if (this.timer !== null) {
      if (this.timerAt <= at) return;
      this.clock.clearTimeout(this.timer);
    }
    this.timerAt = at;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.run();
    }, ms);
  }

  /** No more runs and no timer; a pass in flight finishes (see `idle`). */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Resolves once no pass is running. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }
}
