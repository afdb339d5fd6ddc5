/** PersistentNode's options and events, and the options checked and filled in once. */
import { CreateMode, RetryPolicies, type ACL, type Logger, type NodeData, type RetryPolicy, InvalidArgumentError } from '@tenure/client';
import { isTtlMode, nonSequentialMode, validatePath } from '@tenure/protocol';
import type { NodeConflictError } from './errors.js';

export interface PersistentNodeEvents {
  /** The node is in place at `path`: we created it, or adopted one that was there. */
  created: (path: string) => void;
  /** Our node went (deleted by someone, or with an expired session); it is being re-created. */
  deleted: (path: string) => void;
  /** Another live session owns an ephemeral at our path; we leave it and retry. Also an `error`. */
  conflict: (error: NodeConflictError) => void;
  /** NoAuth (the node stops), a conflict, or an error the node retries after. */
  error: (error: Error) => void;
}

export interface PersistentNodeOptions {
  /** The node's path; with `protection` or a sequential mode, the base the name is made from. */
  path: string;
  /** Default EPHEMERAL. */
  mode?: CreateMode;
  /** Curator's protected mode (`_c_<uuid>-<name>`); use it with sequential modes. Default false. */
  protection?: boolean;
  /** The node's data. Default empty. */
  data?: NodeData | null;
  /** For the TTL modes. */
  ttlMs?: number;
  /** Create missing parents as containers, as Curator does. Default true. */
  useParentCreation?: boolean;
  /** Default: the client's ACL provider. */
  acl?: readonly ACL[];
  /** Re-creation after LOST waits a random delay in [0, rejoinJitterMs). Default 1000. */
  rejoinJitterMs?: number;
  /** Paces retries after a conflict or an error. Default: the client's retry policy. */
  retryPolicy?: RetryPolicy;
  /**
   * Instead of `retryPolicy`, give both: the pause starts at `retryMs` and doubles up to
   * `maxRetryMs` (RetryPolicies.boundedExponentialBackoff).
   */
  retryMs?: number;
  maxRetryMs?: number;
  /** Delete the node on close. Default true (PersistentTtlNode leaves its node to its TTL). */
  deleteOnClose?: boolean;
  /**
   * The first create replaces a node found at `path`: it is sent at once (no check before it), and
   * on NodeExists whatever is there is deleted (any owner, once) and created again, so watchers see
   * the node go and come back (Curator's ServiceDiscovery registration). Later creates (after a
   * delete or a session loss) follow the ownership rule. Not with `protection` or a sequential
   * mode (their names are new). Default false.
   */
  replaceExisting?: boolean;
  /** Default: a child of the client's logger. */
  logger?: Logger;
}

/** The options, checked, with their defaults. `retryPolicy` undefined means the client's. */
export type NodeSettings = Required<
  Pick<PersistentNodeOptions, 'path' | 'mode' | 'protection' | 'useParentCreation' | 'rejoinJitterMs' | 'deleteOnClose' | 'replaceExisting'>
> &
  Pick<PersistentNodeOptions, 'ttlMs' | 'acl' | 'retryPolicy' | 'logger'>;

export function nodeSettings(options: PersistentNodeOptions): NodeSettings {
  if (!options || typeof options !== 'object') throw new InvalidArgumentError('PersistentNode: options are required');
  const mode = options.mode ?? CreateMode.EPHEMERAL;
  if (!(Object.values(CreateMode) as number[]).includes(mode))
    throw new InvalidArgumentError(`PersistentNode: unknown mode ${String(mode)}`);
  validatePath(options.path);
  if (isTtlMode(mode) !== (options.ttlMs !== undefined)) {
    throw new InvalidArgumentError(
      `PersistentNode: ttlMs goes with the TTL modes, and only with them (mode ${mode}, ttlMs ${String(options.ttlMs)})`,
    );
  }
  return {
    path: options.path,
    mode,
    protection: options.protection ?? false,
    ttlMs: options.ttlMs,
    useParentCreation: options.useParentCreation ?? true,
    acl: options.acl,
    rejoinJitterMs: nonNegative('rejoinJitterMs', options.rejoinJitterMs) ?? 1000,
    retryPolicy: options.retryPolicy ?? retryOverride(options),
    deleteOnClose: options.deleteOnClose ?? true,
    replaceExisting: replaceExisting(options, mode),
    logger: options.logger,
  };
}

function replaceExisting(options: PersistentNodeOptions, mode: CreateMode): boolean {
  if (!options.replaceExisting) return false;
  if (options.protection || nonSequentialMode(mode) !== mode) {
    throw new InvalidArgumentError(
      `PersistentNode ${options.path}: replaceExisting needs a fixed name (no protection, no sequential mode)`,
    );
  }
  return true;
}

function retryOverride({ retryMs, maxRetryMs }: PersistentNodeOptions): RetryPolicy | undefined {
  const first = nonNegative('retryMs', retryMs);
  const max = nonNegative('maxRetryMs', maxRetryMs);
  if (first === undefined && max === undefined) return undefined;
  if (first === undefined || max === undefined)
    throw new InvalidArgumentError('PersistentNode: retryMs and maxRetryMs go together (or give retryPolicy)');
  return RetryPolicies.boundedExponentialBackoff(first, max, Infinity);
}

export function toBuffer(data: NodeData | null | undefined): Buffer {
  if (data === null || data === undefined) return Buffer.alloc(0);
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
}

function nonNegative(name: string, v: number | undefined): number | undefined {
  if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) {
    throw new InvalidArgumentError(`PersistentNode: ${name} must be a number >= 0, got ${String(v)}`);
  }
  return v;
}
