/**
 * The watches set through one tracking view (`client.trackingWatches()`, Curator's
 * newWatcherRemoveCuratorFramework): what `removeAllWatches()` must take back. Entries whose watch
 * already fired are dropped lazily, so a long-lived recipe's tracker does not grow.
 */
import type { PersistentWatch } from './persistent-watch.js';
import type { WatchCallback } from './watch-events.js';
import type { OneShotKind, WatchRegistry } from './watch-registry.js';

interface OneShotEntry {
  kind: OneShotKind;
  /** Server path. */
  full: string;
  callbacks: Set<WatchCallback>;
}

export class WatchTracker {
  /** By kind and server path. */
  private readonly oneShots = new Map<string, OneShotEntry>();
  private readonly persistent = new Set<PersistentWatch>();
  private count = 0;
  private pruneAt = 64;

  constructor(private readonly registry: WatchRegistry) {}

  addOneShot(kind: OneShotKind, full: string, callback: WatchCallback): void {
    const key = `${kind}\0${full}`;
    let e = this.oneShots.get(key);
    if (!e) this.oneShots.set(key, (e = { kind, full, callbacks: new Set() }));
    if (e.callbacks.has(callback)) return;
    e.callbacks.add(callback);
    if (++this.count >= this.pruneAt) this.prune();
  }

  addPersistent(watch: PersistentWatch): void {
    this.persistent.add(watch);
  }

  /** How many tracked watches are still registered (for tests and diagnostics). */
  get size(): number {
    this.prune();
    return this.count + this.persistent.size;
  }

  /**
   * Takes every tracked one-shot watch out of the registry (its callback gets the usual
   * *WatchRemoved event) and returns the server paths whose server-side watches must be re-synced,
   * plus the persistent watches still open, for the caller to close.
   */
  takeAll(): { paths: string[]; persistent: PersistentWatch[] } {
    const paths = new Set<string>();
    for (const { kind, full, callbacks } of this.oneShots.values()) {
      let removed = 0;
      for (const cb of callbacks) if (this.registry.removeOneShotOf(kind, full, cb)) removed++;
      if (removed > 0) paths.add(full);
    }
    this.oneShots.clear();
    this.count = 0;
    this.pruneAt = 64;
    const persistent = [...this.persistent].filter((w) => !w.closed);
    this.persistent.clear();
    return { paths: [...paths], persistent };
  }

  /** Drops entries whose watch fired or was removed by other means. */
  private prune(): void {
    let count = 0;
    for (const [key, e] of this.oneShots) {
      for (const cb of e.callbacks) if (!this.registry.holdsOneShot(e.kind, e.full, cb)) e.callbacks.delete(cb);
      if (e.callbacks.size === 0) this.oneShots.delete(key);
      count += e.callbacks.size;
    }
    for (const w of this.persistent) if (w.closed) this.persistent.delete(w);
    this.count = count;
    this.pruneAt = Math.max(64, count * 2);
  }
}
