/**
 * Transactions: ZooKeeper's multi, atomic, all or nothing. Built with a fluent builder and sent
 * in one request; on failure a TransactionError names the failing op and its code.
 */
import {
  CreateMode,
  KeeperError,
  OpCode,
  ProtocolError,
  isSequentialMode,
  type ACL,
  type MultiOp,
  type MultiResult,
  type Stat,
} from '@tenure/protocol';
import type { ClientCore } from './client-core.js';
import { checkModeAndTtl, createRequest } from './create-node.js';
import { requestChannel, traced } from './diagnostics.js';
import { checkPath } from './path-check.js';
import { DataTooLargeError, TransactionError, type TransactionOpResult } from './errors.js';
import type { Namespace } from './namespace.js';
import { opSize, toBuffer, type NodeData } from './request-size.js';
import { runWrite, type RetryAmbiguousWrites } from './write-outcome.js';

export type TransactionResult =
  /**
   * `stat` is there when the server gives one: ZooKeeper answers container and TTL creates inside
   * a multi with a Stat, and plain creates without (it reads create2 sub-ops as create).
   */
  | { type: 'create'; path: string; stat?: Stat }
  | { type: 'delete'; path: string }
  | { type: 'setData'; path: string; stat: Stat }
  | { type: 'check'; path: string };

export interface TransactionCreateOptions {
  mode?: CreateMode;
  acl?: readonly ACL[];
  ttlMs?: number;
  /** Compress the data with the client's `compression` provider; default its `byDefault`. */
  compressed?: boolean;
}

export interface TransactionSetDataOptions {
  version?: number;
  /** Compress the data with the client's `compression` provider; default its `byDefault`. */
  compressed?: boolean;
}

interface Entry {
  kind: 'create' | 'delete' | 'setData' | 'check';
  clientPath: string;
  op: MultiOp;
  size: number;
  /** The compressed data, until commit puts it into `op`. */
  compressing?: Promise<Buffer>;
}

export class Transaction {
  private readonly entries: Entry[] = [];
  private committed = false;

  constructor(
    private readonly core: ClientCore,
    private readonly ns: Namespace,
    private readonly aclOf: (serverPath: string) => readonly ACL[],
  ) {}

  /** The number of ops so far. */
  get size(): number {
    return this.entries.length;
  }

  create(path: string, data?: NodeData | null, options: TransactionCreateOptions = {}): this {
    const mode = options.mode ?? CreateMode.PERSISTENT;
    checkPath(path, isSequentialMode(mode));
    const ttl = checkModeAndTtl(path, mode, options.ttlMs);
    const full = this.ns.toServer(path);
    const acl = options.acl ?? this.aclOf(full);
    const buf = toBuffer(data, 'transaction create');
    const entry: Entry = { kind: 'create', clientPath: path, op: createRequest(full, buf, acl, mode, ttl), size: opSize(full, buf, acl) };
    this.entries.push(this.compressing(entry, buf, options.compressed));
    return this;
  }

  delete(path: string, options: { version?: number } = {}): this {
    checkPath(path);
    const full = this.ns.toServer(path);
    this.entries.push({
      kind: 'delete',
      clientPath: path,
      op: { type: OpCode.delete, path: full, version: options.version ?? -1 },
      size: opSize(full, null, null),
    });
    return this;
  }

  setData(path: string, data: NodeData | null, options: TransactionSetDataOptions = {}): this {
    checkPath(path);
    const full = this.ns.toServer(path);
    const buf = toBuffer(data, 'transaction setData');
    const entry: Entry = {
      kind: 'setData',
      clientPath: path,
      op: { type: OpCode.setData, path: full, data: buf, version: options.version ?? -1 },
      size: opSize(full, buf, null),
    };
    this.entries.push(this.compressing(entry, buf, options.compressed));
    return this;
  }

  /** Starts compressing the entry's data when asked (or by default); commit waits for it. */
  private compressing(entry: Entry, data: Buffer, flag: boolean | undefined): Entry {
    const compression = this.core.compression;
    if (!compression.applies(flag)) return entry;
    entry.compressing = compression.compress(entry.clientPath, data);
    entry.compressing.catch(() => {}); // rejected at commit
    return entry;
  }

  /** Fails the transaction unless the node's version is `version`. */
  check(path: string, version: number): this {
    checkPath(path);
    const full = this.ns.toServer(path);
    this.entries.push({ kind: 'check', clientPath: path, op: { type: OpCode.check, path: full, version }, size: opSize(full, null, null) });
    return this;
  }

  /** Sends the transaction; resolves with one result per op, in order. */
  commit(options: { signal?: AbortSignal; retryAmbiguousWrites?: RetryAmbiguousWrites } = {}): Promise<TransactionResult[]> {
    return requestChannel.hasSubscribers ? traced('transaction', undefined, () => this.#commit(options), this.core) : this.#commit(options);
  }

  async #commit(options: { signal?: AbortSignal; retryAmbiguousWrites?: RetryAmbiguousWrites }): Promise<TransactionResult[]> {
    this.core.check('transaction');
    if (this.committed) throw new ProtocolError('this transaction was already committed');
    this.committed = true;
    const entries = this.entries;
    if (entries.length === 0) return [];
    for (const e of entries) {
      if (!e.compressing || !('data' in e.op)) continue;
      const data = await e.compressing;
      e.size += data.length - (e.op.data?.length ?? 0);
      e.op = { ...e.op, data };
    }
    const size = 8 + 9 + entries.reduce((n, e) => n + e.size, 0);
    if (size > this.core.maxBufferBytes) throw new DataTooLargeError(entries[0]!.clientPath, size, this.core.maxBufferBytes);
    const ns = this.ns;
    const req = { type: OpCode.multi, ops: entries.map((e) => e.op) } as const;
    return runWrite(
      this.core,
      req,
      options.signal,
      entries[0]!.clientPath,
      'transaction',
      (reply) => {
        if (reply.err !== 0) throw KeeperError.from(reply.err, entries[0]!.clientPath, 'transaction rejected');
        const results = reply.response!.results;
        const failed = results.findIndex((r) => r.type === OpCode.error && r.err !== 0);
        if (failed >= 0) {
          const report: TransactionOpResult[] = entries.map((e, i) => {
            const r = results[i];
            return { type: e.kind, path: e.clientPath, code: r && r.type === OpCode.error ? r.err : 0 };
          });
          throw new TransactionError(failed, report);
        }
        return entries.map((e, i) => toResult(e, results[i], ns));
      },
      options.retryAmbiguousWrites,
    );
  }
}

function toResult(e: Entry, r: MultiResult | undefined, ns: Namespace): TransactionResult {
  switch (e.kind) {
    case 'create':
      if (r?.type === OpCode.create2) return { type: 'create', path: ns.fromServer(r.path), stat: r.stat };
      if (r?.type === OpCode.create) return { type: 'create', path: ns.fromServer(r.path) };
      throw new ProtocolError(`unexpected multi result ${String(r?.type)} for create`);
    case 'setData':
      if (r?.type !== OpCode.setData) throw new ProtocolError(`unexpected multi result ${String(r?.type)} for setData`);
      return { type: 'setData', path: e.clientPath, stat: r.stat };
    case 'delete':
      return { type: 'delete', path: e.clientPath };
    case 'check':
      return { type: 'check', path: e.clientPath };
  }
}
