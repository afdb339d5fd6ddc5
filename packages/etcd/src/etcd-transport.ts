/**
 * etcdTransport: the embedded server's semantics in this process, over an etcd store. The first
 * connect loads the namespace (the prefix) into a mirror and opens one Watch; every session the
 * client opens is an etcd lease. The transport owns that engine (its gRPC channel and streams):
 * close() releases it.
 */
import type { ConnectParams, ConnectResult, ConnectionHandlers, Transport } from '@tenure/protocol';
import { ConnectionLossError } from '@tenure/protocol';
import { createReplicatedServer, type EmbeddedServer, type EmbeddedServerOptions } from '@tenure/server';
import { EtcdRpc, type EtcdAuth, type EtcdTls } from './etcd-rpc.js';
import type { EtcdCompactionOptions } from './etcd-compactor.js';
import type { EtcdHealth } from './etcd-health.js';
import { EtcdStore } from './etcd-store.js';

export interface EtcdTransportOptions {
  /** The namespace's key prefix; several namespaces can share one etcd. Default '/tenure'. */
  prefix?: string;
  /** TLS to etcd (https:// endpoints imply it): CA, and a client certificate when etcd asks for one. */
  tls?: EtcdTls;
  /** etcd's user/password auth; the user needs readwrite on the prefix's range. */
  auth?: EtcdAuth;
  /** etcd's --max-txn-ops, when raised (a multi that needs more is refused whole). Default 128. */
  maxTxnOps?: number;
  /** etcd's --max-request-bytes, when raised. Default 1.5 MiB. */
  maxRequestBytes?: number;
  /**
   * Compact etcd from one elected engine of the namespace, keeping `retention` revisions (README
   * "Compaction and quota"). Default: off (run etcd with --auto-compaction-* instead).
   */
  compaction?: EtcdCompactionOptions;
  /** ZooKeeper's server knobs for the in-process engine (tickMs, session bounds, containers, TTLs, superDigest…). */
  server?: Omit<EmbeddedServerOptions, 'dataDir' | 'name'>;
}

/** The single pseudo-host of an etcd transport (endpoint failover happens inside the gRPC channel). */
export const ETCD_HOST = 'etcd';

export class EtcdTransport implements Transport {
  readonly hosts: readonly string[] = Object.freeze([ETCD_HOST]);
  readonly endpoints: readonly string[];
  readonly prefix: string;
  private engine: Promise<EmbeddedServer> | undefined;
  private rpc: EtcdRpc | undefined;
  private store: EtcdStore | undefined;
  private isClosed = false;

  constructor(
    endpoints: string | readonly string[],
    private readonly options: EtcdTransportOptions = {},
  ) {
    this.endpoints = Object.freeze(typeof endpoints === 'string' ? endpoints.split(',').map((e) => e.trim()) : [...endpoints]);
    this.prefix = options.prefix ?? '/tenure';
    // Parse the endpoints now, so a malformed one is an InvalidArgumentError at construction.
    new EtcdRpc(this.endpoints).close();
  }

  async connect(host: string, params: ConnectParams, handlers: ConnectionHandlers): Promise<ConnectResult> {
    if (host !== ETCD_HOST)
      throw new ConnectionLossError(undefined, `no host named ${JSON.stringify(host)} (an etcd transport has one: ${ETCD_HOST})`);
    if (this.isClosed) throw new ConnectionLossError(undefined, 'the etcd transport is closed');
    const server = await this.server();
    return server.transport().connect(server.name, params, handlers);
  }

  /** The engine, started on first use; a failed start is forgotten, so the next connect tries again. */
  private server(): Promise<EmbeddedServer> {
    this.engine ??= this.start().catch((err: unknown) => {
      this.engine = undefined;
      throw new ConnectionLossError(
        undefined,
        `etcd at ${this.endpoints.join(',')} is unreachable: ${err instanceof Error ? err.message : String(err)}`,
        {
          cause: err,
        },
      );
    });
    return this.engine;
  }

  private async start(): Promise<EmbeddedServer> {
    const o = this.options;
    const rpc = new EtcdRpc(this.endpoints, { tls: o.tls, auth: o.auth });
    this.rpc = rpc;
    const store = new EtcdStore(rpc, this.prefix, {
      maxTxnOps: o.maxTxnOps,
      maxRequestBytes: o.maxRequestBytes,
      logger: o.server?.logger,
      compaction: o.compaction,
    });
    this.store = store;
    return createReplicatedServer(store, {
      containerCheckIntervalMs: 1000,
      ...o.server,
      name: ETCD_HOST,
      // Lease TTLs are whole seconds, at least 2: the session bounds default to match.
      minSessionTimeoutMs: o.server?.minSessionTimeoutMs ?? Math.max(2000, 2 * (o.server?.tickMs ?? 2000)),
    });
  }

  /**
   * etcd round trips so far, by method (Txn, Range, Put, LeaseGrant, LeaseRevoke, and LeaseKeepAlive
   * messages on the one stream): what a ZooKeeper operation costs in etcd calls.
   */
  etcdCalls(): Record<string, number> {
    return Object.fromEntries(this.rpc?.calls ?? []);
  }

  /** What the engine's start-up look at etcd found (compaction, quota, warnings); undefined before it started. */
  health(): EtcdHealth | undefined {
    return this.store?.health;
  }

  /** The compactor's state, when `compaction` is on and the engine has started. */
  compaction(): { state: string; compactions: number; compactedTo: bigint } | undefined {
    const c = this.store?.compactor;
    return c === undefined ? undefined : { state: c.state, compactions: c.compactions, compactedTo: c.compactedTo };
  }

  /** The engine once started (for tests and introspection: sessions(), node(), zxid). */
  async engineServer(): Promise<EmbeddedServer> {
    return this.server();
  }

  /** Closes the engine: every connection closes, the Watch and the channel end. Sessions live on in etcd until they expire. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    const engine = this.engine;
    this.engine = undefined;
    if (engine === undefined) return;
    try {
      await (await engine).close();
    } catch {
      // It never started: nothing to release.
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** A Transport whose tree, sessions and sequence counters live in etcd under `prefix`. */
export function etcdTransport(endpoints: string | readonly string[], options?: EtcdTransportOptions): EtcdTransport {
  return new EtcdTransport(endpoints, options);
}
