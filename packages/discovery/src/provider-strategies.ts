/**
 * Curator's provider strategies: how a provider picks one of its candidate instances.
 * - roundRobin: a counter per provider, `counter++ % size` over the candidates in cache order;
 * - random: uniform;
 * - sticky: the same instance while an equal one is still a candidate, then the next by round robin.
 */
import { instanceKey } from './instance-key.js';
import type { ServiceInstance } from './service-instance.js';
import { InvalidArgumentError } from '@tenure/client';

export type ProviderStrategyName = 'roundRobin' | 'random' | 'sticky';

/** Picks one of `instances` (never empty). */
export type ProviderStrategy = <P>(instances: readonly ServiceInstance<P>[]) => ServiceInstance<P>;

export function providerStrategy(name: ProviderStrategyName): ProviderStrategy {
  switch (name) {
    case 'roundRobin':
      return roundRobin();
    case 'random':
      return (instances) => instances[Math.floor(Math.random() * instances.length)]!;
    case 'sticky':
      return sticky(roundRobin());
    default:
      throw new InvalidArgumentError(`serviceProvider: unknown strategy ${JSON.stringify(name)} (roundRobin, random, sticky)`);
  }
}

function roundRobin(): ProviderStrategy {
  let counter = 0;
  return (instances) => {
    const i = counter % instances.length;
    counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
    return instances[i]!;
  };
}

function sticky(master: ProviderStrategy): ProviderStrategy {
  let ours: string | null = null;
  return (instances) => {
    if (ours !== null) {
      const same = instances.find((i) => instanceKey(i) === ours);
      if (same) return same;
    }
    const next = master(instances);
    ours = instanceKey(next);
    return next;
  };
}
