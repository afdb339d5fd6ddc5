/**
 * Instance equality as Curator's `ServiceInstance.equals` (every field, payload and
 * registrationTimeUTC included), as a string key: the down-instance counts and the sticky
 * strategy compare instances by it. Instances from a cache are new objects per read, so the key
 * is remembered per object.
 */
import type { ServiceInstance } from './service-instance.js';

const keys = new WeakMap<ServiceInstance<unknown>, string>();

export function instanceKey(instance: ServiceInstance<unknown>): string {
  let key = keys.get(instance);
  if (key === undefined) {
    const { unknownFields: _unknown, ...fields } = instance;
    key = JSON.stringify(fields);
    keys.set(instance, key);
  }
  return key;
}
