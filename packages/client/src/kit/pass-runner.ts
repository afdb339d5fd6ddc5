/**
 * "Run once more": a recipe's pass (a check-and-create, a re-read, an election step) runs one at a
 * time; asked for while one runs, it runs once more after it, however often it was asked. A timer
 * on the client's clock runs it later, at the earliest time asked for.
 */
import type { Clock, TimerHandle } from '@tenure/protocol';

export class PassRunner {
  private running: Promise<void> | null = null;
  private active = false;
  private again = false;
  private stopped = false;
  /** Armed while `timerAt` is finite. */
  private timer: TimerHandle | undefined = undefined;
  private timerAt = Infinity;

  /**
   * @param pass one pass; a rejection goes to `failed`, and a pass asked for meanwhile still runs.
   * @param failed what a failed pass means (see `triageFailure`); usually a `runIn(backoff)`.
   * @param idle called each time the passes stop running (none left to run once more).
   */
  constructor(
    private readonly clock: Clock,
    private readonly pass: () => Promise<void>,
    private readonly failed: (err: unknown) => void,
    private readonly idle?: () => void,
  ) {}

  /** Runs the pass now, or once more after the one in flight. True when this call started a run. */
  run(): boolean {
    if (this.stopped) return false;
    if (this.active) {
      this.again = true;
      return false;
    }
    // Set before the pass begins, so a pass that asks for itself is queued, not doubled.
    this.active = true;
    this.running = this.loop();
    return true;
  }

  /** Runs the pass in `ms`, unless a run is already due sooner. */
  runIn(ms: number): void {
    if (this.stopped) return;
    const at = this.clock.now() + ms;
    if (this.timerAt !== Infinity) {
      if (this.timerAt <= at) return;
      if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    }
    this.timerAt = at;
    this.timer = this.clock.setTimeout(() => {
      this.timerAt = Infinity;
      this.run();
    }, ms);
  }

  /** A pass is running (or about to). */
  get busy(): boolean {
    return this.active;
  }

  /** No more runs and no timer; a pass in flight finishes (see `whenIdle`). */
  stop(): void {
    this.stopped = true;
    if (this.timerAt !== Infinity && this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timerAt = Infinity;
  }

  /** Resolves once no pass is running. */
  async whenIdle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async loop(): Promise<void> {
    try {
      do {
        this.again = false;
        try {
          await this.pass();
        } catch (err) {
          this.failed(err);
        }
      } while (this.again && !this.stopped);
    } finally {
      this.active = false;
      this.running = null;
      this.idle?.();
    }
  }
}
