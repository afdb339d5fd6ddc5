/** The errors of @tenure/discovery; each names the node or the instance it concerns. */

/** Node data that is not an instance in Curator's JSON. */
export class InvalidInstanceError extends Error {
  override readonly name = 'InvalidInstanceError';
  constructor(
    message: string,
    /** The node it was read from, when known. */
    readonly path?: string,
  ) {
    super(path === undefined ? message : `${path}: ${message}`);
  }
}

/** `updateService` of an instance this ServiceDiscovery did not register (or has unregistered). */
export class NotRegisteredError extends Error {
  override readonly name = 'NotRegisteredError';
  constructor(
    readonly serviceName: string,
    readonly id: string,
  ) {
    super(`${serviceName}/${id} is not registered through this ServiceDiscovery`);
  }
}
