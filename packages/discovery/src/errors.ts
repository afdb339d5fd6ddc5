/** The errors of @tenure/discovery; each names the node or the instance it concerns. */
import { TenureError } from '@tenure/client';

/** Node data that is not an instance in Curator's JSON. */
export class InvalidInstanceError extends TenureError {
  override readonly name = 'InvalidInstanceError';
  constructor(
    message = 'not a service instance',
    /** The node it was read from, when known. */
    readonly path?: string,
  ) {
    super('INVALID_INSTANCE', path === undefined ? message : `${path}: ${message}`);
  }
}

/** `updateService` of an instance this ServiceDiscovery did not register (or has unregistered). */
export class NotRegisteredError extends TenureError {
  override readonly name = 'NotRegisteredError';
  constructor(
    readonly serviceName = 'service',
    readonly id = 'unknown',
  ) {
    super('NOT_REGISTERED', `${serviceName}/${id} is not registered through this ServiceDiscovery`);
  }
}
