/**
 * ServiceProvider: picks an instance of one service from a ServiceCache, with no round trip
 * (Curator's ServiceProviderImpl). The candidates are the cache's instances that pass `filter`,
 * are not down (DownInstancePolicy: reported `errorThreshold` times, skipped for `timeoutMs`) and
 * are enabled, in that order, as Curator's FilteredInstanceProvider; the strategy picks one.
 */
import type { Clock, RecipeState, WaitOptions } from '@tenure/client';
import { DownInstances, type DownInstancePolicy } from './down-instances.js';
import { providerStrategy, type ProviderStrategy, type ProviderStrategyName } from './provider-strategies.js';
import type { ServiceCache } from './service-cache.js';
import type { ServiceInstance } from './service-instance.js';

export interface ServiceProviderOptions<P = unknown> {
  /** Default 'roundRobin' (Curator's default). */
  strategy?: ProviderStrategyName;
  /** Default: 30,000 ms and 2 errors. */
  downInstancePolicy?: DownInstancePolicy;
  /** Narrows the candidates (Curator's additionalFilter). */
  filter?: (instance: ServiceInstance<P>) => boolean;
}

/**
 * Picks instances of one service from a cache, by a strategy; from `discovery.serviceProvider(name, options)`.
 *
 * ```ts
 * const billing = discovery.serviceProvider('billing', { strategy: 'roundRobin', downInstancePolicy: { timeoutMs: 30_000, errorThreshold: 2 } });
 * await billing.start();
 * const target = billing.getInstance(); // null when none is left
 * if (target && !(await call(buildUri(target)))) billing.noteError(target);
 * ```
 */
export class ServiceProvider<P = unknown> implements AsyncDisposable {
  readonly name: string;
  private readonly strategy: ProviderStrategy;
  private readonly down: DownInstances;
  private readonly filter: ((instance: ServiceInstance<P>) => boolean) | undefined;
  /** The enabled instances of the cache's set `enabledOf`. */
  private enabledOf: readonly ServiceInstance<P>[] | null = null;
  private enabled: readonly ServiceInstance<P>[] = [];

  /** Use `discovery.serviceProvider(name, options)`. */
  constructor(
    /** The cache the provider reads (its own: started and closed with it). */
    readonly cache: ServiceCache<P>,
    clock: Clock,
    options: ServiceProviderOptions<P> = {},
  ) {
    this.name = cache.name;
    this.strategy = providerStrategy(options.strategy ?? 'roundRobin');
    this.down = new DownInstances(clock, options.downInstancePolicy);
    this.filter = options.filter;
  }

  /** Starts the cache; resolves once the instances were first loaded, so getInstance() sees them. */
  start(options: WaitOptions = {}): Promise<void> {
    return this.cache.start(options);
  }

  /** `'latent'` before start(), `'started'`, then `'closed'`: the lifecycle of its cache. */
  get state(): RecipeState {
    return this.cache.state;
  }

  /** One instance by the strategy, or null when no candidate is left. */
  getInstance(): ServiceInstance<P> | null {
    const candidates = this.candidates();
    return candidates.length === 0 ? null : this.strategy(candidates);
  }

  /** Every candidate: filtered, not down, enabled. */
  getAllInstances(): ServiceInstance<P>[] {
    return [...this.candidates()];
  }

  /** The candidates now; without a filter or a down report, the enabled ones, computed once per cache change. */
  private candidates(): readonly ServiceInstance<P>[] {
    const source = this.cache.instances;
    if (this.filter === undefined && this.down.isEmpty) {
      if (source !== this.enabledOf) {
        this.enabledOf = source;
        this.enabled = source.filter((i) => i.enabled);
      }
      return this.enabled;
    }
    const out: ServiceInstance<P>[] = [];
    for (const i of source) {
      if ((this.filter === undefined || this.filter(i)) && !this.down.isDown(i) && i.enabled) out.push(i);
    }
    return out;
  }

  /** Reports that `instance` failed a call: after `errorThreshold` reports it is skipped for `timeoutMs`. */
  noteError(instance: ServiceInstance<P>): void {
    this.down.noteError(instance);
  }

  close(): Promise<void> {
    return this.cache.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
