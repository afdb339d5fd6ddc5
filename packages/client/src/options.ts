/** Client options and their defaults. */
import { OPEN_ACL_UNSAFE, DEFAULT_MAX_BUFFER, type ACL, type Transport, InvalidArgumentError } from '@tenure/protocol';
import type { HostLookup, TlsSetting } from '@tenure/zookeeper';
import type { Clock } from '@tenure/protocol';
import type { ErrorPolicy } from './connection-state.js';
import type { Logger } from './logger.js';
import { RetryPolicies, type RetryPolicy } from './retry-policies.js';
import type { SaslOptions } from './sasl.js';
import type { AuthInfo } from './session.js';
import type { CompressionOption } from './compression.js';

/** Chooses the ACL of nodes created without an explicit `acl` (Curator's ACLProvider). */
export type AclProvider =
  { getDefaultAcl(): readonly ACL[]; getAclForPath?(path: string): readonly ACL[] } | ((path: string) => readonly ACL[]);

export interface ClientOptions {
  /** Any transport (the embedded server's `server.transport()`, `zookeeper(connectString)`, ...). */
  transport?: Transport;
  /** 'h1:2181,h2:2181/chroot': selects the ZooKeeper transport. Give this or `transport`. */
  connectString?: string;
  /**
   * With `connectString`: connect over TLS (ZooKeeper's secureClientPort). `true`, Node's
   * `tls.ConnectionOptions` (`ca`, `cert`, `key`, `servername`, `rejectUnauthorized`,
   * `minVersion`, ...) or a function returning them before each connection. Host names are
   * verified. A refused handshake is a TlsError (see ClientEvents.tlsError); `updateTls` swaps the
   * options for later connections.
   */
  tls?: TlsSetting;
  /** The requested session timeout; the server may negotiate another. Default 60 000 (Curator's). */
  sessionTimeoutMs?: number;
  /** How long start() and operations wait for a connection. Default 15 000 (Curator's). */
  connectionTimeoutMs?: number;
  /** Default: exponentialBackoff(1000, 3). */
  retryPolicy?: RetryPolicy;
  /** A path prefix for every operation, e.g. 'app' → '/app'. */
  namespace?: string;
  /** Accept read-only servers (READ_ONLY state). Default false. */
  canBeReadOnly?: boolean;
  /** What recipes treat as an error state: `standard` (SUSPENDED and LOST, the default) or `session` (LOST). */
  errorPolicy?: ErrorPolicy;
  /** Credentials sent on every connection, e.g. [{ scheme: 'digest', auth: 'user:secret' }]. */
  authInfo?: AuthInfo[];
  /**
   * SASL on every connection, before anything else: `{ mechanism: 'DIGEST-MD5', username, password }`
   * (the connection is then `sasl:<username>`), or `{ mechanism }` with any SaslMechanism.
   */
  sasl?: SaslOptions;
  aclProvider?: AclProvider;
  /** A pino-compatible logger; the client is silent without one. */
  logger?: Logger;
  /** The clock behind every timer (tests may inject one). */
  clock?: Clock;
  /**
   * A non-idempotent write (create, delete, versioned setData/setACL, transaction) whose reply was
   * lost with its connection: `prove` (default) resolves its retry's NodeExists / NoNode /
   * BadVersion by proof, else rejects with OutcomeUnknownError; `raw` returns the retry's answer
   * as is and retries sequential creates blindly (Curator's behaviour). See the README's table.
   */
  retryAmbiguousWrites?: 'prove' | 'raw';
  /** The server's frame limit (jute.maxbuffer). Larger requests are refused locally. Default 1 048 575. */
  maxBufferBytes?: number;
  /**
   * What `compressed` / `decompressed` calls use (Curator's CompressionProvider): a provider, or
   * `{ provider, byDefault: true }` to compress every create and setData and decompress every
   * getData unless a call says `false`. Default: `gzip()`, only for calls that ask.
   */
  compression?: CompressionOption;
  /**
   * Follow the ensemble's dynamic config (ZooKeeper 3.5+ reconfig), as Curator's EnsembleTracker:
   * the host list becomes the members' client addresses at every change. Default true; it acts
   * only where the config names client addresses and the transport has a host list.
   */
  ensembleTracker?: boolean;
  /**
   * With `connectString`: resolves a host name to its addresses at each connect attempt (default
   * `dns.lookup` with `all: true`), so a server replaced behind the same name is found. A name
   * that does not resolve is skipped with one log line.
   */
  lookup?: HostLookup;
  /** The random source of host order and rebalancing (default Math.random; tests inject a seeded one). */
  random?: () => number;
}

export const DEFAULTS = {
  sessionTimeoutMs: 60_000,
  connectionTimeoutMs: 15_000,
  retryPolicy: (): RetryPolicy => RetryPolicies.exponentialBackoff(1000, 3),
  maxBufferBytes: DEFAULT_MAX_BUFFER,
} as const;

export function aclFor(provider: AclProvider | undefined, path: string): readonly ACL[] {
  if (provider === undefined) return OPEN_ACL_UNSAFE;
  if (typeof provider === 'function') return provider(path);
  return provider.getAclForPath ? provider.getAclForPath(path) : provider.getDefaultAcl();
}

export function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError(`${name} must be a positive number of milliseconds, got ${String(value)}`);
  }
  return value;
}
