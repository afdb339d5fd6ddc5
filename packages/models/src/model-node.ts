/**
 * One node of a model: a path template resolved (`model.at({ id })`), read and written through
 * the model's schema and serializer, with curator-x-async ModeledFramework's semantics.
 *
 * Protocol (Curator's, ModelSpec's default options):
 * 1. `set(value)`: the schema checks the value (nothing is sent if it fails), then setData, at
 *    `version` if given; NoNode → create with the model's mode, ACL and TTL, parents as
 *    containers; NodeExists there (created meanwhile) → setData again. This is Curator's create
 *    with `setDataIfExists`, in the order that costs one round trip for an existing node. A
 *    sequential mode always creates.
 * 2. `read()`: getData; the bytes are deserialized and checked by the schema
 *    (ModelValidationError with the path if they are not a model). NoNodeError if missing.
 * 3. `update(fn)`: versioned read-modify-write (versioned-update.ts).
 * 4. `delete()`: a guaranteed delete (Curator's default `DeleteOption.guaranteed`), at `version`
 *    if given. `children()`: getChildren, names sorted.
 * 5. `watch()`: an async iterable of the values (model-watch.ts).
 */
import { NoNodeError, NodeExistsError, type ACL, type Client, type CreateMode, type OperationOptions, type Stat } from '@tenure/client';
import { isSequentialMode } from '@tenure/protocol';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { ModelCodec } from './model-codec.js';
import { ModelWatch, type ModelSnapshot, type ModelWatchOptions } from './model-watch.js';
import { versionedUpdate, type UpdateOptions } from './versioned-update.js';

/** How a model's nodes are created (ModelSpec's createMode, ttl and aclList). */
export interface CreateSettings {
  createMode: CreateMode;
  ttlMs: number | undefined;
  acl: readonly ACL[] | undefined;
  /** Compress writes and decompress reads (Curator's CreateOption.compress / uncompress); undefined: the client's default. */
  compressed: boolean | undefined;
}

/** The compression options of a read (`decompressed`) or a write (`compressed`), omitted for the client's default. */
export const readCompression = (settings: CreateSettings): { decompressed?: boolean } =>
  settings.compressed === undefined ? {} : { decompressed: settings.compressed };
const writeCompression = (settings: CreateSettings): { compressed?: boolean } =>
  settings.compressed === undefined ? {} : { compressed: settings.compressed };

export interface SetOptions extends OperationOptions {
  /** setData at this version when the node exists (BadVersionError otherwise). Default -1: any. */
  version?: number;
}

export interface DeleteModelOptions extends OperationOptions {
  /** Delete only at this version (BadVersionError otherwise). Default -1: any. */
  version?: number;
}

export class ModelNode<S extends StandardSchemaV1> {
  constructor(
    private readonly client: Client,
    /** The node's path. */
    readonly path: string,
    private readonly codec: ModelCodec<S>,
    private readonly settings: CreateSettings,
  ) {}

  /** The node's value, checked by the schema, and its Stat. NoNodeError when it is missing; ModelValidationError when it is not a model. */
  async read(options?: OperationOptions): Promise<ModelSnapshot<StandardSchemaV1.InferOutput<S>>> {
    const { data, stat } = await this.client.getData(this.path, { ...options, ...readCompression(this.settings) });
    return { value: await this.codec.decode(data, this.path), stat };
  }

  /** The node's Stat, or null when it is missing. */
  exists(options?: OperationOptions): Promise<Stat | null> {
    return this.client.exists(this.path, options);
  }

  /**
   * Creates the node with `value`, or sets it if it exists (Curator's `set`). The value is checked
   * first: one that fails its schema is a ModelValidationError and nothing is written. Resolves to
   * the node's path (the created name, for a sequential mode) and Stat.
   */
  async set(value: StandardSchemaV1.InferInput<S>, options: SetOptions = {}): Promise<{ path: string; stat: Stat }> {
    const bytes = await this.codec.encode(value, this.path);
    // A sequential mode always creates. Otherwise setData goes first: set() mostly finds its node
    // (one round trip), and a missing one costs one more, as an existing one does in Curator's
    // create-first order; the outcomes are the same.
    const sequential = isSequentialMode(this.settings.createMode);
    let create = sequential;
    for (;;) {
      if (create) {
        try {
          // A NodeExists after a lost reply may be our own create: either way we set the data next,
          // so the retry's answer will do ('raw'). A sequential create keeps the client's proof.
          const created = await this.create(bytes, sequential ? options : { ...options, retryAmbiguousWrites: 'raw' });
          return { path: created.path, stat: created.stat };
        } catch (err) {
          if (!(err instanceof NodeExistsError)) throw err; // created meanwhile: set it
        }
      }
      try {
        const stat = await this.client.setData(this.path, bytes, {
          version: options.version ?? -1,
          signal: options.signal,
          ...writeCompression(this.settings),
        });
        return { path: this.path, stat };
      } catch (err) {
        if (!(err instanceof NoNodeError)) throw err;
        create = true;
      }
    }
  }

  /**
   * A versioned read-modify-write: reads the node, writes `fn(current)` at the version read, and
   * starts over when someone wrote in between (BadVersion), until it goes through. `fn` may run
   * more than once; it should only compute. Resolves to the value written (the schema's output) and
   * the node's new Stat.
   */
  update(
    fn: (
      current: StandardSchemaV1.InferOutput<S>,
      stat: Stat | undefined,
    ) => StandardSchemaV1.InferInput<S> | Promise<StandardSchemaV1.InferInput<S>>,
    options?: UpdateOptions<StandardSchemaV1.InferOutput<S>>,
  ): Promise<ModelSnapshot<StandardSchemaV1.InferOutput<S>>> {
    return versionedUpdate(
      this.client,
      this.path,
      {
        read: async (signal) => {
          try {
            return await this.read({ signal });
          } catch (err) {
            if (err instanceof NoNodeError) return undefined;
            throw err;
          }
        },
        check: (value) => this.codec.check(value, this.path),
        write: (bytes, version, signal) =>
          this.client.setData(this.path, bytes, { version, signal, retryAmbiguousWrites: 'prove', ...writeCompression(this.settings) }),
        create: async (bytes, signal) => (await this.create(bytes, { signal, retryAmbiguousWrites: 'prove' })).stat,
      },
      fn,
      options,
    );
  }

  /** Deletes the node, retried in the background after a connection loss (a guaranteed delete). NoNodeError when it is missing. */
  delete(options: DeleteModelOptions = {}): Promise<void> {
    return this.client.delete(this.path, { version: options.version ?? -1, guaranteed: true, signal: options.signal });
  }

  /** The names of the node's children, sorted. */
  async children(options?: OperationOptions): Promise<string[]> {
    return (await this.client.getChildren(this.path, options)).children.sort();
  }

  /**
   * The node's values as they change: first what it holds now (`undefined` when missing), then
   * each change. Leave the loop, call `close()` or abort `signal` to stop; the client's close ends
   * it with ClosedError; a value that fails the schema ends it with ModelValidationError.
   */
  watch(options?: ModelWatchOptions): ModelWatch<StandardSchemaV1.InferOutput<S>> {
    return new ModelWatch(this.client, this.path, (bytes, path) => this.codec.decode(bytes, path), {
      ...options,
      ...readCompression(this.settings),
    });
  }

  private create(bytes: Uint8Array, options: OperationOptions) {
    return this.client.create(this.path, bytes, {
      mode: this.settings.createMode,
      ...(this.settings.acl && this.settings.acl.length > 0 ? { acl: this.settings.acl } : {}),
      ...(this.settings.ttlMs !== undefined ? { ttlMs: this.settings.ttlMs } : {}),
      createParentContainers: true,
      signal: options.signal,
      ...(options.retryAmbiguousWrites ? { retryAmbiguousWrites: options.retryAmbiguousWrites } : {}),
      ...writeCompression(this.settings),
    });
  }
}
