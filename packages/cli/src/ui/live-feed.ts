/**
 * The page server's live feed: ONE persistent recursive watch on `/` for the whole server, however
 * many pages are open. Events are gathered for a moment, then the overview is taken again and
 * pushed to every page (server-sent events) together with the paths that changed, for the Tree.
 *
 * When the server refuses persistent watches (ZooKeeper before 3.6, or an embedded server with
 * `persistentWatches: false`) the feed says so (`mode: 'polling'`) and the pages poll instead;
 * snapshots are then taken on demand, at most one per `pollMs / 2`.
 */
import { KeeperError, type Client, type PersistentWatch, type PersistentWatchEvent } from '@tenure/client';
import type { LiveMode, Overview, TreeChange } from './api-types.js';

/** Takes one overview (the recipe report and the sessions). */
export type OverviewSource = () => Promise<Omit<Overview, 'version' | 'at'>>;

export type FeedMessage = { type: 'overview'; overview: Overview } | { type: 'tree'; change: TreeChange };

export interface LiveFeedOptions {
  /** How long events are gathered before a new snapshot (ms). */
  settleMs?: number;
  /** In push mode, a snapshot is taken at least this often anyway (sessions change without node events). */
  heartbeatMs?: number;
  /** How often pages poll in polling mode. */
  pollMs?: number;
  /** Clock for `at`. */
  now?: () => number;
}

/** More changed paths than this in one batch are sent as "anything may have changed". */
const MAX_PATHS = 500;

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

export class LiveFeed {
  mode: LiveMode = 'push';
  /** Why the feed polls, or null. */
  reason: string | null = null;
  readonly pollMs: number;
  private watch: PersistentWatch | null = null;
  private readonly listeners = new Set<(m: FeedMessage) => void>();
  private latest: Overview | null = null;
  private version = 0;
  private building: Promise<Overview> | null = null;
  private rebuildAfter = false;
  private settleTimer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private changed = new Set<string>();
  private overflow = false;
  private closed = false;
  private readonly settleMs: number;
  private readonly heartbeatMs: number;
  private readonly now: () => number;

  constructor(
    private readonly client: Client,
    private readonly source: OverviewSource,
    options: LiveFeedOptions = {},
  ) {
    this.settleMs = options.settleMs ?? 100;
    this.heartbeatMs = options.heartbeatMs ?? 10_000;
    this.pollMs = options.pollMs ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /** Adds the watch (or settles for polling) and takes the first snapshot. */
  async start(): Promise<void> {
    try {
      this.watch = await this.client.addWatch('/', { recursive: true, listener: (ev) => this.onEvent(ev) });
      this.heartbeat = setInterval(() => this.schedule(0), this.heartbeatMs);
      this.heartbeat.unref();
    } catch (err) {
      if (!(err instanceof KeeperError)) throw err;
      this.mode = 'polling';
      this.reason = `the server refused a persistent watch (${err.message}); ZooKeeper 3.6 or later pushes changes`;
    }
    await this.snapshot();
  }

  /** Every message from now on; returns the unsubscribe function. */
  subscribe(listener: (m: FeedMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The newest overview; in polling mode a fresh one when the last is older than pollMs / 2. */
  async current(): Promise<Overview> {
    if (this.latest && (this.mode === 'push' || this.now() - this.latest.at < this.pollMs / 2)) return this.latest;
    return this.building ?? this.snapshot();
  }

  private onEvent(ev: PersistentWatchEvent): void {
    if (ev.type === 'reset') {
      this.overflow = true;
    } else if (this.changed.size < MAX_PATHS) {
      this.changed.add(ev.path);
      if (ev.type === 'NodeCreated' || ev.type === 'NodeDeleted') this.changed.add(parentOf(ev.path));
    } else {
      this.overflow = true;
    }
    this.schedule(this.settleMs);
  }

  private schedule(delayMs: number): void {
    if (this.closed || this.settleTimer) return;
    this.settleTimer = setTimeout(() => {
      this.settleTimer = null;
      this.flushTree();
      void this.snapshot().catch(() => undefined);
    }, delayMs);
  }

  private flushTree(): void {
    if (!this.overflow && this.changed.size === 0) return;
    const change: TreeChange = { paths: this.overflow ? null : [...this.changed].sort() };
    this.changed = new Set();
    this.overflow = false;
    this.emit({ type: 'tree', change });
  }

  /** Takes a snapshot; one at a time, and once more after one that ran while changes came in. */
  private snapshot(): Promise<Overview> {
    if (this.building) {
      this.rebuildAfter = true;
      return this.building;
    }
    this.building = (async () => {
      try {
        let overview: Overview;
        do {
          this.rebuildAfter = false;
          const at = this.now();
          let body: Omit<Overview, 'version' | 'at'>;
          try {
            body = await this.source();
          } catch (err) {
            body = {
              report: this.latest?.report ?? null,
              sessions: this.latest?.sessions ?? null,
              errors: [err instanceof Error ? err.message : String(err)],
            };
          }
          overview = { version: ++this.version, at, ...body };
          this.latest = overview;
          if (!this.closed) this.emit({ type: 'overview', overview });
        } while (this.rebuildAfter && !this.closed);
        return overview;
      } finally {
        this.building = null;
      }
    })();
    return this.building;
  }

  private emit(message: FeedMessage): void {
    for (const listener of this.listeners) listener(message);
  }

  /** Removes the watch and every timer. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.settleTimer) clearTimeout(this.settleTimer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.settleTimer = this.heartbeat = null;
    this.listeners.clear();
    await this.building?.catch(() => undefined);
    await this.watch?.close().catch(() => undefined);
    this.watch = null;
  }
}
