/** Errors the node recipes report through their `error` and `conflict` events. */
import { TenureError } from '@tenure/client';

/**
 * Another live session owns an ephemeral node at the path this recipe keeps (for example a
 * duplicate group member id). The recipe leaves that node alone and tries again with backoff, and
 * at once when the node goes.
 */
export class NodeConflictError extends TenureError {
  override name = 'NodeConflictError';
  declare readonly code: 'NODE_CONFLICT';
  /** The path both want. */
  readonly path: string;
  /** The session that owns the node now. */
  readonly owner: bigint;
  constructor(path = '/', owner = 0n) {
    super(
      'NODE_CONFLICT',
      `${path} is an ephemeral node of another live session (0x${BigInt.asUintN(64, owner).toString(16)}); not taking it over`,
    );
    this.path = path;
    this.owner = owner;
  }
}
