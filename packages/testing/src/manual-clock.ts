/**
 * A clock that moves only when a test moves it. Hand the same instance to the client
 * (`createClient({ clock })`), the embedded server (`createEmbeddedServer({ clock })`) and the
 * recipes, then `await clock.advance(ms)`: every timer due in that span fires in time order, with
 * `now()` set to its due time, and the I/O it starts (in-process replies, promise chains) settles
 * before the next one fires. Expiry, LOST deadlines, backoff, TTLs and leases become exact.
 */
import type { Clock, TimerHandle } from '@tenure/protocol';
import { TimeoutError, InvalidArgumentError } from '@tenure/protocol';

interface Timer {
  readonly id: number;
  at: number;
  readonly fn: () => void;
}

/** The handle ManualClock.setTimeout returns; `unref()` and `ref()` exist so Node-minded code may call them. */
export interface ManualTimerHandle {
  readonly id: number;
  unref(): ManualTimerHandle;
  ref(): ManualTimerHandle;
}

export class ManualClock implements Clock {
  private time: number;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();
  private advancing: Promise<void> = Promise.resolve();

  /** `start` is the reading of `now()` before any advance (default 1,000,000 ms, away from zero on purpose). */
  constructor(start = 1_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { id, at: this.time + Math.max(0, ms), fn });
    const handle: ManualTimerHandle = { id, unref: () => handle, ref: () => handle };
    return handle;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    const id = (handle as ManualTimerHandle | undefined)?.id;
    if (id !== undefined) this.timers.delete(id);
  }

  /** How many timers are armed: 0 after everything under test closed means none was left behind. */
  get pending(): number {
    return this.timers.size;
  }

  /** When the next timer is due, or undefined when none is armed. */
  get nextDue(): number | undefined {
    let next: number | undefined;
    for (const t of this.timers.values()) if (next === undefined || t.at < next) next = t.at;
    return next;
  }

  /**
   * Moves time forward by `ms`, firing every timer due on the way in order (ties in the order they
   * were armed), timers armed by those included. Advances queue behind one another.
   */
  advance(ms: number): Promise<void> {
    if (!(ms >= 0)) throw new InvalidArgumentError(`advance(${ms}): time only moves forward`);
    const run = this.advancing.then(() => this.runUntil(this.time + ms));
    this.advancing = run.catch(() => undefined);
    return run;
  }

  /** Advances to the next armed timer and fires it (and any due at the same instant); false when none is armed. */
  async next(): Promise<boolean> {
    const due = this.nextDue;
    if (due === undefined) return false;
    await this.advance(due - this.time);
    return true;
  }

  /**
   * Advances in steps of `stepMs` until `predicate()` holds, at most `maxMs`: for a test that knows
   * the outcome but not the exact instant (a reconnect after a backoff with jitter). Returns the time it took.
   */
  async advanceUntil(predicate: () => boolean, options: { stepMs?: number; maxMs?: number } = {}): Promise<number> {
    const step = options.stepMs ?? 10;
    const max = options.maxMs ?? 600_000;
    const from = this.time;
    await settle();
    while (!predicate()) {
      if (this.time - from >= max) throw new TimeoutError(`advanceUntil: the condition did not hold within ${max} ms of manual time`);
      await this.advance(step);
    }
    return this.time - from;
  }

  private async runUntil(target: number): Promise<void> {
    await settle();
    for (;;) {
      const timer = this.earliestDue(target);
      if (timer === undefined) break;
      this.timers.delete(timer.id);
      this.time = Math.max(this.time, timer.at);
      timer.fn();
      await settle();
    }
    this.time = Math.max(this.time, target);
    await settle();
  }

  private earliestDue(target: number): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.timers.values()) {
      if (t.at > target) continue;
      if (best === undefined || t.at < best.at || (t.at === best.at && t.id < best.id)) best = t;
    }
    return best;
  }
}

/**
 * Lets pending work run: promise chains, and callbacks queued with setImmediate (the in-process
 * transport delivers that way), a few rounds deep.
 */
export async function settle(rounds = 8): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
