/**
 * CachedModel: every instance of a model's template kept in memory by a TreeCache, as
 * curator-x-async's CachedModeledFramework keeps its ModeledCache. Reads come from the cache,
 * typed; writes go to the server through the model.
 *
 * Protocol:
 * 1. A TreeCache (@tenure/cache) on the template's fixed prefix ('/users' for '/users/{id}'),
 *    as deep as the template goes below it; it sets and removes all the watches.
 * 2. Each node the cache reports created or changed whose path matches the template is decoded
 *    and checked by the schema, in the cache's order (one at a time, so an async schema cannot
 *    reorder them). A node with no data is skipped, as Curator's ModeledCache does (a parent
 *    created on the way), unless it held a model. A node that fails the schema is held as
 *    invalid: `get()` throws its ModelValidationError, `changes()` yields `{ type: 'invalid' }`,
 *    and `error` is emitted.
 * 3. `start()` resolves once the cache's first load is decoded (`initialized`).
 * 4. `close()` closes the cache (no watch left) and ends the iterators; the client's close ends
 *    them with ClosedError.
 */
import { EventEmitter } from 'eventemitter3';
import { TreeCache, type CachedNode } from '@tenure/cache';
import {
  ClosedError,
  RecipeLifecycle,
  asError,
  safeEmitter,
  type Client,
  type OperationOptions,
  type RecipeState,
  type SafeEmit,
  type Stat,
  type WaitOptions,
} from '@tenure/client';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { ModelValidationError } from './errors.js';
import type { ModelCodec } from './model-codec.js';
import type { ModelSnapshot } from './model-watch.js';
import type { PathParams, PathTemplate, ResolvedParams } from './path-template.js';
import { ValueStream, type ValueIterator } from './value-stream.js';

/** One cached instance of the template. */
export interface CachedInstance<T extends string, V> extends ModelSnapshot<V> {
  readonly path: string;
  readonly params: ResolvedParams<T>;
}

export type ModelChange<T extends string, V> =
  | { readonly type: 'initialized' }
  | ({ readonly type: 'created' } & CachedInstance<T, V>)
  | ({ readonly type: 'changed'; readonly previous: V | undefined } & CachedInstance<T, V>)
  | { readonly type: 'deleted'; readonly path: string; readonly params: ResolvedParams<T>; readonly previous: V | undefined }
  | {
      readonly type: 'invalid';
      readonly path: string;
      readonly params: ResolvedParams<T>;
      readonly stat: Stat;
      readonly error: ModelValidationError;
    };

export interface CachedModelEvents<T extends string, V> {
  change: (change: ModelChange<T, V>) => void;
  /** A node that fails the schema, or the cache's own `error` (a read refused for good, e.g. NoAuth). */
  error: (error: Error) => void;
}

type Entry<T extends string, V> =
  | { ok: true; instance: CachedInstance<T, V> }
  | { ok: false; path: string; params: ResolvedParams<T>; stat: Stat; error: ModelValidationError };

export class CachedModel<T extends string, S extends StandardSchemaV1>
  extends EventEmitter<CachedModelEvents<T, StandardSchemaV1.InferOutput<S>>>
  implements AsyncIterable<ModelChange<T, StandardSchemaV1.InferOutput<S>>>, AsyncDisposable
{
  /** The TreeCache underneath (its root is the template's fixed prefix). */
  readonly cache: TreeCache;
  private readonly life: RecipeLifecycle;
  private readonly entries = new Map<string, Entry<T, StandardSchemaV1.InferOutput<S>>>();
  private readonly stream = new ValueStream<ModelChange<T, StandardSchemaV1.InferOutput<S>>>();
  private readonly emitSafely: SafeEmit<CachedModelEvents<T, StandardSchemaV1.InferOutput<S>>>;
  /** Decodes run one after another, in the cache's order. */
  private queue: Promise<void> = Promise.resolve();
  private ready!: () => void;
  private readonly decoded: Promise<void>;

  constructor(
    private readonly client: Client,
    private readonly template: PathTemplate<T>,
    private readonly codec: ModelCodec<S>,
    /** A direct read of one node, as the model's `read()` does it. */
    private readonly readNode: (path: string, options?: OperationOptions) => Promise<ModelSnapshot<StandardSchemaV1.InferOutput<S>>>,
    /** The model's `compressed`: the cache reads with `decompressed` (Curator's CuratorCache COMPRESSED_DATA). */
    decompressed?: boolean,
  ) {
    super();
    const root = template.staticRoot;
    this.cache = new TreeCache(client, root.path, { maxDepth: root.depth, ...(decompressed === undefined ? {} : { decompressed }) });
    this.life = new RecipeLifecycle(`CachedModel ${template.template}`);
    this.emitSafely = safeEmitter<CachedModelEvents<T, StandardSchemaV1.InferOutput<S>>>(this, client.logger);
    this.decoded = new Promise((resolve) => (this.ready = resolve));
  }

  get state(): RecipeState {
    return this.life.state;
  }

  /** Starts the cache; resolves once its first load is read and checked. */
  start(options: WaitOptions = {}): Promise<void> {
    return this.life.start(async () => {
      this.cache.on('created', this.onCreated);
      this.cache.on('changed', this.onChanged);
      this.cache.on('deleted', this.onDeleted);
      this.cache.on('initialized', this.onInitialized);
      this.cache.on('error', this.onCacheError);
      this.client.closedSignal.addEventListener('abort', this.onClientClosed, { once: true });
      await this.cache.start(options);
      await this.client.wait(this.decoded, options, `CachedModel ${this.template.template}: initial load`);
    });
  }

  /** The cached instance at `params` (undefined when there is none); throws its ModelValidationError when the node is not a model. */
  get(params: PathParams<T>): ModelSnapshot<StandardSchemaV1.InferOutput<S>> | undefined {
    const entry = this.entries.get(this.template.resolve(params));
    if (entry && !entry.ok) throw entry.error;
    return entry ? { value: entry.instance.value, stat: entry.instance.stat } : undefined;
  }

  /**
   * The cached instance at `params`, or, when the cache has none, a read from the server
   * (Curator's `readThrough()`); NoNodeError when there is none there either.
   */
  async readThrough(params: PathParams<T>, options?: OperationOptions): Promise<ModelSnapshot<StandardSchemaV1.InferOutput<S>>> {
    return this.get(params) ?? this.readNode(this.template.resolve(params), options);
  }

  /** Every valid cached instance, by path. */
  list(): CachedInstance<T, StandardSchemaV1.InferOutput<S>>[] {
    return [...this.entries.values()]
      .flatMap((e) => (e.ok ? [e.instance] : []))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** How many instances are cached (invalid ones included). */
  get size(): number {
    return this.entries.size;
  }

  /** The changes from now on, until close, `signal` or leaving the loop. */
  changes(options: { signal?: AbortSignal } = {}): ValueIterator<ModelChange<T, StandardSchemaV1.InferOutput<S>>> {
    return this.stream.subscribe(options.signal);
  }

  [Symbol.asyncIterator](): AsyncIterator<ModelChange<T, StandardSchemaV1.InferOutput<S>>> {
    return this.changes();
  }

  /** Closes the cache (every watch removed) and ends the iterators. Idempotent. */
  close(): Promise<void> {
    return this.life.close(async () => {
      this.client.closedSignal.removeEventListener('abort', this.onClientClosed);
      await this.cache.close();
      this.cache.removeAllListeners();
      await this.queue;
      this.entries.clear();
      this.stream.end();
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private readonly onCreated = (node: CachedNode): void => this.absorb(node);
  private readonly onChanged = (node: CachedNode): void => this.absorb(node);
  private readonly onDeleted = (previous: CachedNode): void =>
    this.enqueue(() => {
      const params = this.template.match(previous.path);
      const entry = this.entries.get(previous.path);
      if (!params || !entry) return;
      this.entries.delete(previous.path);
      this.publish({ type: 'deleted', path: previous.path, params, previous: entry.ok ? entry.instance.value : undefined });
    });
  private readonly onInitialized = (): void =>
    this.enqueue(() => {
      this.ready();
      this.publish({ type: 'initialized' });
    });
  private readonly onCacheError = (err: Error): void => this.emitSafely('error', err);
  private readonly onClientClosed = (): void => this.stream.fail(new ClosedError(`client (CachedModel ${this.template.template})`));

  private absorb(node: CachedNode): void {
    const params = this.template.match(node.path);
    if (!params) return;
    // Decode now (a sync schema finishes at once); publish in the cache's order.
    const empty = node.data.length === 0;
    const decoding = this.codec.decode(node.data, node.path).then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    this.enqueue(async () => {
      const result = await decoding;
      if (!this.life.isStarted) return;
      const before = this.entries.get(node.path);
      // No data on a node we never held: a node on its way (Curator's ModeledCache skips it too);
      // on one we held, the model is gone from it: invalid.
      if (empty && before === undefined) return;
      if (!result.ok) {
        const error = result.error instanceof ModelValidationError ? result.error : asError(result.error);
        if (!(error instanceof ModelValidationError)) throw error;
        this.entries.set(node.path, { ok: false, path: node.path, params, stat: node.stat, error });
        this.publish({ type: 'invalid', path: node.path, params, stat: node.stat, error });
        this.emitSafely('error', error);
        return;
      }
      const instance = { path: node.path, params, value: result.value, stat: node.stat };
      this.entries.set(node.path, { ok: true, instance });
      if (before === undefined) this.publish({ type: 'created', ...instance });
      else this.publish({ type: 'changed', ...instance, previous: before.ok ? before.instance.value : undefined });
    });
  }

  private enqueue(step: () => void | Promise<void>): void {
    this.queue = this.queue.then(step).catch((err: unknown) => this.emitSafely('error', asError(err)));
  }

  private publish(change: ModelChange<T, StandardSchemaV1.InferOutput<S>>): void {
    this.stream.push(change);
    this.emitSafely('change', change);
  }
}
