/**
 * A model's value ↔ its node's bytes: on write, the schema checks the value and the serializer
 * writes the schema's output; on read, the serializer reads the bytes and the schema checks what
 * they hold. Both failures are a ModelValidationError naming the node's path, and a write that
 * fails sends nothing.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { ModelValidationError } from './errors.js';
import { checkedValue } from './schema.js';
import type { ModelSerializer } from './serializer.js';

export class ModelCodec<S extends StandardSchemaV1> {
  constructor(
    readonly schema: S,
    readonly serializer: ModelSerializer,
  ) {}

  /** The bytes for `value` at `path`; ModelValidationError ('write') when the schema or the serializer refuses it. */
  async encode(value: unknown, path: string): Promise<Uint8Array> {
    return (await this.check(value, path)).bytes;
  }

  /** The schema's output for `value` and its bytes; ModelValidationError ('write') when the schema or the serializer refuses it. */
  async check(value: unknown, path: string): Promise<{ value: StandardSchemaV1.InferOutput<S>; bytes: Uint8Array }> {
    const checked = await checkedValue(this.schema, value, path, 'write');
    try {
      return { value: checked, bytes: this.serializer.serialize(checked) };
    } catch (err) {
      throw new ModelValidationError(path, [{ message: `not serializable: ${messageOf(err)}` }], 'write', err);
    }
  }

  /** The model held in `bytes` at `path`; ModelValidationError ('read') when they are not one. */
  async decode(bytes: Uint8Array, path: string): Promise<StandardSchemaV1.InferOutput<S>> {
    let raw: unknown;
    try {
      raw = this.serializer.deserialize(bytes);
    } catch (err) {
      throw new ModelValidationError(path, [{ message: `not readable (${bytes.length} bytes): ${messageOf(err)}` }], 'read', err);
    }
    return checkedValue(this.schema, raw, path, 'read');
  }
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
