/**
 * How TreeCache learns of changes, in either of two ways:
 * - persistent (ZooKeeper 3.6+, the embedded server): one `addWatch(root, recursive)`. Its events
 *   name the node that changed (a recursive watch carries no NodeChildrenChanged: creations and
 *   deletions arrive per node), and its `reset` says events may have been missed.
 * - one-shot (ZooKeeper 3.5, or `persistentWatches: false`): every read sets a watch (getData,
 *   getChildren; exists on a missing root) and each event says what to read again.
 */
import {
  ErrorCode,
  KeeperError,
  type Client,
  type PersistentWatch,
  type PersistentWatchEvent,
  type WatchEvent,
  type WatchOptions,
} from '@tenure/client';

/** What the watches ask of the cache. */
export interface TreeReader {
  readonly root: string;
  /** False once the cache closed: late events are ignored. */
  isOpen(): boolean;
  /** Reads `path` again; with `children`, its children's names too. */
  refresh(path: string, children: boolean): void;
  /** Re-reads the whole tree: events may have been missed. */
  resync(): void;
  /** Whether `path` is cached (the root, or within maxDepth). */
  inScope(path: string): boolean;
}

export interface TreeWatches {
  readonly mode: 'persistent' | 'one-shot';
  /** What the reads pass to getData / getChildren / exists: the one-shot watch, or nothing. */
  readonly onReads: WatchOptions | undefined;
  /** In place, so the reads may begin. */
  readonly armed: boolean;
  /** A set-up in flight (close waits for it, so that what it sets is removed too). */
  readonly arming: Promise<unknown> | null;
  /** Whether the watches see for themselves what a new session missed (a persistent watch's reset). */
  readonly coverNewSession: boolean;
  /** Sets the watches up. False when the server has no persistent watches; other failures throw. */
  arm(): Promise<boolean>;
}

export class PersistentTreeWatch implements TreeWatches {
  readonly mode = 'persistent';
  readonly onReads = undefined;
  arming: Promise<unknown> | null = null;
  private watch: PersistentWatch | null = null;

  constructor(
    private readonly client: Client,
    private readonly recursive: boolean,
    private readonly reader: TreeReader,
  ) {}

  get armed(): boolean {
    return this.watch !== null;
  }

  get coverNewSession(): boolean {
    return this.watch !== null;
  }

  async arm(): Promise<boolean> {
    if (this.watch !== null) return true;
    const adding = this.client.addWatch(this.reader.root, { recursive: this.recursive, listener: this.onEvent });
    this.arming = adding.catch(() => {});
    try {
      this.watch = await adding;
      return true;
    } catch (err) {
      if (err instanceof KeeperError && err.keeperCode === ErrorCode.UNIMPLEMENTED) return false; // a 3.5 server
      throw err;
    } finally {
      this.arming = null;
    }
  }

  private readonly onEvent = (event: PersistentWatchEvent): void => {
    const reader = this.reader;
    if (!reader.isOpen()) return;
    if (event.type === 'reset') return reader.resync();
    if (!reader.inScope(event.path)) return;
    if (event.type === 'NodeCreated' || event.type === 'NodeDataChanged' || event.type === 'NodeDeleted') reader.refresh(event.path, false);
  };
}

export class OneShotTreeWatches implements TreeWatches {
  readonly mode = 'one-shot';
  readonly onReads: WatchOptions;
  readonly armed = true;
  readonly arming = null;
  readonly coverNewSession = false;

  constructor(private readonly reader: TreeReader) {
    this.onReads = { watch: this.onEvent };
  }

  arm(): Promise<boolean> {
    return Promise.resolve(true); // set by the reads
  }

  private readonly onEvent = (event: WatchEvent): void => {
    const reader = this.reader;
    if (!reader.isOpen()) return;
    switch (event.type) {
      case 'NodeCreated': // the root's exists watch
      case 'NodeChildrenChanged':
        return reader.refresh(event.path, true);
      case 'NodeDataChanged':
      case 'NodeDeleted':
        return reader.refresh(event.path, false);
    }
  };
}
