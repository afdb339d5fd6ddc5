/** Options of the embedded server, with ZooKeeper's defaults. */
import { DEFAULT_MAX_BUFFER, type Clock, InvalidArgumentError } from '@tenure/protocol';
import type { DataDirOptions, SnapshotInfo } from './storage/data-dir-storage.js';

/** What the durable storage reports: each group commit, each snapshot on disk, and a failure to write or sync the log. */
export type StorageEvent =
  | {
      kind: 'durable';
      zxid: bigint;
      commits: number;
      txns: number;
      /** The commit's fdatasync (ms; 0 without forceSync). */ syncMs: number;
    }
  | ({ kind: 'snapshot' } & SnapshotInfo)
  | { kind: 'failed'; error: Error };
import type { SaslServerOptions } from './security/sasl-auth.js';

/** A pino-compatible logger; the server is silent without one. */
export interface Logger {
  warn(obj: unknown, msg?: string): void;
  debug?(obj: unknown, msg?: string): void;
}

export interface EmbeddedServerOptions extends Partial<DataDirOptions> {
  /** The host name the transport answers to (`transport().hosts`). Default 'embedded'. */
  name?: string;
  /** ZooKeeper's tickTime. Default 2000 ms. */
  tickMs?: number;
  /**
   * The clock of session expiry, the container/TTL reaper and injected delays. Default the process
   * clock; tests pass a `ManualClock` (@tenure/testing) and advance time by hand.
   */
  clock?: Clock;
  /** Default 2 ticks. */
  minSessionTimeoutMs?: number;
  /** Default 20 ticks. */
  maxSessionTimeoutMs?: number;
  /** A request whose encoded payload is larger closes its connection. Default 1,048,575 (jute.maxbuffer). */
  maxBufferBytes?: number;
  /** How often empty containers and expired TTL nodes are reaped. Default 60,000 ms (znode.container.checkIntervalMs). */
  containerCheckIntervalMs?: number;
  /** TTL nodes (ZooKeeper's extendedTypesEnabled). Default true. */
  ttlEnabled?: boolean;
  /**
   * Persistent watches (addWatch, setWatches2), as on ZooKeeper 3.6+. With `false` the server
   * answers them UNIMPLEMENTED and closes the connection, as a 3.5 server does. Default true.
   */
  persistentWatches?: boolean;
  /** `user:base64(sha1(user:password))` granted the super identity on digest auth (superDigest). */
  superDigest?: string;
  /** The address a connection is authenticated as (`ip` scheme). Default '127.0.0.1'. */
  clientAddress?: string;
  /**
   * Connections per client address (ZooKeeper's maxClientCnxns); one more is refused and closed
   * without an answer. Default 0, no limit: tests and examples open many clients from one
   * address. The `tenure-server` process defaults to ZooKeeper's 60.
   */
  maxClientCnxns?: number;
  /**
   * Requests received and not yet answered, over every connection, before connections stop being
   * read (ZooKeeper's globalOutstandingLimit, back-pressure instead of a growing queue). Default
   * 1000, as ZooKeeper; 0 for no limit.
   */
  globalOutstandingLimit?: number;
  /**
   * The four-letter words answered (ZooKeeper's 4lw.commands.whitelist), `'*'` for all. Default
   * `'*'`; the `tenure-server` process defaults to ZooKeeper's `['srvr']`.
   */
  fourLetterWords?: readonly string[] | '*';
  /** SASL DIGEST-MD5 users (`{ users: { bob: 'secret' } }`): a client that proves one is `sasl:bob`. */
  sasl?: SaslServerOptions;
  logger?: Logger;
  /**
   * Storage events (with `dataDir`): every group commit, and a log that could not be written or
   * synced, after which the server answers nothing more (a process should exit).
   */
  onStorageEvent?: (event: StorageEvent) => void;
}

export interface ResolvedOptions {
  name: string;
  tickMs: number;
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  maxBufferBytes: number;
  containerCheckIntervalMs: number;
  ttlEnabled: boolean;
  persistentWatches: boolean;
  superDigest: string | undefined;
  clientAddress: string;
  maxClientCnxns: number;
  globalOutstandingLimit: number;
  fourLetterWords: readonly string[] | '*';
  sasl: SaslServerOptions | undefined;
  logger: Logger | undefined;
  /** The data dir options, or undefined for a server in memory. */
  storage: DataDirOptions | undefined;
  onStorageEvent: ((event: StorageEvent) => void) | undefined;
}

function count(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 0) throw new InvalidArgumentError(`${name} must be a whole number >= 0, got ${v}`);
  return v;
}

function positive(name: string, v: number): number {
  if (!Number.isFinite(v) || v <= 0) throw new InvalidArgumentError(`${name} must be a positive number, got ${v}`);
  return v;
}

export function resolveOptions(o: EmbeddedServerOptions = {}): ResolvedOptions {
  const tickMs = positive('tickMs', o.tickMs ?? 2000);
  const minSessionTimeoutMs = positive('minSessionTimeoutMs', o.minSessionTimeoutMs ?? 2 * tickMs);
  const maxSessionTimeoutMs = positive('maxSessionTimeoutMs', o.maxSessionTimeoutMs ?? 20 * tickMs);
  if (maxSessionTimeoutMs < minSessionTimeoutMs) {
    throw new InvalidArgumentError(`maxSessionTimeoutMs (${maxSessionTimeoutMs}) is below minSessionTimeoutMs (${minSessionTimeoutMs})`);
  }
  return {
    name: o.name ?? 'embedded',
    tickMs,
    minSessionTimeoutMs,
    maxSessionTimeoutMs,
    maxBufferBytes: positive('maxBufferBytes', o.maxBufferBytes ?? DEFAULT_MAX_BUFFER),
    containerCheckIntervalMs: positive('containerCheckIntervalMs', o.containerCheckIntervalMs ?? 60_000),
    ttlEnabled: o.ttlEnabled ?? true,
    persistentWatches: o.persistentWatches ?? true,
    superDigest: o.superDigest,
    clientAddress: o.clientAddress ?? '127.0.0.1',
    maxClientCnxns: count('maxClientCnxns', o.maxClientCnxns ?? 0),
    globalOutstandingLimit: count('globalOutstandingLimit', o.globalOutstandingLimit ?? 1000),
    fourLetterWords: o.fourLetterWords === undefined || o.fourLetterWords === '*' ? '*' : Object.freeze([...o.fourLetterWords]),
    sasl: o.sasl,
    logger: o.logger,
    storage:
      o.dataDir === undefined
        ? undefined
        : {
            dataDir: o.dataDir,
            dataLogDir: o.dataLogDir,
            snapCount: o.snapCount === undefined ? undefined : positive('snapCount', o.snapCount),
            preAllocSize: o.preAllocSize === undefined ? undefined : positive('preAllocSize', o.preAllocSize),
            forceSync: o.forceSync,
            autopurge: o.autopurge,
          },
    onStorageEvent: o.onStorageEvent,
  };
}
