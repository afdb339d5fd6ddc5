/**
 * Curator's JsonInstanceSerializer: an instance as compact UTF-8 JSON, fields in Jackson's order
 * (name, id, address, port, sslPort, payload, registrationTimeUTC, serviceType, uriSpec), nulls
 * written out, `uriSpec` as `{"parts":[{"value","variable"}]}`.
 *
 * Compatible mode (Curator's default, and Spring Cloud Zookeeper's) leaves `enabled` out; we write
 * it anyway when it is false, so that a disabled instance stays disabled (Java reads the field in
 * either mode). Reading is as lenient as Jackson with FAIL_ON_UNKNOWN_PROPERTIES off: missing
 * fields take Curator's defaults, and unknown fields are kept (`unknownFields`) and written back
 * after the known ones.
 */
import { InvalidInstanceError } from './errors.js';
import { SERVICE_TYPES, type ServiceInstance, type ServiceType } from './service-instance.js';
import { formatUriSpec, parseUriSpec, type UriSpecPart } from './uri-spec.js';

/** Turns instances into node data and back (Curator's InstanceSerializer). */
export interface InstanceSerializer {
  serialize(instance: ServiceInstance<unknown>): Buffer;
  /** Throws InvalidInstanceError when the bytes are not an instance. */
  deserialize(data: Buffer): ServiceInstance<unknown>;
}

const KNOWN = new Set(['name', 'id', 'address', 'port', 'sslPort', 'payload', 'registrationTimeUTC', 'serviceType', 'uriSpec', 'enabled']);

export interface JsonInstanceSerializerOptions {
  /** Curator's compatibleSerializationMode: leave `enabled` out (unless false). Default true. */
  compatible?: boolean;
}

/** Curator's JsonInstanceSerializer (the default serializer), in its compatible mode unless `compatible: false`. */
export class JsonInstanceSerializer implements InstanceSerializer {
  readonly compatible: boolean;

  constructor(options: JsonInstanceSerializerOptions = {}) {
    this.compatible = options.compatible ?? true;
  }

  serialize(instance: ServiceInstance<unknown>): Buffer {
    const json: Record<string, unknown> = {
      name: instance.name,
      id: instance.id,
      address: instance.address,
      port: instance.port,
      sslPort: instance.sslPort,
      payload: instance.payload ?? null,
      registrationTimeUTC: instance.registrationTimeUTC,
      serviceType: instance.serviceType,
      uriSpec: instance.uriSpec === null ? null : { parts: parseUriSpec(instance.uriSpec) },
    };
    if (!this.compatible || !instance.enabled) json.enabled = instance.enabled;
    for (const [k, v] of Object.entries(instance.unknownFields ?? {})) if (!KNOWN.has(k)) json[k] = v;
    return Buffer.from(JSON.stringify(json), 'utf8');
  }

  deserialize(data: Buffer): ServiceInstance<unknown> {
    let json: unknown;
    try {
      json = JSON.parse(data.toString('utf8'));
    } catch (err) {
      throw new InvalidInstanceError(`not JSON (${(err as Error).message})`);
    }
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new InvalidInstanceError('not a JSON object');
    const o = json as Record<string, unknown>;
    const unknown = Object.entries(o).filter(([k]) => !KNOWN.has(k));
    return {
      name: text(o, 'name') ?? '',
      id: text(o, 'id') ?? '',
      address: text(o, 'address'),
      port: int(o, 'port'),
      sslPort: int(o, 'sslPort'),
      payload: o.payload ?? null,
      registrationTimeUTC: int(o, 'registrationTimeUTC') ?? 0,
      serviceType: serviceType(o.serviceType),
      uriSpec: uriSpec(o.uriSpec),
      enabled: enabled(o.enabled),
      ...(unknown.length > 0 ? { unknownFields: Object.fromEntries(unknown) } : {}),
    };
  }
}

/** A missing `enabled` (compatible mode) reads as true, as in Curator. */
function enabled(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v !== 'boolean') throw new InvalidInstanceError(`enabled must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

function text(o: Record<string, unknown>, field: string): string | null {
  const v = o[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new InvalidInstanceError(`${field} must be a string or null, got ${JSON.stringify(v)}`);
  return v;
}

function int(o: Record<string, unknown>, field: string): number | null {
  const v = o[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw new InvalidInstanceError(`${field} must be an integer or null, got ${JSON.stringify(v)}`);
  return v;
}

function serviceType(v: unknown): ServiceType {
  if (v === undefined || v === null) return 'DYNAMIC';
  if (!SERVICE_TYPES.includes(v as ServiceType))
    throw new InvalidInstanceError(`serviceType must be one of ${SERVICE_TYPES.join(', ')}, got ${JSON.stringify(v)}`);
  return v as ServiceType;
}

function uriSpec(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  const parts = (v as { parts?: unknown }).parts;
  if (typeof v !== 'object' || !Array.isArray(parts))
    throw new InvalidInstanceError(`uriSpec must be {"parts":[...]} or null, got ${JSON.stringify(v)}`);
  const checked: UriSpecPart[] = parts.map((p: unknown) => {
    const part = p as Partial<UriSpecPart> | null;
    if (!part || typeof part.value !== 'string' || typeof part.variable !== 'boolean')
      throw new InvalidInstanceError(`uriSpec part must be {"value":string,"variable":boolean}, got ${JSON.stringify(p)}`);
    return { value: part.value, variable: part.variable };
  });
  return formatUriSpec(checked);
}
