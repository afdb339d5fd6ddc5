/**
 * @tenure/discovery: service discovery in curator-x-discovery's layout and JSON. Register
 * instances (self-healing ephemerals), query them, cache them, and pick one with a provider, as
 * peers of Java services using Curator's ServiceDiscovery or Spring Cloud Zookeeper.
 */
export { ServiceDiscovery, type ServiceDiscoveryOptions, type ServiceDiscoveryEvents, type RegisterOptions } from './service-discovery.js';
export { ServiceCache, type ServiceCacheEvents, type ServiceCacheOptions } from './service-cache.js';
export { ServiceProvider, type ServiceProviderOptions } from './service-provider.js';
export type { ProviderStrategyName } from './provider-strategies.js';
export type { DownInstancePolicy } from './down-instances.js';
export {
  newServiceInstance,
  firstLocalIPv4,
  isDynamic,
  SERVICE_TYPES,
  type ServiceInstance,
  type ServiceInstanceInit,
  type ServiceType,
} from './service-instance.js';
export { JsonInstanceSerializer, type InstanceSerializer, type JsonInstanceSerializerOptions } from './json-instance-serializer.js';
export { InvalidInstanceError, NotRegisteredError } from './errors.js';
export { buildUri, parseUriSpec, formatUriSpec, type UriSpecPart } from './uri-spec.js';
export { springCloudPayload, SPRING_CLOUD_INSTANCE_CLASS, type SpringCloudInstance } from './spring-cloud.js';
/** Re-exported from @tenure/client, where every wait's options are declared. */
export type { WaitOptions } from '@tenure/client';
