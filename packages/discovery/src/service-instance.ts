/**
 * A service instance as curator-x-discovery models it (`ServiceInstance`), and the defaults its
 * builder fills in (`ServiceInstance.builder()`): a random UUID id, the first non-loopback IPv4
 * address, `registrationTimeUTC` now, serviceType DYNAMIC, enabled.
 */
import { randomUUID } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { InvalidArgumentError } from '@tenure/client';

/**
 * Curator's `ServiceType`, by its enum name. DYNAMIC and DYNAMIC_SEQUENTIAL instances are
 * ephemeral nodes (they go with the session, and are re-registered after it); STATIC and
 * PERMANENT are persistent.
 */
export type ServiceType = 'DYNAMIC' | 'STATIC' | 'PERMANENT' | 'DYNAMIC_SEQUENTIAL';

export const SERVICE_TYPES: readonly ServiceType[] = ['DYNAMIC', 'STATIC', 'PERMANENT', 'DYNAMIC_SEQUENTIAL'];

/** One registered instance of a service, with every field of Curator's JSON. */
export interface ServiceInstance<P = unknown> {
  /** The service's name: the instance lives at `<basePath>/<name>/<id>`. */
  readonly name: string;
  readonly id: string;
  readonly address: string | null;
  readonly port: number | null;
  readonly sslPort: number | null;
  /** Any JSON value. An object that a Java reader must bind to a class carries that class in `@class`. */
  readonly payload: P | null;
  /** Milliseconds since the Unix epoch. */
  readonly registrationTimeUTC: number;
  readonly serviceType: ServiceType;
  /** A template such as `'{scheme}://{address}:{port}'` (stored as Curator's parts); see `buildUri`. */
  readonly uriSpec: string | null;
  /** Providers skip disabled instances. */
  readonly enabled: boolean;
  /** Fields this version does not know (from a newer writer), kept on read and written back. */
  readonly unknownFields?: Readonly<Record<string, unknown>>;
}

/** What `registerService` takes: only `name` is required; the rest defaults as in Curator's builder. */
export interface ServiceInstanceInit<P = unknown> {
  name: string;
  id?: string;
  address?: string | null;
  port?: number | null;
  sslPort?: number | null;
  payload?: P | null;
  registrationTimeUTC?: number;
  serviceType?: ServiceType;
  uriSpec?: string | null;
  enabled?: boolean;
  unknownFields?: Readonly<Record<string, unknown>>;
}

/** Wall-clock milliseconds since the Unix epoch: the one place this package reads them. */
export const utcNow = (): number => Date.now();

/** The instance with Curator's defaults filled in, checked. */
export function newServiceInstance<P>(init: ServiceInstanceInit<P>, nowUtc: () => number = utcNow): ServiceInstance<P> {
  if (!init || typeof init !== 'object') throw new InvalidArgumentError('ServiceInstance: an object with a name is required');
  const instance: ServiceInstance<P> = {
    name: init.name,
    id: init.id ?? randomUUID(),
    address: init.address === undefined ? firstLocalIPv4() : init.address,
    port: init.port ?? null,
    sslPort: init.sslPort ?? null,
    payload: init.payload ?? null,
    registrationTimeUTC: init.registrationTimeUTC ?? nowUtc(),
    serviceType: init.serviceType ?? 'DYNAMIC',
    uriSpec: init.uriSpec ?? null,
    enabled: init.enabled ?? true,
    ...(init.unknownFields !== undefined ? { unknownFields: init.unknownFields } : {}),
  };
  checkInstance(instance);
  return instance;
}

/** Throws a TypeError or RangeError naming the field that cannot be written as Curator's JSON. */
export function checkInstance(instance: ServiceInstance<unknown>): void {
  const what = `ServiceInstance ${JSON.stringify(instance.name)}/${JSON.stringify(instance.id)}`;
  for (const field of ['name', 'id'] as const) {
    const v = instance[field];
    if (typeof v !== 'string' || v.length === 0 || v.includes('/') || v === '.' || v === '..') {
      throw new InvalidArgumentError(`${what}: ${field} must be a non-empty node name without '/', got ${JSON.stringify(v)}`);
    }
  }
  if (instance.address !== null && typeof instance.address !== 'string')
    throw new InvalidArgumentError(`${what}: address must be a string or null`);
  for (const field of ['port', 'sslPort'] as const) {
    const v = instance[field];
    if (v !== null && !(Number.isInteger(v) && v >= 0 && v <= 0x7fffffff))
      throw new InvalidArgumentError(`${what}: ${field} must be an integer >= 0 or null, got ${String(v)}`);
  }
  if (!Number.isSafeInteger(instance.registrationTimeUTC))
    throw new InvalidArgumentError(`${what}: registrationTimeUTC must be an integer (ms), got ${String(instance.registrationTimeUTC)}`);
  if (!SERVICE_TYPES.includes(instance.serviceType))
    throw new InvalidArgumentError(`${what}: serviceType must be one of ${SERVICE_TYPES.join(', ')}, got ${String(instance.serviceType)}`);
  if (instance.uriSpec !== null && typeof instance.uriSpec !== 'string')
    throw new InvalidArgumentError(`${what}: uriSpec must be a template string or null`);
  if (typeof instance.enabled !== 'boolean') throw new InvalidArgumentError(`${what}: enabled must be a boolean`);
}

/** Whether instances of this type are ephemeral nodes (they go with the session). */
export function isDynamic(type: ServiceType): boolean {
  return type === 'DYNAMIC' || type === 'DYNAMIC_SEQUENTIAL';
}

/**
 * The first IPv4 address of this host that is neither loopback nor link-local (Curator's default
 * `LocalIpFilter`), or null when there is none.
 */
export function firstLocalIPv4(): string | null {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) {
      if (a.family === 'IPv4' && !a.internal && !a.address.startsWith('169.254.')) return a.address;
    }
  }
  return null;
}
