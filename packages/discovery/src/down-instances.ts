/**
 * Curator's DownInstanceManager: instances a caller reported (`noteError`), skipped once reported
 * `errorThreshold` times, for `timeoutMs` after the first report. Purged at most every
 * `timeoutMs / 2`. Local to this process; nothing is written to ZooKeeper.
 */
import type { Clock } from '@tenure/client';
import { instanceKey } from './instance-key.js';
import type { ServiceInstance } from './service-instance.js';
import { InvalidArgumentError } from '@tenure/client';

/** Curator's DownInstancePolicy; defaults 30,000 ms and 2. */
export interface DownInstancePolicy {
  timeoutMs?: number;
  errorThreshold?: number;
}

interface Entry {
  firstErrorAt: number;
  errors: number;
}

export class DownInstances {
  readonly timeoutMs: number;
  readonly errorThreshold: number;
  private readonly entries = new Map<string, Entry>();
  private lastPurge: number;

  constructor(
    private readonly clock: Clock,
    policy: DownInstancePolicy = {},
  ) {
    this.timeoutMs = policy.timeoutMs ?? 30_000;
    this.errorThreshold = policy.errorThreshold ?? 2;
    if (!(this.timeoutMs >= 0))
      throw new InvalidArgumentError(`downInstancePolicy.timeoutMs must be >= 0, got ${String(policy.timeoutMs)}`);
    if (!(Number.isInteger(this.errorThreshold) && this.errorThreshold >= 1)) {
      throw new InvalidArgumentError(`downInstancePolicy.errorThreshold must be an integer >= 1, got ${String(policy.errorThreshold)}`);
    }
    this.lastPurge = clock.now();
  }

  /** No instance was reported (or every report expired and was purged). */
  get isEmpty(): boolean {
    if (this.entries.size > 0) this.purge();
    return this.entries.size === 0;
  }

  noteError(instance: ServiceInstance<unknown>): void {
    this.purge();
    const key = instanceKey(instance);
    const entry = this.entries.get(key);
    if (entry) entry.errors++;
    else this.entries.set(key, { firstErrorAt: this.clock.now(), errors: 1 });
  }

  isDown(instance: ServiceInstance<unknown>): boolean {
    if (this.entries.size === 0) return false;
    this.purge();
    const entry = this.entries.get(instanceKey(instance));
    return entry !== undefined && entry.errors >= this.errorThreshold;
  }

  private purge(): void {
    const now = this.clock.now();
    if (now - this.lastPurge < this.timeoutMs / 2) return;
    this.lastPurge = now;
    for (const [key, entry] of this.entries) if (now - entry.firstErrorAt >= this.timeoutMs) this.entries.delete(key);
  }
}
