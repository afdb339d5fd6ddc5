/**
 * The engine of SharedValue and SharedCount: Curator's SharedValue, a node's data cached and kept
 * fresh by a watch.
 *
 * Node: `<path>`, PERSISTENT (parents as containers), created by start() with the seed if it is
 * missing. Its data is the value, in the codec's bytes.
 *
 * Protocol:
 * - start(): create with the seed (NodeExists is fine), then getData with a watch; resolves after
 *   that first read. Every watch event, and every reconnect, reads again (re-arming the watch).
 *   If the node is gone, an exists watch waits for it to come back.
 * - The cache moves only forward: to a higher version, or to a new incarnation of the node (another
 *   czxid). Each move emits `change`.
 * - trySet(next, expected): false at once if `expected` is not the cached value (version and
 *   bytes). Otherwise setData with `expected.version`: true (the cache takes the new version), or
 *   false after re-reading. A write whose connection went in flight is settled by versionedWrite.
 * - close() removes our watches (tracked view) and our state listener.
 */
import { EventEmitter } from 'eventemitter3';
import {
  ConnectionState,
  IllegalStateError,
  NoNodeError,
  NodeExistsError,
  PassRunner,
  RecipeLifecycle,
  type Client,
  type RecipeState,
  type Stat,
  type WatchEvent,
} from '@tenure/client';
import type { Codec } from './codecs.js';
import { ConnectionDrops, versionedWrite } from './versioned-write.js';

/** A cached value and the node version it was read at (Curator's VersionedValue). */
export interface VersionedValue<T> {
  readonly value: T;
  readonly version: number;
}

export interface SharedValueEvents<T> {
  /** The cached value moved to a newer version (by anyone, ourselves included). */
  change: (value: VersionedValue<T>) => void;
}

export abstract class SharedNode<T> extends EventEmitter<SharedValueEvents<T>> implements AsyncDisposable {
  private data: Buffer;
  private version = -1;
  private czxid = -1n;
  private decoded: VersionedValue<T> | null = null;
  private readonly life: RecipeLifecycle;
  /** Re-reads, one at a time and once more when asked meanwhile (the kit's "run once more"). */
  private readonly rereads: PassRunner;
  /** Reads in flight: close() waits for them, so that no watch is set after it removed ours. */
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly watching: Client;
  private readonly drops: ConnectionDrops;
  private readonly onWatch = (event: WatchEvent): void => {
    if (!event.type.endsWith('Removed')) this.refresh();
  };
  private readonly onState = (s: ConnectionState): void => {
    if (s === ConnectionState.CONNECTED || s === ConnectionState.RECONNECTED || s === ConnectionState.READ_ONLY) this.refresh();
  };

  protected constructor(
    readonly client: Client,
    readonly path: string,
    seed: Buffer,
    private readonly codec: Codec<T>,
  ) {
    super();
    this.data = seed;
    this.watching = client.trackingWatches();
    this.drops = new ConnectionDrops(client);
    this.life = new RecipeLifecycle(`${this.constructor.name} ${path}`);
    this.rereads = new PassRunner(
      client.clock,
      () => this.read(),
      // The next watch event or reconnect reads again.
      (err) => this.client.logger.debug({ err, path: this.path }, 'shared value: re-read failed'),
    );
  }

  /** `'latent'` before start(), `'started'`, then `'closed'` (the recipe lifecycle). */
  get state(): RecipeState {
    return this.life.state;
  }

  /** Creates the node with the seed if it is missing, and resolves after the first read. */
  start(): Promise<void> {
    return this.life.start(async () => {
      try {
        // Seeded by us or another user, the node is there: any NodeExists will do.
        await this.client
          .create(this.path, this.data, { createParentContainers: true, retryAmbiguousWrites: 'raw' })
          .catch((err: unknown) => {
            if (!(err instanceof NodeExistsError)) throw err;
          });
        this.client.on('stateChanged', this.onState);
        await this.read();
      } catch (err) {
        await this.close();
        throw err;
      }
    });
  }

  /** The cached value and its version, with no round trip. Throws CorruptedValueError for bytes of another type. */
  getVersionedValue(): VersionedValue<T> {
    return (this.decoded ??= Object.freeze({ value: this.codec.decode(this.data, this.path), version: this.version }));
  }

  /** Stops watching; the node stays. */
  close(): Promise<void> {
    return this.life.close(async () => {
      this.rereads.stop();
      this.client.off('stateChanged', this.onState);
      this.drops.close();
      await this.rereads.whenIdle();
      await Promise.allSettled([...this.inflight]);
      await this.watching.removeAllWatches();
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Writes `next` if the node is still at `expected`; see the header. */
  protected async trySet(next: T, expected: VersionedValue<T>, operation: string): Promise<boolean> {
    this.checkStarted(operation);
    if (expected.version !== this.version || !this.codec.encode(expected.value).equals(this.data)) return false;
    const bytes = this.codec.encode(next);
    const mark = { version: this.version, czxid: this.czxid };
    for (;;) {
      const outcome = await versionedWrite(
        this.client,
        this.drops,
        this.path,
        mark,
        () => this.client.setData(this.path, bytes, { version: mark.version }),
        operation,
      );
      if (outcome.kind === 'written') {
        this.update(bytes, outcome.stat);
        return true;
      }
      if (outcome.kind === 'conflict') {
        await this.read();
        return false;
      }
    }
  }

  /** Writes `value` unconditionally. */
  protected async set(value: T, operation: string): Promise<void> {
    this.checkStarted(operation);
    const bytes = this.codec.encode(value);
    this.update(bytes, await this.client.setData(this.path, bytes));
  }

  private checkStarted(operation: string): void {
    if (!this.life.isStarted) throw new IllegalStateError(`${this.path}: ${operation}() needs start() first (and no close())`);
  }

  /** Queues a re-read behind the one in flight; requests made while one waits join it. Never rejects. */
  private refresh(): void {
    if (this.life.isStarted) this.rereads.run();
  }

  private read(): Promise<void> {
    if (!this.life.isStarted) return Promise.resolve();
    const p = this.readOnce();
    this.inflight.add(p);
    return p.finally(() => this.inflight.delete(p));
  }

  private async readOnce(): Promise<void> {
    try {
      const { data, stat } = await this.watching.getData(this.path, { watch: this.onWatch });
      this.update(data, stat);
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      // Gone: wait for it to come back (it may be back already).
      if ((await this.watching.exists(this.path, { watch: this.onWatch })) !== null) this.refresh();
    }
  }

  private update(data: Buffer, stat: Stat): void {
    if (stat.czxid === this.czxid && stat.version <= this.version) return;
    this.data = data;
    this.version = stat.version;
    this.czxid = stat.czxid;
    this.decoded = null;
    if (this.listenerCount('change') === 0) return;
    let value: VersionedValue<T>;
    try {
      value = this.getVersionedValue();
    } catch (err) {
      this.client.logger.warn({ err, path: this.path }, 'shared value: the node holds bytes of another type');
      return;
    }
    this.emit('change', value);
  }
}
