/**
 * PersistentTtlNode: a node that lives while its process touches it, and goes by itself a TTL
 * after the process stops, with Curator's layout (Curator's PersistentTtlNode).
 *
 * Protocol:
 * 1. A PersistentNode keeps a CONTAINER node at `path` holding our data (watchable like any node).
 * 2. Every `ttlMs / touchScheduleFactor` (and as soon as the container is created) we touch its
 *    child `<path>/touch`: setData, or create it as PERSISTENT_WITH_TTL with `ttlMs` if missing.
 *    Touching the child, not the parent, keeps the parent's watchers quiet.
 * 3. When the process stops touching, the child expires after `ttlMs` (the server's TTL reaper),
 *    and the empty container is then reaped too.
 * 4. close() stops touching and leaves both nodes to the TTL, as Curator does, so that another
 *    instance can take over the same path meanwhile. Our watches are removed.
 */
import { EventEmitter } from 'eventemitter3';
import {
  CreateMode,
  NodeExistsError,
  NoNodeError,
  RecipeLifecycle,
  safeEmitter,
  triageFailure,
  type Client,
  type NodeData,
  type RecipeState,
  type SafeEmit,
  type TimerHandle,
  type WaitOptions,
  InvalidArgumentError,
} from '@tenure/client';
import { joinPath, validatePath } from '@tenure/protocol';
import { PersistentNode } from './persistent-node.js';
import type { PersistentNodeEvents, PersistentNodeOptions } from './persistent-node-options.js';

/** `path` is the container's; `data` its data; the rest as for PersistentNode. */
export interface PersistentTtlNodeOptions extends Pick<
  PersistentNodeOptions,
  'path' | 'data' | 'useParentCreation' | 'acl' | 'retryPolicy' | 'logger'
> {
  /** How long the node outlives the last touch. */
  ttlMs: number;
  /** Default 'touch'. */
  childNodeName?: string;
  /** The child is touched every ttlMs / touchScheduleFactor. Default 2. */
  touchScheduleFactor?: number;
}

export class PersistentTtlNode extends EventEmitter<PersistentNodeEvents> {
  readonly path: string;
  readonly childPath: string;
  readonly ttlMs: number;
  private readonly node: PersistentNode;
  private readonly intervalMs: number;
  private timer: TimerHandle | null = null;
  private touching: Promise<void> | null = null;
  /** No more touches: closed, or the client closed. */
  private stopped = false;
  private readonly life: RecipeLifecycle;
  private readonly emitSafely: SafeEmit<PersistentNodeEvents>;

  constructor(
    private readonly client: Client,
    options: PersistentTtlNodeOptions,
  ) {
    super();
    validatePath(options.path);
    const { ttlMs } = options;
    if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs < 1)
      throw new InvalidArgumentError(`PersistentTtlNode: ttlMs must be >= 1, got ${String(ttlMs)}`);
    const factor = options.touchScheduleFactor ?? 2;
    if (!(factor >= 1)) throw new InvalidArgumentError(`PersistentTtlNode: touchScheduleFactor must be >= 1, got ${String(factor)}`);
    this.path = options.path;
    this.ttlMs = ttlMs;
    this.intervalMs = Math.max(1, Math.floor(ttlMs / factor));
    this.childPath = joinPath(options.path, options.childNodeName ?? 'touch');
    this.life = new RecipeLifecycle(`PersistentTtlNode ${options.path}`);
    this.emitSafely = safeEmitter<PersistentNodeEvents>(this, options.logger);
    this.node = new PersistentNode(client, {
      path: options.path,
      mode: CreateMode.CONTAINER,
      data: options.data,
      useParentCreation: options.useParentCreation,
      acl: options.acl,
      retryPolicy: options.retryPolicy,
      logger: options.logger,
      deleteOnClose: false,
    });
    this.node.on('created', (p) => {
      this.emitSafely('created', p);
      this.touch(); // a new container is reaped once empty: give it its child now
    });
    this.node.on('deleted', (p) => this.emitSafely('deleted', p));
    this.node.on('conflict', (e) => this.emitSafely('conflict', e));
    this.node.on('error', (e) => this.emitSafely('error', e));
  }

  get actualPath(): string | undefined {
    return this.node.actualPath;
  }

  /** `'latent'` before start(), `'started'`, then `'closed'` (the recipe lifecycle). */
  get state(): RecipeState {
    return this.life.state;
  }

  start(): Promise<void> {
    return this.life.start(async () => {
      await this.node.start();
      this.client.closedSignal.addEventListener('abort', this.stopTouching, { once: true });
      this.arm();
    });
  }

  waitForInitialCreate(options?: WaitOptions): Promise<void> {
    return this.node.waitForInitialCreate(options);
  }

  getData(): Buffer {
    return this.node.getData();
  }

  setData(data: NodeData | null): Promise<void> {
    return this.node.setData(data);
  }

  /** Stops touching. The nodes stay until the TTL runs out (then the server removes both). */
  close(): Promise<void> {
    return this.life.close(async () => {
      this.stopTouching();
      this.client.closedSignal.removeEventListener('abort', this.stopTouching);
      await this.touching;
      await this.node.close();
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** On close, and when the client closes: touching is over. */
  private readonly stopTouching = (): void => {
    this.stopped = true;
    if (this.timer !== null) this.client.clock.clearTimeout(this.timer);
    this.timer = null;
  };

  private arm(): void {
    if (this.stopped) return;
    this.timer = this.client.clock.setTimeout(() => {
      this.timer = null;
      this.touch();
      this.arm();
    }, this.intervalMs);
  }

  private touch(): void {
    if (this.stopped || this.touching) return;
    this.touching = this.touchOnce()
      .catch((err: unknown) => {
        // NoNode: the container is not there yet (the PersistentNode re-creates it and we touch then).
        if (err instanceof NoNodeError || this.stopped || !(err instanceof Error)) return;
        const verdict = triageFailure(err, this.client.closedSignal);
        if (verdict === 'closed') return;
        if (verdict === 'stop') this.stopTouching(); // NoAuth: touching stops, as the node does
        this.emitSafely('error', err);
      })
      .finally(() => (this.touching = null));
  }

  private async touchOnce(): Promise<void> {
    const client = this.client;
    try {
      await client.setData(this.childPath, null);
      return;
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
    }
    try {
      // Ours or not, a child that exists is touched below: a lost reply's NodeExists will do.
      await client.create(this.childPath, null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttlMs: this.ttlMs, retryAmbiguousWrites: 'raw' });
    } catch (err) {
      if (!(err instanceof NodeExistsError)) throw err;
      await client.setData(this.childPath, null);
    }
  }
}
