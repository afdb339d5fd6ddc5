/** The errors of @tenure/models, besides the client's (KeeperError, ClosedError, ...). */
import { TenureError } from '@tenure/client';
import type { StandardSchemaV1 } from '@standard-schema/spec';

/**
 * A value that is not a model of its schema: refused before any write (`operation: 'write'`), or
 * found in a node (`operation: 'read'`: another client wrote it, or its bytes are not JSON).
 * `issues` are the schema's own (Standard Schema issues: `message` and an optional `path`).
 */
export class ModelValidationError extends TenureError {
  override name = 'ModelValidationError';
  constructor(
    /** The node's path. */
    readonly path = '/',
    readonly issues: readonly StandardSchemaV1.Issue[] = [{ message: 'not a model' }],
    readonly operation: 'read' | 'write' = 'read',
    cause?: unknown,
  ) {
    super(
      'MODEL_VALIDATION',
      `${operation === 'write' ? 'refused to write' : 'read'} ${path}: ${operation === 'write' ? 'the value' : 'the node'} fails its schema: ${describeIssues(issues)}`,
      { cause },
    );
  }
}

/** A path parameter that cannot be a node name: '/' inside it, empty, '.', '..', or a name ZooKeeper refuses. */
export class ModelPathError extends TenureError {
  override name = 'ModelPathError';
  constructor(
    readonly template = '/',
    readonly parameter = '',
    readonly value: unknown = undefined,
    reason = 'not a valid node name',
  ) {
    super('MODEL_PATH', `${template}: parameter {${parameter}} = ${JSON.stringify(value) ?? String(value)}: ${reason}`);
  }
}

/** `update()` lost the race `maxAttempts` times in a row (someone else wrote between our read and our write each time). */
export class UpdateConflictError extends TenureError {
  override name = 'UpdateConflictError';
  constructor(
    readonly path = '/',
    readonly attempts = 0,
  ) {
    super('UPDATE_CONFLICT', `update of ${path}: the node changed under us on each of ${attempts} attempts`);
  }
}

function describeIssues(issues: readonly StandardSchemaV1.Issue[]): string {
  const shown = issues.slice(0, 3).map((i) => {
    const at = i.path?.map((p) => (typeof p === 'object' ? String(p.key) : String(p))).join('.');
    return at ? `${at}: ${i.message}` : i.message;
  });
  return shown.join('; ') + (issues.length > 3 ? ` (and ${issues.length - 3} more)` : '');
}
