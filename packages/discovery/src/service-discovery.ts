/**
 * ServiceDiscovery: a registry of services in curator-x-discovery's layout and JSON (Curator's
 * ServiceDiscoveryImpl), so Node services and Java services (Curator, Spring Cloud Zookeeper)
 * find each other.
 *
 * Nodes:
 * - `<basePath>/<name>/<id>`: one instance, Curator's JSON (JsonInstanceSerializer). DYNAMIC:
 *   EPHEMERAL; DYNAMIC_SEQUENTIAL: EPHEMERAL_SEQUENTIAL (`<id><seq>`); STATIC, PERMANENT:
 *   PERSISTENT. Never a protected name. Kept by a PersistentNode: re-created with the same id and
 *   JSON after a session loss or a delete by someone else.
 * - `<basePath>/<name>` and `<basePath>`: created as containers when missing, so the server
 *   removes them once empty.
 *
 * Registering replaces a node found at the instance's path (create; on NodeExists delete and
 * create again), so watchers see it, as in Curator. close() unregisters (deletes) every instance registered through this
 * object, STATIC and PERMANENT too, and closes the caches and providers made by it.
 */
import { EventEmitter } from 'eventemitter3';
import {
  AbortError,
  ClosedError,
  NoNodeError,
  RecipeLifecycle,
  safeEmitter,
  type Client,
  type Logger,
  type RecipeState,
  type SafeEmit,
  type WaitOptions,
  InvalidArgumentError,
} from '@tenure/client';
import { joinPath, validatePath } from '@tenure/protocol';
import { InvalidInstanceError, NotRegisteredError } from './errors.js';
import { JsonInstanceSerializer, type InstanceSerializer } from './json-instance-serializer.js';
import { Registration } from './registration.js';
import { ServiceCache } from './service-cache.js';
import { checkInstance, newServiceInstance, type ServiceInstance, type ServiceInstanceInit } from './service-instance.js';
import { ServiceProvider, type ServiceProviderOptions } from './service-provider.js';

export interface ServiceDiscoveryOptions {
  /** Default '/services' (Curator's examples and Spring Cloud Zookeeper's default root). */
  basePath?: string;
  /** Default: Curator's JsonInstanceSerializer in its compatible mode. */
  serializer?: InstanceSerializer;
  /** Registered by start() (Curator's `thisInstance`). */
  thisInstance?: ServiceInstanceInit;
  /** Re-registration after a session loss waits a random delay in [0, rejoinJitterMs). Default 1000 (PersistentNode's). */
  rejoinJitterMs?: number;
  /** Caches watch with one persistent recursive watch (default) or one-shot watches (false; ZooKeeper 3.5). */
  persistentWatches?: boolean;
  /** Default: a child of the client's logger. */
  logger?: Logger;
}

export interface ServiceDiscoveryEvents {
  /** A registration's node could not be kept (e.g. NoAuth) or met another session's node at its path. */
  error: (error: Error) => void;
}

/** `registerService`'s options: the wait, and with `signal` the registration's lifetime. */
export interface RegisterOptions {
  /** Aborts the wait; and once registered, unregisters the instance when it aborts. */
  signal?: AbortSignal;
  /** How long to wait for the node to be created. */
  timeoutMs?: number;
}

/**
 * The registry: registers this process's instances (self-healing nodes), queries the registry, and
 * makes caches and providers. Curator's ServiceDiscovery, in its layout and JSON.
 *
 * ```ts
 * const discovery = new ServiceDiscovery(client, { basePath: '/services' });
 * await discovery.start();
 * const me = await discovery.registerService({ name: 'orders', port: 8080 }, { signal: health.signal });
 * const billing = await discovery.queryForInstances('billing');
 * await discovery.close(); // unregisters `me`
 * ```
 */
export class ServiceDiscovery extends EventEmitter<ServiceDiscoveryEvents> implements AsyncDisposable {
  readonly basePath: string;
  readonly serializer: InstanceSerializer;
  private readonly client: Client;
  private readonly log: Logger;
  private readonly options: ServiceDiscoveryOptions;
  /** By instance id, as Curator keys them. */
  private readonly registrations = new Map<string, Registration>();
  /** Caches made here (providers' included), until closed. */
  private readonly caches = new Set<{ close(): Promise<void> }>();
  private readonly life: RecipeLifecycle;
  private readonly emitSafely: SafeEmit<ServiceDiscoveryEvents>;

  constructor(client: Client, options: ServiceDiscoveryOptions = {}) {
    super();
    if (!client || typeof client.create !== 'function') throw new InvalidArgumentError('ServiceDiscovery: a client is required');
    this.basePath = options.basePath ?? '/services';
    validatePath(this.basePath);
    this.serializer = options.serializer ?? new JsonInstanceSerializer();
    this.client = client;
    this.options = options;
    this.log = options.logger ?? client.childLogger({ recipe: 'serviceDiscovery', path: this.basePath });
    this.life = new RecipeLifecycle(`ServiceDiscovery ${this.basePath}`);
    this.emitSafely = safeEmitter<ServiceDiscoveryEvents>(this, this.log);
  }

  /** Starts the registry; registers `thisInstance` if one was given. */
  start(options: WaitOptions = {}): Promise<void> {
    return this.life.start(
      async () => {
        if (this.options.thisInstance) await this.registerService(this.options.thisInstance, options);
      },
      () => {
        if (this.client.closedSignal.aborted) throw new ClosedError('client');
      },
    );
  }

  /** `'latent'` before start(), `'started'`, then `'closed'` (the recipe lifecycle). */
  get state(): RecipeState {
    return this.life.state;
  }

  /** `<basePath>/<name>`. */
  pathForName(name: string): string {
    return joinPath(this.basePath, name);
  }

  /** `<basePath>/<name>/<id>` (a DYNAMIC_SEQUENTIAL node has the sequence appended). */
  pathForInstance(name: string, id: string): string {
    return joinPath(this.pathForName(name), id);
  }

  /**
   * Registers an instance (Curator's defaults fill what `init` leaves out) and resolves with it
   * once its node exists. A registration of the same id through this object replaces it. With
   * `signal`, the instance is unregistered when the signal aborts (tie it to the service's health).
   */
  async registerService<P>(init: ServiceInstanceInit<P>, options: RegisterOptions = {}): Promise<ServiceInstance<P>> {
    this.checkStarted('registerService');
    const instance = newServiceInstance(init);
    if (options.signal?.aborted) throw new AbortError(`registerService ${instance.name}/${instance.id}: aborted`);
    await this.registrations.get(instance.id)?.close();
    const reg = new Registration(this.pathForInstance(instance.name, instance.id), instance, {
      client: this.client,
      serializer: this.serializer,
      logger: this.log,
      rejoinJitterMs: this.options.rejoinJitterMs,
      onError: (e) => this.emitSafely('error', e),
    });
    this.registrations.set(instance.id, reg);
    try {
      await reg.start({ signal: options.signal, timeoutMs: options.timeoutMs });
    } catch (err) {
      if (this.registrations.get(instance.id) === reg) this.registrations.delete(instance.id);
      await reg.close();
      throw err;
    }
    if (!this.life.isStarted) {
      await reg.close(); // closed meanwhile
      throw new ClosedError(`ServiceDiscovery ${this.basePath}`);
    }
    if (options.signal)
      reg.closeOn(
        options.signal,
        () => void this.drop(reg).catch((err: unknown) => this.log.warn({ err }, 'unregistering on abort failed')),
      );
    this.log.debug({ node: reg.actualPath }, 'registered');
    return instance;
  }

  /** Writes `instance` over the registered one with the same id (an unversioned setData, as Curator). */
  async updateService<P>(instance: ServiceInstance<P>): Promise<void> {
    this.checkStarted('updateService');
    const reg = this.registrations.get(instance.id);
    if (!reg || reg.instance.name !== instance.name) throw new NotRegisteredError(instance.name, instance.id);
    checkInstance(instance);
    await reg.update(instance);
  }

  /** Deletes the instance's node (a guaranteed delete) and stops keeping it. Unknown ids are ignored. */
  async unregisterService(instance: Pick<ServiceInstance<unknown>, 'id'>): Promise<void> {
    const reg = this.registrations.get(instance.id);
    if (reg) await this.drop(reg);
  }

  /** The instances registered through this object. */
  get registeredInstances(): ServiceInstance<unknown>[] {
    return [...this.registrations.values()].map((r) => r.instance);
  }

  /** The service names: the children of basePath (sorted). */
  async queryForNames(): Promise<string[]> {
    return (await this.children(this.basePath)).sort();
  }

  /** Every instance of `name`, read now (sorted by node name); nodes gone meanwhile are skipped. */
  async queryForInstances<P = unknown>(name: string): Promise<ServiceInstance<P>[]> {
    const path = this.pathForName(name);
    const nodes = (await this.children(path)).sort();
    const read = await Promise.all(nodes.map((n) => this.read<P>(joinPath(path, n))));
    return read.filter((i): i is ServiceInstance<P> => i !== null);
  }

  /** The instance at `<basePath>/<name>/<id>`, or null. */
  queryForInstance<P = unknown>(name: string, id: string): Promise<ServiceInstance<P> | null> {
    return this.read<P>(this.pathForInstance(name, id));
  }

  /** A cache of `name`'s instances (not started); closed with this object. */
  serviceCache<P = unknown>(name: string): ServiceCache<P> {
    this.checkOpen('serviceCache');
    return this.newCache<P>(name);
  }

  /** A provider of `name`'s instances over its own cache (not started); closed with this object. */
  serviceProvider<P = unknown>(name: string, options: ServiceProviderOptions<P> = {}): ServiceProvider<P> {
    this.checkOpen('serviceProvider');
    return new ServiceProvider<P>(this.newCache<P>(name), this.client.clock, options);
  }

  /** Closes the caches and providers made here, then unregisters every instance registered here. */
  close(): Promise<void> {
    return this.life.close(async () => {
      await Promise.allSettled([...this.caches].map((c) => c.close()));
      await Promise.allSettled([...this.registrations.values()].map((r) => r.close()));
      this.registrations.clear();
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private async drop(reg: Registration): Promise<void> {
    if (this.registrations.get(reg.instance.id) === reg) this.registrations.delete(reg.instance.id);
    await reg.close();
  }

  private newCache<P>(name: string): ServiceCache<P> {
    const cache: ServiceCache<P> = new ServiceCache<P>(this.client, name, this.pathForName(name), {
      serializer: this.serializer,
      persistentWatches: this.options.persistentWatches,
      onClose: () => this.caches.delete(cache), // closed by its user: no longer ours to close
    });
    this.caches.add(cache);
    return cache;
  }

  private async children(path: string): Promise<string[]> {
    try {
      return (await this.client.getChildren(path)).children;
    } catch (err) {
      if (err instanceof NoNodeError) return [];
      throw err;
    }
  }

  private async read<P>(path: string): Promise<ServiceInstance<P> | null> {
    let data: Buffer;
    try {
      data = (await this.client.getData(path)).data;
    } catch (err) {
      if (err instanceof NoNodeError) return null;
      throw err;
    }
    try {
      return this.serializer.deserialize(data) as ServiceInstance<P>;
    } catch (err) {
      throw err instanceof InvalidInstanceError ? new InvalidInstanceError(err.message, path) : err;
    }
  }

  private checkStarted(what: string): void {
    this.checkOpen(what);
    this.life.requireStarted(what);
  }

  private checkOpen(what: string): void {
    if (this.life.isClosed) throw new ClosedError(`ServiceDiscovery ${this.basePath} (${what})`);
  }
}
