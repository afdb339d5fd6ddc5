/**
 * Schemas through Standard Schema (https://standardschema.dev): zod, valibot, arktype and others
 * implement `~standard.validate`, which answers `{ value }` or `{ issues }`, possibly as a Promise.
 * Only the spec's types are imported, so no schema library is a dependency.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { ModelValidationError } from './errors.js';

export type { StandardSchemaV1 } from '@standard-schema/spec';

/** A Standard Schema; its output type is the model's type. */
export type ModelSchema<Input = unknown, Output = Input> = StandardSchemaV1<Input, Output>;

/** The value `schema` gives for `value` (its output, with defaults and coercions applied), or a ModelValidationError. */
export async function checkedValue<S extends StandardSchemaV1>(
  schema: S,
  value: unknown,
  path: string,
  operation: 'read' | 'write',
): Promise<StandardSchemaV1.InferOutput<S>> {
  let result = schema['~standard'].validate(value);
  if (result instanceof Promise) result = await result;
  if (result.issues !== undefined) throw new ModelValidationError(path, result.issues, operation);
  return result.value as StandardSchemaV1.InferOutput<S>;
}

export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  const std = (value as { '~standard'?: { version?: unknown; validate?: unknown } } | null | undefined)?.['~standard'];
  return typeof std === 'object' && std !== null && std.version === 1 && typeof std.validate === 'function';
}
