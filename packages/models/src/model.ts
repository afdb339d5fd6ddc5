/**
 * `model(client, '/users/{id}', { schema })`: a typed model over a path template, after
 * curator-x-async's ModeledFramework (a ModelSpec: ZPath, serializer, create mode, TTL, ACL).
 * `.at({ id })` is one node (model-node.ts); `.cached()` keeps every instance in memory
 * (cached-model.ts).
 */
import { CreateMode, InvalidArgumentError, NoNodeError, type ACL, type Client, type Stat } from '@tenure/client';
import { joinPath } from '@tenure/protocol';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { CachedModel } from './cached-model.js';
import { ModelCodec } from './model-codec.js';
import { ModelNode, readCompression, type CreateSettings } from './model-node.js';
import { PathTemplate, type ParamNames, type PathParams, type ResolvedParams } from './path-template.js';
import { isStandardSchema } from './schema.js';
import { jsonSerializer, type ModelSerializer } from './serializer.js';

export interface ModelOptions<S extends StandardSchemaV1> {
  /** A Standard Schema (zod, valibot, arktype, ...): every value written and read is checked by it. */
  schema: S;
  /** Default: JSON in UTF-8, as Curator's JacksonModelSerializer. */
  serializer?: ModelSerializer;
  /** How `set()` creates nodes. Default PERSISTENT (ModelSpec's default). */
  createMode?: CreateMode;
  /** The TTL in ms, for the TTL modes (ModelSpec's `withTtl`). */
  ttl?: number;
  /** The ACL of created nodes. Default: the client's aclProvider. */
  acl?: readonly ACL[];
  /**
   * Compress what is written and decompress what is read with the client's `compression`
   * provider (Curator's `CreateOption.compress`; false is `uncompress`). Default: the client's
   * `byDefault`, as Curator's ModeledFramework follows `compressionEnabled()`.
   */
  compressed?: boolean;
}

/** `.list()`'s arguments: the parameters other than the last one (none when there are no others). */
export type ListArguments<T extends string> = [Exclude<ParamNames<T>, LastParam<T>>] extends [never]
  ? [params?: Record<string, never>]
  : [params: { readonly [K in Exclude<ParamNames<T>, LastParam<T>>]: string | number | bigint }];

/** The name of a template's last parameter when it is the last node name ('id' for '/orgs/{org}/users/{id}'). */
export type LastParam<T extends string> = LastSegment<T> extends `{${infer P}}` ? P : never;
type LastSegment<T extends string> = T extends `${string}/${infer Rest}` ? LastSegment<Rest> : T;

/** `.at()`'s arguments: none for a template without parameters, else a value for each. */
export type AtArguments<T extends string> = [ParamNames<T>] extends [never] ? [params?: PathParams<T>] : [params: PathParams<T>];

export class Model<T extends string, S extends StandardSchemaV1> {
  readonly template: PathTemplate<T>;
  private readonly codec: ModelCodec<S>;
  private readonly settings: CreateSettings;

  constructor(
    readonly client: Client,
    template: T,
    options: ModelOptions<S>,
  ) {
    if (!client || typeof client.getData !== 'function') throw new InvalidArgumentError('model: a client is required');
    if (!isStandardSchema(options?.schema))
      throw new InvalidArgumentError(
        'model: `schema` must be a Standard Schema (zod, valibot, arktype, ...: an object with ~standard.validate)',
      );
    this.template = new PathTemplate(template);
    this.codec = new ModelCodec(options.schema, options.serializer ?? jsonSerializer);
    const createMode = options.createMode ?? CreateMode.PERSISTENT;
    const ttlMode = createMode === CreateMode.PERSISTENT_WITH_TTL || createMode === CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL;
    if (options.ttl !== undefined && (!ttlMode || !(options.ttl > 0)))
      throw new InvalidArgumentError(`model ${template}: ttl needs a TTL create mode and a positive number of ms`);
    if (ttlMode && options.ttl === undefined) throw new InvalidArgumentError(`model ${template}: a TTL create mode needs ttl`);
    this.settings = { createMode, ttlMs: options.ttl, acl: options.acl, compressed: options.compressed };
  }

  get schema(): S {
    return this.codec.schema;
  }

  /** The node at `params` ('/users/{id}' with `{ id: 'alice' }` is '/users/alice'); ModelPathError for a value that is not a node name. */
  at(...args: AtArguments<T>): ModelNode<S> {
    return new ModelNode(this.client, this.template.resolve(args[0] ?? {}), this.codec, this.settings);
  }

  /** The parameters of `path` if it is an instance of the template, else undefined. */
  match(path: string): ResolvedParams<T> | undefined {
    return this.template.match(path);
  }

  /**
   * The instances under one parent, read now (Curator's `childrenAsZNodes()`): for '/users/{id}',
   * every child of '/users'; for '/orgs/{org}/users/{id}', `list({ org })`. Each is read and
   * checked (ModelValidationError for one that is not a model). A missing parent is an empty list.
   */
  async list(
    ...args: ListArguments<T>
  ): Promise<Array<{ path: string; params: ResolvedParams<T>; value: StandardSchemaV1.InferOutput<S>; stat: Stat }>> {
    const parent = this.template.parentOfLast(args[0] ?? {});
    if (!parent)
      throw new InvalidArgumentError(`model ${this.template.template}: list() needs a template whose last node name is a parameter`);
    let names: string[];
    try {
      names = (await this.client.getChildren(parent.path)).children.sort();
    } catch (err) {
      if (err instanceof NoNodeError) return [];
      throw err;
    }
    const read = await Promise.all(
      names.map(async (name) => {
        const path = joinPath(parent.path, name);
        try {
          const { data, stat } = await this.client.getData(path, readCompression(this.settings));
          return { path, params: this.template.match(path)!, value: await this.codec.decode(data, path), stat };
        } catch (err) {
          if (err instanceof NoNodeError) return undefined; // deleted since the listing
          throw err;
        }
      }),
    );
    return read.filter((r) => r !== undefined);
  }

  /** Every instance of the template kept in memory by a TreeCache; `start()` it. */
  cached(): CachedModel<T, S> {
    return new CachedModel(
      this.client,
      this.template,
      this.codec,
      (path, options) => new ModelNode(this.client, path, this.codec, this.settings).read(options),
      this.settings.compressed,
    );
  }
}

/** A typed model over a path template; see {@link Model}. */
export function model<const T extends string, S extends StandardSchemaV1>(
  client: Client,
  template: T,
  options: ModelOptions<S>,
): Model<T, S> {
  return new Model(client, template, options);
}
