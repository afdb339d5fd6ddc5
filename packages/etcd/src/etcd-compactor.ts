/**
 * The opt-in compactor: one engine of a namespace compacts etcd at a time, keeping `retention`
 * revisions. Election: the key P/compactor, put under a Txn compare (absent) on this engine's own
 * lease, so a compactor that dies hands over once its lease expires (its TTL: `leaseTtlS`).
 *
 * Each heartbeat (a third of the TTL) renews the lease on its own LeaseKeepAlive stream, tries to
 * take the key when it is free, and, when this engine holds it and `intervalMs` has passed,
 * compacts to (revision − retention): a Txn that compares the key's value to this engine (so a
 * compactor that lost its lease unnoticed does not act; the Compact call right after it is
 * idempotent, so a second one in that gap does no harm) and then Compact.
 *
 * What a compaction costs the other engines: nothing while their Watch streams keep up. An engine
 * whose Watch broke for longer than `retention` revisions finds its resume point compacted and
 * loads the prefix again (EtcdStore's resync: the watches of the nodes that changed fire), so
 * `retention` is the window a broken watch resumes from without a reload. The compactor does not
 * track the other engines' applied revisions: that would cost a write per engine per heartbeat.
 */
import type { ClientDuplexStream } from '@grpc/grpc-js';
import type { EtcdRpc, Msg } from './etcd-rpc.js';

export interface EtcdCompactionOptions {
  /** Revisions kept: each compaction goes up to etcd's revision minus this. */
  retention: number;
  /** How often the elected engine compacts. Default 60,000 ms. */
  intervalMs?: number;
  /** The election lease's TTL, whole seconds (how long a dead compactor holds the key). Default 10. */
  leaseTtlS?: number;
}

export type CompactorState = 'following' | 'leading' | 'closed';

export class EtcdCompactor {
  state: CompactorState = 'following';
  /** Compactions this engine made, and the revision of the last. */
  compactions = 0;
  compactedTo = 0n;
  private lease: bigint | undefined;
  private stream: ClientDuplexStream<Msg, Msg> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastCompaction = 0;
  private running: Promise<void> | undefined;
  private readonly intervalMs: number;
  private readonly ttlS: number;

  constructor(
    private readonly rpc: EtcdRpc,
    /** The election key (P/compactor) and this engine's name in it. */
    private readonly key: string,
    private readonly self: string,
    private readonly options: EtcdCompactionOptions,
    private readonly logger?: { warn(obj: unknown, msg?: string): void; info?(obj: unknown, msg?: string): void },
  ) {
    this.intervalMs = options.intervalMs ?? 60_000;
    this.ttlS = Math.max(2, Math.ceil(options.leaseTtlS ?? 10));
  }

  /** A getter, so a check after an await is not narrowed away. */
  private get closed(): boolean {
    return this.state === 'closed';
  }

  start(): void {
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.beat()
        .catch((err: unknown) => {
          // etcd unreachable: nothing is lost; the next heartbeat tries again.
          this.logger?.warn({ err }, 'compactor heartbeat failed');
        })
        .finally(() => {
          this.running = undefined;
          this.schedule(Math.max(100, Math.floor((this.ttlS * 1000) / 3)));
        });
    }, ms);
  }

  private async beat(): Promise<void> {
    if (this.lease === undefined) {
      const grant = await this.rpc.call('lease', 'LeaseGrant', { TTL: String(this.ttlS), ID: '0' });
      this.lease = BigInt(grant['ID'] as string);
    } else this.renew(this.lease);
    if (this.closed) return;
    const key = Buffer.from(this.key);
    const res = await this.rpc.call('kv', 'Txn', {
      compare: [{ key, target: 1, result: 0, create_revision: '0' }],
      success: [{ request_put: { key, value: Buffer.from(this.self), lease: this.lease.toString() } }],
      failure: [{ request_range: { key } }],
    });
    const holder = res['succeeded']
      ? this.self
      : ((((res['responses'] as Msg[])[0]!['response_range'] as Msg)['kvs'] as Array<{ value: Buffer }>)[0]?.value.toString() ?? '');
    const was = this.state;
    if (this.closed) return;
    this.state = holder === this.self ? 'leading' : 'following';
    if (this.state !== was) this.logger?.info?.({ compactor: this.state }, `etcd compactor: ${this.state}`);
    if (this.state === 'leading' && Date.now() - this.lastCompaction >= this.intervalMs) await this.compact(key);
  }

  /** One keep-alive on this compactor's own stream; a lease etcd no longer knows (TTL 0) is dropped. */
  private renew(lease: bigint): void {
    if (this.stream === undefined) {
      const stream = this.rpc.lease['LeaseKeepAlive']!(this.rpc.metadata()) as ClientDuplexStream<Msg, Msg>;
      stream.on('data', (res: Msg) => {
        if (Number(res['TTL'] ?? 0) > 0 || BigInt((res['ID'] as string | undefined) ?? '0') !== this.lease) return;
        this.lease = undefined;
        if (this.state === 'leading') this.state = 'following';
      });
      const drop = (): void => {
        if (this.stream === stream) this.stream = undefined;
      };
      stream.on('error', drop);
      stream.on('end', drop);
      this.stream = stream;
    }
    this.rpc.count('LeaseKeepAlive');
    this.stream.write({ ID: lease.toString() });
  }

  private async compact(key: Buffer): Promise<void> {
    const held = await this.rpc.call('kv', 'Txn', {
      compare: [{ key, target: 3, result: 0, value: Buffer.from(this.self) }],
      success: [],
      failure: [],
    });
    if (!held['succeeded']) {
      this.state = 'following';
      return;
    }
    const revision = BigInt((held['header'] as Msg)['revision'] as string) - BigInt(this.options.retention);
    this.lastCompaction = Date.now();
    if (revision <= this.compactedTo || revision <= 1n) return;
    try {
      await this.rpc.call('kv', 'Compact', { revision: revision.toString(), physical: false });
    } catch (err) {
      // Compacted already (by etcd's own auto-compaction, or a compactor before this one): nothing to do.
      if (!(err instanceof Error && /compacted/.test(err.message))) throw err;
    }
    this.compactions++;
    this.compactedTo = revision;
  }

  /** Stops; a held key is released at once (the lease is revoked), so another engine takes over. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.state = 'closed';
    clearTimeout(this.timer);
    await this.running;
    this.stream?.cancel();
    this.stream = undefined;
    const lease = this.lease;
    this.lease = undefined;
    if (lease !== undefined) await this.rpc.call('lease', 'LeaseRevoke', { ID: lease.toString() }, 1000).catch(() => undefined);
  }
}
