/**
 * The etcd store: @tenure/server's ReplicatedStore on etcd v3.
 *
 * - open(): the meta key (layout version, password secret) and the root are created if absent,
 *   the prefix is loaded with Ranges pinned to one revision, then one Watch streams every later
 *   revision in order; the server's mirror applies each before any commit of it resolves.
 * - commit(): one Txn. Compares: the mod_revision of the node and children keys of every path the
 *   evaluation read (0 for an absent key). Success: the puts and deletes, one per key, and this
 *   front end's marker (so the watch tells our revisions apart). Failure: the marker alone, so
 *   the mirror has something to catch up to before the write is evaluated again.
 * - Sessions are leases (id = lease id, TTL = the timeout in whole seconds, at least 2): the
 *   session key and its ephemerals live on the lease, so expiry deletes them in one revision.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { channel } from 'node:diagnostics_channel';
import type { ClientDuplexStream } from '@grpc/grpc-js';
import type {
  ChildrenRecord,
  CommitOutcome,
  NodeRecord,
  ReplicatedStore,
  RevisionChange,
  StoreSink,
  StoreSnapshot,
  WriteSet,
} from '@tenure/server';
import { StoreLimitError, StoreUnavailableError } from '@tenure/server';
import { EtcdLayoutError, EtcdUnavailableError } from './errors.js';
import { decodeNode, encodeNode, isSessionOwner, KeyLayout, LAYOUT_VERSION, rootValue } from './key-layout.js';
import type { EtcdRpc, Msg } from './etcd-rpc.js';
import { EtcdCompactor, type EtcdCompactionOptions } from './etcd-compactor.js';
import { probeEtcdHealth, type EtcdHealth } from './etcd-health.js';

export interface EtcdStoreOptions {
  /** etcd's --max-txn-ops (compares and each branch). Default 128, etcd's default. */
  maxTxnOps?: number;
  /** etcd's --max-request-bytes. Default 1.5 MiB, etcd's default. */
  maxRequestBytes?: number;
  /** How long a commit waits for the watch to deliver its revision before giving up. Default 10,000 ms. */
  applyTimeoutMs?: number;
  logger?: { warn(obj: unknown, msg?: string): void; info?(obj: unknown, msg?: string): void } | undefined;
  /** The opt-in compactor (one elected engine per namespace compacts); absent: off. */
  compaction?: EtcdCompactionOptions | undefined;
}

/** Where each engine publishes its start-up look at etcd's compaction and quota (EtcdHealth and the prefix). */
export const HEALTH_CHANNEL = 'tenure:etcd:health';

interface KeyRevs {
  create: bigint;
  mod: bigint;
}

interface KeyValue {
  key: Buffer;
  value: Buffer;
  create_revision: string;
  mod_revision: string;
  lease: string;
}

type Op = { request_put: Msg } | { request_delete_range: Msg };

/** The page size of the initial load and of a resync. */
const PAGE = 500;

export class EtcdStore implements ReplicatedStore {
  private readonly keys: KeyLayout;
  private readonly frontId = randomBytes(8).toString('hex');
  private secret = Buffer.alloc(0);
  /** Every key under the prefix and its revisions, as the mirror has applied them. */
  private readonly revs = new Map<string, KeyRevs>();
  private applied = 0n;
  private waiters: Array<{ revision: bigint; resolve(): void; reject(err: Error): void }> = [];
  private sink: StoreSink | undefined;
  private watchStream: ClientDuplexStream<Msg, Msg> | undefined;
  private keepAlive: ClientDuplexStream<Msg, Msg> | undefined;
  /** When the last renewal of each session that etcd acknowledged was sent, and renewals sent but not yet acknowledged. */
  private readonly renewed = new Map<bigint, number>();
  private readonly renewing = new Map<bigint, number>();
  /** One per unanswered renewal: fires shortly before the lease could expire (see renewSession). */
  private readonly renewTimers = new Set<NodeJS.Timeout>();
  /** The front end each session was last served by (its session key's `f`). */
  private readonly owners = new Map<bigint, string>();
  private up = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly maxTxnOps: number;
  private readonly maxRequestBytes: number;
  private readonly applyTimeoutMs: number;
  /** The compactor, when on. */
  readonly compactor: EtcdCompactor | undefined;
  /** What the start-up look at etcd found (undefined until open, or if etcd did not answer it). */
  health: EtcdHealth | undefined;

  constructor(
    private readonly rpc: EtcdRpc,
    prefix: string,
    private readonly options: EtcdStoreOptions = {},
  ) {
    this.keys = new KeyLayout(prefix);
    this.maxTxnOps = options.maxTxnOps ?? 128;
    this.maxRequestBytes = options.maxRequestBytes ?? 1.5 * 1024 * 1024;
    this.applyTimeoutMs = options.applyTimeoutMs ?? 10_000;
    this.compactor =
      options.compaction === undefined
        ? undefined
        : new EtcdCompactor(rpc, this.keys.compactor, this.frontId, options.compaction, options.logger);
  }

  get reachable(): boolean {
    return this.up && !this.closed;
  }

  // ---- open: meta, root, load, watch ----

  async open(sink: StoreSink): Promise<StoreSnapshot> {
    this.sink = sink;
    await this.rpc.authenticate();
    await this.initialize();
    const snap = await this.load();
    this.applied = snap.revision;
    // etcd answered the load: reachable now; a Watch that then fails says otherwise.
    this.up = true;
    this.startWatch(snap.revision + 1n);
    await this.checkHealth();
    this.compactor?.start();
    return snap;
  }

  /** Warns (logger and HEALTH_CHANNEL) when etcd never compacts and the compactor is off, or its backend nears the quota. */
  private async checkHealth(): Promise<void> {
    try {
      this.health = await probeEtcdHealth(this.rpc, {
        compactorOn: this.compactor !== undefined,
        tls: this.rpc.tls,
        key: Buffer.from(this.keys.meta),
      });
    } catch (err) {
      this.options.logger?.warn({ err }, "could not look at etcd's compaction and quota");
      return;
    }
    const h = this.health;
    const fields = { revision: h.revision.toString(), compacted: h.compacted, dbSize: h.dbSize, quotaBytes: h.quotaBytes ?? 'unknown' };
    for (const w of h.warnings) this.options.logger?.warn(fields, w);
    if (h.warnings.length === 0) this.options.logger?.info?.(fields, 'etcd compaction and quota');
    const ch = channel(HEALTH_CHANNEL);
    if (ch.hasSubscribers) ch.publish({ prefix: this.keys.prefix, ...h });
  }

  /** Creates the meta key and the root if absent; checks the layout version. */
  private async initialize(): Promise<void> {
    const meta = Buffer.from(JSON.stringify({ layout: LAYOUT_VERSION, secret: randomBytes(32).toString('base64') }));
    const res = await this.rpc.call('kv', 'Txn', {
      compare: [{ key: Buffer.from(this.keys.meta), target: 1, result: 0, create_revision: '0' }],
      success: [put(this.keys.meta, meta), put(this.keys.node('/'), rootValue()), put(this.keys.children('/'), Buffer.from('0'))],
      failure: [{ request_range: { key: Buffer.from(this.keys.meta) } }],
    });
    const value = res['succeeded']
      ? meta
      : ((((res['responses'] as Msg[])[0]!['response_range'] as Msg)['kvs'] as KeyValue[])[0]?.value ?? Buffer.alloc(0));
    let parsed: { layout?: unknown; secret?: unknown };
    try {
      parsed = JSON.parse(value.toString('utf8')) as typeof parsed;
    } catch {
      throw new EtcdLayoutError(`${this.keys.meta} is not Tenure's meta key`);
    }
    if (parsed.layout !== LAYOUT_VERSION || typeof parsed.secret !== 'string') {
      throw new EtcdLayoutError(`${this.keys.meta} holds layout ${String(parsed.layout)}; this version reads layout ${LAYOUT_VERSION}`);
    }
    this.secret = Buffer.from(parsed.secret, 'base64');
  }

  /** The whole prefix at one revision, in pages. */
  private async load(): Promise<StoreSnapshot> {
    const nodes = new Map<string, NodeRecord>();
    const children = new Map<string, ChildrenRecord>();
    const sessions = new Map<bigint, number>();
    this.revs.clear();
    let revision = 0n;
    let from = this.keys.start;
    for (;;) {
      const res = await this.rpc.call(
        'kv',
        'Range',
        { key: from, range_end: this.keys.end, limit: PAGE, revision: revision.toString() },
        30_000,
      );
      if (revision === 0n) revision = BigInt((res['header'] as Msg)['revision'] as string);
      const kvs = res['kvs'] as KeyValue[];
      for (const kv of kvs) {
        const key = kv.key.toString('utf8');
        const create = BigInt(kv.create_revision);
        const mod = BigInt(kv.mod_revision);
        this.revs.set(key, { create, mod });
        const k = this.keys.parse(key);
        if (k.kind === 'n') nodes.set(k.path, decodeNode(kv.value, create, mod));
        else if (k.kind === 'c') children.set(k.path, { cversion: Number(kv.value.toString()), pzxid: mod });
        else if (k.kind === 's') {
          sessions.set(k.id, sessionTimeout(kv.value));
          const owner = sessionOwner(kv.value);
          if (owner !== undefined) this.owners.set(k.id, owner);
        }
      }
      if (!res['more'] || kvs.length === 0) break;
      from = Buffer.concat([kvs[kvs.length - 1]!.key, Buffer.from([0])]);
    }
    return { revision, nodes, children, sessions };
  }

  private startWatch(fromRevision: bigint): void {
    if (this.closed) return;
    const stream = this.rpc.watch['Watch']!(this.rpc.metadata()) as ClientDuplexStream<Msg, Msg>;
    this.watchStream = stream;
    let pending: { revision: bigint; events: Msg[] } | undefined;
    stream.on('data', (res: Msg) => {
      if (stream !== this.watchStream) return;
      if (res['created']) this.setUp(true);
      if (res['canceled']) {
        const compact = BigInt((res['compact_revision'] as string | undefined) ?? '0');
        stream.cancel();
        if (compact > 0n) this.resync().catch(() => undefined);
        else this.restartWatch(`watch canceled: ${String(res['cancel_reason'])}`);
        return;
      }
      // Events of one revision arrive together; a response may carry several revisions.
      for (const ev of (res['events'] as Msg[] | undefined) ?? []) {
        const rev = BigInt((ev['kv'] as KeyValue).mod_revision);
        if (pending !== undefined && pending.revision !== rev) this.applyRevision(pending.revision, pending.events);
        if (pending === undefined || pending.revision !== rev) pending = { revision: rev, events: [] };
        pending.events.push(ev);
      }
      if (pending !== undefined) this.applyRevision(pending.revision, pending.events);
      pending = undefined;
    });
    stream.on('error', (err: Error) => {
      if (stream === this.watchStream) this.restartWatch(err.message);
    });
    stream.on('end', () => {
      if (stream === this.watchStream) this.restartWatch('watch stream ended');
    });
    stream.write({
      create_request: { key: this.keys.start, range_end: this.keys.end, start_revision: fromRevision.toString(), prev_kv: false },
    });
  }

  /** The watch broke: etcd is unreachable until it is open again; it resumes after the last applied revision. */
  private restartWatch(reason: string): void {
    this.watchStream = undefined;
    this.setUp(false);
    if (this.closed || this.retryTimer !== undefined) return;
    this.options.logger?.warn({ reason }, 'etcd watch broke; resuming from the last applied revision');
    // etcd's simple auth tokens expire (--auth-token-ttl): a Watch refused for its token re-authenticates first.
    const reauth = /auth token/i.test(reason);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!reauth) this.startWatch(this.applied + 1n);
      else
        this.rpc.authenticate().then(
          () => this.startWatch(this.applied + 1n),
          (err: unknown) => this.restartWatch(`re-authentication failed: ${err instanceof Error ? err.message : String(err)}`),
        );
    }, 250);
  }

  /**
   * etcd compacted past the last applied revision: the events in between are gone. The prefix is
   * loaded again and the difference applied as one revision, so the watches of exactly the nodes
   * that changed fire (what a ZooKeeper client sees after a reconnect with SetWatches).
   */
  private async resync(): Promise<void> {
    this.watchStream = undefined;
    const before = new Map(this.revs);
    let snap: StoreSnapshot;
    try {
      snap = await this.load();
    } catch (err) {
      this.revs.clear();
      for (const [k, v] of before) this.revs.set(k, v);
      this.restartWatch(`resync failed: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    const nodes = new Map<string, NodeRecord | null>();
    const children = new Map<string, ChildrenRecord | null>();
    const started = new Map<bigint, number>();
    const ended: bigint[] = [];
    for (const [key, r] of before) {
      const k = this.keys.parse(key);
      if (this.revs.has(key)) continue;
      if (k.kind === 'n') nodes.set(k.path, null);
      else if (k.kind === 'c') children.set(k.path, null);
      else if (k.kind === 's') ended.push(k.id);
      void r;
    }
    for (const [path, rec] of snap.nodes) {
      const r = before.get(this.keys.node(path));
      if (r === undefined || r.mod !== this.revs.get(this.keys.node(path))!.mod) nodes.set(path, rec);
    }
    for (const [path, c] of snap.children) {
      const r = before.get(this.keys.children(path));
      if (r === undefined || r.mod !== c.pzxid) children.set(path, c);
    }
    for (const [id, t] of snap.sessions) if (!before.has(this.keys.session(id))) started.set(id, t);
    this.deliver({ revision: snap.revision, nodes, children, startedSessions: started, endedSessions: ended, resync: true });
    this.startWatch(snap.revision + 1n);
  }

  private applyRevision(revision: bigint, events: Msg[]): void {
    // etcd 3.4.23 may repeat events (etcd#15275): what was applied is dropped.
    if (revision <= this.applied) return;
    const nodes = new Map<string, NodeRecord | null>();
    const children = new Map<string, ChildrenRecord | null>();
    const started = new Map<bigint, number>();
    const ended: bigint[] = [];
    let commit: number | undefined;
    let order: Array<[string, string]> | undefined;
    const moved: bigint[] = [];
    for (const ev of events) {
      const kv = ev['kv'] as KeyValue;
      const key = kv.key.toString('utf8');
      const isDelete = ev['type'] === 1 || ev['type'] === 'DELETE';
      const create = BigInt(kv.create_revision || '0');
      const mod = BigInt(kv.mod_revision);
      if (isDelete) this.revs.delete(key);
      else this.revs.set(key, { create, mod });
      const k = this.keys.parse(key);
      if (k.kind === 'n') nodes.set(k.path, isDelete ? null : decodeNode(kv.value, create, mod));
      else if (k.kind === 'c') children.set(k.path, isDelete ? null : { cversion: Number(kv.value.toString()), pzxid: mod });
      else if (k.kind === 's') {
        if (isDelete) {
          ended.push(k.id);
          this.owners.delete(k.id);
          this.renewed.delete(k.id);
          this.renewing.delete(k.id);
        } else {
          started.set(k.id, sessionTimeout(kv.value));
          const owner = sessionOwner(kv.value);
          if (owner !== undefined) this.owners.set(k.id, owner);
          if (owner !== undefined && owner !== this.frontId) moved.push(k.id);
        }
      } else if (k.kind === 'f' && !isDelete) {
        const v = kv.value.toString();
        if (!v.startsWith('c')) continue;
        const space = v.indexOf(' ');
        if (k.id === this.frontId) commit = Number(v.slice(1, space === -1 ? undefined : space));
        else if (space !== -1) order = JSON.parse(v.slice(space + 1)) as Array<[string, string]>;
      }
    }
    this.deliver({ revision, nodes, children, startedSessions: started, endedSessions: ended, commit, order, movedSessions: moved });
  }

  private deliver(change: RevisionChange): void {
    this.applied = change.revision;
    try {
      this.sink?.apply(change);
    } catch (err) {
      this.options.logger?.warn({ err, revision: change.revision }, 'the mirror could not apply a revision');
    }
    const due = this.waiters.filter((w) => w.revision <= this.applied);
    if (due.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.revision > this.applied);
    for (const w of due) w.resolve();
  }

  private setUp(up: boolean): void {
    if (this.up === up) return;
    this.up = up;
    this.sink?.reachable(up);
  }

  /** Resolves once the mirror has applied `revision`. */
  private appliedAt(revision: bigint): Promise<void> {
    if (revision <= this.applied) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const w = {
        revision,
        resolve: () => (clearTimeout(timer), resolve()),
        reject: (err: Error) => (clearTimeout(timer), reject(err)),
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new StoreUnavailableError(`etcd's watch did not deliver revision ${revision} within ${this.applyTimeoutMs} ms`));
      }, this.applyTimeoutMs);
      this.waiters.push(w);
    });
  }

  // ---- commits ----

  async commit(write: WriteSet): Promise<CommitOutcome> {
    const compare: Msg[] = [];
    for (const path of write.reads) {
      for (const key of [this.keys.node(path), this.keys.children(path)]) {
        compare.push({ key: Buffer.from(key), target: 2, result: 0, mod_revision: (this.revs.get(key)?.mod ?? 0n).toString() });
      }
    }
    const ops = new Map<string, Op>();
    for (const [path, rec] of write.nodes) {
      const nk = this.keys.node(path);
      const ck = this.keys.children(path);
      const existing = this.revs.get(nk);
      if (rec === null) {
        if (existing !== undefined) ops.set(nk, del(nk));
        if (this.revs.has(ck)) ops.set(ck, del(ck));
        continue;
      }
      const lease = isSessionOwner(rec.ephemeralOwner) ? rec.ephemeralOwner : 0n;
      ops.set(nk, put(nk, encodeNode(rec, write.placeholder, existing?.create), lease));
      if (existing === undefined || rec.czxid === write.placeholder) {
        ops.set(ck, put(ck, Buffer.from(String(write.children.get(path) ?? 0)), lease));
      }
    }
    for (const [path, cversion] of write.children) {
      const ck = this.keys.children(path);
      if (ops.has(ck)) continue;
      const owner = write.nodes.get(path)?.ephemeralOwner ?? 0n;
      ops.set(ck, put(ck, Buffer.from(String(cversion)), isSessionOwner(owner) ? owner : 0n));
    }
    if (write.endSession !== undefined) ops.set(this.keys.session(write.endSession), del(this.keys.session(write.endSession)));
    // A failing write that takes a zxid commits its marker alone (one revision, as ZooKeeper's error txn).
    const writes = ops.size > 0 || write.takesZxid === true;
    const marker = this.keys.front(this.frontId);
    const tag = write.order === undefined ? `c${write.id}` : `c${write.id} ${JSON.stringify(write.order)}`;
    const success = writes ? [...ops.values(), put(marker, Buffer.from(tag))] : [];
    this.checkLimits(compare.length, success);
    let res: Msg;
    try {
      res = await this.rpc.call('kv', 'Txn', { compare, success, failure: [put(marker, Buffer.from('x'))] });
    } catch (err) {
      throw new StoreUnavailableError(`the outcome of a commit is unknown: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    const revision = BigInt((res['header'] as Msg)['revision'] as string);
    if (!res['succeeded']) {
      await this.appliedAt(revision);
      return { kind: 'conflict', revision };
    }
    if (!writes) return { kind: 'unchanged', revision: this.applied };
    await this.appliedAt(revision);
    if (write.endSession !== undefined) this.revokeSession(write.endSession).catch(() => undefined);
    return { kind: 'committed', revision };
  }

  /** A Txn etcd would refuse is refused here, whole, naming the limit. */
  private checkLimits(compares: number, success: Op[]): void {
    if (compares > this.maxTxnOps || success.length > this.maxTxnOps) {
      throw new StoreLimitError(
        'max-txn-ops',
        `the write needs ${compares} compares and ${success.length} operations in one etcd Txn; etcd's --max-txn-ops is ${this.maxTxnOps}`,
      );
    }
    let bytes = compares * 64;
    for (const op of success) {
      const m = 'request_put' in op ? op.request_put : op.request_delete_range;
      bytes += (m['key'] as Buffer).length + ((m['value'] as Buffer | undefined)?.length ?? 0) + 32;
    }
    if (bytes > this.maxRequestBytes) {
      throw new StoreLimitError(
        'max-request-bytes',
        `the write is about ${bytes} bytes in one etcd Txn; etcd's --max-request-bytes is ${this.maxRequestBytes}`,
      );
    }
  }

  /**
   * sync: a linearizable Range of the front ends' markers, newest first. Every commit of every
   * front end puts its marker, so the newest marker's mod_revision is the last committed write; the
   * reply waits until the mirror has applied it. One round trip, and no revision of its own (as
   * ZooKeeper's sync takes no zxid).
   */
  async barrier(): Promise<bigint> {
    const start = Buffer.from(this.keys.front(''));
    const end = Buffer.concat([start.subarray(0, start.length - 1), Buffer.from('0')]);
    const res = await this.unavailableAs(() =>
      this.rpc.call('kv', 'Range', { key: start, range_end: end, limit: 1, sort_order: 2, sort_target: 3, keys_only: true }),
    );
    const kv = (res['kvs'] as KeyValue[])[0];
    const revision = kv === undefined ? this.applied : BigInt(kv.mod_revision);
    await this.appliedAt(revision);
    return revision;
  }

  // ---- sessions ----

  async createSession(timeoutMs: number): Promise<{ id: bigint; timeoutMs: number }> {
    const ttl = Math.max(2, Math.ceil(timeoutMs / 1000));
    const asked = Date.now();
    const grant = await this.unavailableAs(() => this.rpc.call('lease', 'LeaseGrant', { TTL: String(ttl), ID: '0' }));
    if (grant['error']) throw new EtcdUnavailableError(`etcd LeaseGrant: ${JSON.stringify(grant['error'])}`);
    const id = BigInt(grant['ID'] as string);
    const granted = Math.max(ttl, Number(grant['TTL'])) * 1000;
    const res = await this.unavailableAs(() =>
      this.rpc.call('kv', 'Put', put(this.keys.session(id), Buffer.from(JSON.stringify({ t: granted, f: this.frontId })), id).request_put),
    );
    await this.appliedAt(BigInt((res['header'] as Msg)['revision'] as string));
    this.renewed.set(id, asked);
    return { id, timeoutMs: granted };
  }

  /**
   * A re-attach here: the session key names this front end (one Put on the session's lease). A
   * session already served here costs nothing while etcd renewed its lease within the last third of
   * its timeout; otherwise the Put proves the lease is still alive (a front end cut off from etcd
   * must not let a client re-attach to a session etcd may have expired).
   */
  async claimSession(id: bigint, timeoutMs: number): Promise<void> {
    const renewed = this.renewed.get(id);
    if (this.owners.get(id) === this.frontId && renewed !== undefined && Date.now() - renewed < timeoutMs / 3) return;
    const value = Buffer.from(JSON.stringify({ t: timeoutMs, f: this.frontId }));
    const res = await this.unavailableAs(() => this.rpc.call('kv', 'Put', put(this.keys.session(id), value, id).request_put));
    await this.appliedAt(BigInt((res['header'] as Msg)['revision'] as string));
  }

  sessionPassword(id: bigint): Buffer {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(id);
    return createHmac('sha256', this.secret).update(b).digest().subarray(0, 16);
  }

  /**
   * A keep-alive on the one LeaseKeepAlive stream. At most one per third of the timeout per session,
   * counted from the last renewal etcd acknowledged, and one in flight at a time (a renewal sent into
   * a stream that then broke is sent again at the next request or ping).
   *
   * A renewal still unanswered shortly before the lease could expire (the last acknowledged one's
   * send time + the TTL, less a margin) means etcd is out of reach (a partition, no quorum): this
   * front end stops vouching for its sessions, as a ZooKeeper server cut off from its quorum does.
   * The watch restarts, every connection closes and handshakes are refused until etcd answers
   * again, so a client goes SUSPENDED before its lease can expire, and never re-attaches here to a
   * session etcd may already have expired. Pings are answered locally, so without this a cut-off
   * front end would keep its clients CONNECTED past their sessions' end.
   */
  renewSession(id: bigint, timeoutMs: number): void {
    if (this.closed) return;
    const now = Date.now();
    const acked = this.renewed.get(id);
    if (acked !== undefined && now - acked < timeoutMs / 3) return;
    const sent = this.renewing.get(id);
    if (sent !== undefined && now - sent < 1000) return;
    this.renewing.set(id, now);
    const margin = Math.max(500, timeoutMs / 6);
    const timer = setTimeout(
      () => {
        this.renewTimers.delete(timer);
        const last = this.renewed.get(id);
        // Answered since, or the session ended or moved to another front end: nothing to do.
        if (this.closed || (last !== undefined && last >= now) || this.owners.get(id) !== this.frontId) return;
        this.keepAlive?.cancel();
        this.keepAlive = undefined;
        this.renewing.clear();
        const watch = this.watchStream;
        this.restartWatch(`etcd did not answer a lease keep-alive within ${Date.now() - now} ms`);
        watch?.cancel();
      },
      // At least half a second: a session renewed late (its client was away) still gets etcd's answer.
      Math.max(500, (acked ?? now) + timeoutMs - margin - now),
    );
    this.renewTimers.add(timer);
    if (this.keepAlive === undefined) {
      const stream = this.rpc.lease['LeaseKeepAlive']!(this.rpc.metadata()) as ClientDuplexStream<Msg, Msg>;
      stream.on('data', (res: Msg) => {
        const lease = BigInt((res['ID'] as string | undefined) ?? '0');
        const sentAt = this.renewing.get(lease);
        this.renewing.delete(lease);
        if (Number(res['TTL'] ?? 0) > 0 && sentAt !== undefined) this.renewed.set(lease, sentAt);
      });
      const drop = (): void => {
        if (this.keepAlive !== stream) return;
        this.keepAlive = undefined;
        this.renewing.clear();
      };
      stream.on('error', drop);
      stream.on('end', drop);
      this.keepAlive = stream;
    }
    this.rpc.count('LeaseKeepAlive');
    this.keepAlive.write({ ID: id.toString() });
  }

  async revokeSession(id: bigint): Promise<void> {
    this.renewed.delete(id);
    this.renewing.delete(id);
    try {
      await this.rpc.call('lease', 'LeaseRevoke', { ID: id.toString() });
    } catch (err) {
      // Already gone (expired, or revoked by another front end) is the outcome wanted.
      if (!(err instanceof EtcdUnavailableError && /not found/.test(err.message))) throw err;
    }
  }

  private async unavailableAs<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw new StoreUnavailableError(err instanceof Error ? err.message : String(err), { cause: err });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    for (const t of this.renewTimers) clearTimeout(t);
    this.renewTimers.clear();
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w.reject(new StoreUnavailableError('the etcd store is closed'));
    const stream = this.watchStream;
    this.watchStream = undefined;
    stream?.cancel();
    this.keepAlive?.cancel();
    this.keepAlive = undefined;
    await this.compactor?.close();
    try {
      await this.rpc.call('kv', 'DeleteRange', { key: Buffer.from(this.keys.front(this.frontId)) }, 1000);
    } catch {
      // etcd is gone: the marker stays (a few bytes).
    }
    this.rpc.close();
  }
}

function put(key: string, value: Buffer, lease = 0n): { request_put: Msg } {
  return { request_put: { key: Buffer.from(key), value, lease: lease.toString() } };
}

function del(key: string): { request_delete_range: Msg } {
  return { request_delete_range: { key: Buffer.from(key) } };
}

function sessionOwner(value: Buffer): string | undefined {
  try {
    const f = (JSON.parse(value.toString('utf8')) as { f?: unknown }).f;
    return typeof f === 'string' ? f : undefined;
  } catch {
    return undefined;
  }
}

function sessionTimeout(value: Buffer): number {
  try {
    return Number((JSON.parse(value.toString('utf8')) as { t?: unknown }).t) || 2000;
  } catch {
    return 2000;
  }
}
