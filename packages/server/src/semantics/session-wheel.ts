/**
 * A bucketed expiry wheel, as ZooKeeper's ExpiryQueue: every item sits in the bucket of its next
 * expiry time, rounded up to the next multiple of the tick. Touching an item moves it to a later
 * bucket in O(1); one timer wakes at each tick boundary while the wheel holds anything, and expires
 * one bucket per wake. The cost is flat however many items sit idle.
 *
 * An item touched at `t` with timeout `T` expires at the first tick boundary strictly after `t + T`:
 * never before its timeout, at most one tick after it.
 */
import { systemClock, unrefTimer, type Clock, type TimerHandle } from '@tenure/protocol';

export class SessionWheel<T> {
  private readonly buckets = new Map<number, Set<T>>();
  private readonly expiryOf = new Map<T, number>();
  private timer: TimerHandle | undefined = undefined;
  /** The next bucket boundary the timer will process. */
  private nextBoundary: number;
  private closed = false;

  constructor(
    private readonly tickMs: number,
    private readonly onExpire: (items: T[]) => void,
    private readonly clock: Clock = systemClock,
  ) {
    this.nextBoundary = this.roundUp(clock.now());
  }

  get size(): number {
    return this.expiryOf.size;
  }

  /** The bucket time an item expires at, or undefined when it is not on the wheel. */
  expiryTime(item: T): number | undefined {
    return this.expiryOf.get(item);
  }

  /** Puts `item` (back) on the wheel to expire `timeoutMs` from now. */
  touch(item: T, timeoutMs: number): void {
    if (this.closed) return;
    const at = this.roundUp(this.clock.now() + timeoutMs);
    const prev = this.expiryOf.get(item);
    if (prev === at) return;
    if (prev !== undefined) this.removeFromBucket(item, prev);
    let bucket = this.buckets.get(at);
    if (bucket === undefined) {
      bucket = new Set();
      this.buckets.set(at, bucket);
    }
    bucket.add(item);
    this.expiryOf.set(item, at);
    this.arm();
  }

  /** Takes `item` off the wheel; it will not expire. */
  remove(item: T): void {
    const prev = this.expiryOf.get(item);
    if (prev === undefined) return;
    this.expiryOf.delete(item);
    this.removeFromBucket(item, prev);
    if (this.expiryOf.size === 0) this.disarm();
  }

  /** Stops the timer and forgets every item. */
  close(): void {
    this.closed = true;
    this.disarm();
    this.buckets.clear();
    this.expiryOf.clear();
  }

  private roundUp(t: number): number {
    return (Math.floor(t / this.tickMs) + 1) * this.tickMs;
  }

  private removeFromBucket(item: T, at: number): void {
    const bucket = this.buckets.get(at);
    if (bucket === undefined) return;
    bucket.delete(item);
    if (bucket.size === 0) this.buckets.delete(at);
  }

  private arm(): void {
    if (this.timer !== undefined || this.closed) return;
    const now = this.clock.now();
    // Never schedule for a boundary already passed; the first boundary due is processed on wake.
    if (this.nextBoundary <= now - this.tickMs) this.nextBoundary = this.roundUp(now - this.tickMs);
    const delay = Math.max(0, this.nextBoundary - now);
    this.timer = unrefTimer(this.clock.setTimeout(() => this.wake(), Math.ceil(delay)));
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private wake(): void {
    this.timer = undefined;
    if (this.closed) return;
    const now = this.clock.now();
    const due: T[] = [];
    // Walk the boundaries that have passed; after a long stall walk the buckets instead.
    const passed = Math.floor((now - this.nextBoundary) / this.tickMs) + 1;
    if (passed > this.buckets.size + 1) {
      for (const [at, bucket] of this.buckets) if (at <= now) this.drain(at, bucket, due);
      this.nextBoundary = this.roundUp(now);
    } else {
      while (this.nextBoundary <= now) {
        const bucket = this.buckets.get(this.nextBoundary);
        if (bucket !== undefined) this.drain(this.nextBoundary, bucket, due);
        this.nextBoundary += this.tickMs;
      }
    }
    if (this.expiryOf.size > 0) this.arm();
    if (due.length > 0) this.onExpire(due);
  }

  private drain(at: number, bucket: Set<T>, into: T[]): void {
    this.buckets.delete(at);
    for (const item of bucket) {
      this.expiryOf.delete(item);
      into.push(item);
    }
  }
}
