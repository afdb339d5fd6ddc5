/**
 * The server side of one connection, whatever front door carries it (in-process, TCP): the
 * session it is bound to, its auth identities, its watches, and an outbox that delivers replies,
 * notifications and the final close in the order the server produced them.
 *
 * Delivery happens in a microtask (one for every connection due), never inside the call that
 * produced it, so a client callback can never re-enter the server half way through a request.
 * While the host holds the connection's output (a silence, see fault-gate.ts) nothing is
 * delivered, not even a close; the host flushes it all when the hold ends.
 */
import type { ACL, CloseReason, Id, Reply, WatcherEvent } from '@tenure/protocol';
import { Perms } from '@tenure/protocol';
import { permits } from '../security/acl-policy.js';
import type { LimitedConnection, ThrottleSink } from '../front-doors/connection-limits.js';
import type { RequestContext } from './request-processor.js';
import type { Session } from './session-table.js';
import type { Watcher, WatchMode, WatchSide } from './watch-registry.js';

/**
 * Where a connection's output goes: the front end (in-process connection, TCP socket). A front
 * door that can stop reading (a socket) implements `pauseReading` / `resumeReading`, which the
 * server calls for globalOutstandingLimit (connection-limits.ts).
 */
export interface ConnectionSink extends ThrottleSink {
  /** The answer to the request sent with `token`. */
  deliverReply(token: unknown, reply: Reply): void;
  deliverEvent(event: WatcherEvent, zxid: bigint): void;
  /** The server closed the connection. Called at most once, last. */
  deliverClose(reason: CloseReason): void;
}

/** What the connection needs from the server. */
export interface ConnectionHost {
  /** Forgets a connection that closed: its watches, its place on the session. */
  detach(conn: ServerConnection): void;
  /** A sink callback threw: the server logs it and carries on. */
  sinkError(err: unknown): void;
  /** Calls `conn.flush()` in a microtask; one microtask serves every connection due. */
  scheduleFlush(conn: ServerConnection): void;
  /** Whether the connection's output is held now; the host calls `conn.flush()` when the hold ends. */
  holdsOutput(conn: ServerConnection): boolean;
  /** `replies` answers and `events` notifications were delivered (outstanding requests, packets sent). */
  delivered(conn: ServerConnection, replies: number, events: number): void;
  /** The zxid output produced now depends on (the last one applied). */
  outputZxid(): bigint;
  /** Output that depends on a later zxid waits: that txn is not on disk yet (durable storage). */
  visibleZxid(): bigint;
  /** The connection holds output past `visibleZxid()`; the host flushes it when more is durable. */
  awaitDurable(conn: ServerConnection): void;
}

/** `after`: the zxid the item reveals; it is delivered once that txn is durable. */
type Out =
  | { kind: 'reply'; token: unknown; reply: Reply; after: bigint }
  | { kind: 'event'; event: WatcherEvent; zxid: bigint; after: bigint }
  | { kind: 'close'; reason: CloseReason; after: bigint };

let nextConnectionId = 1;

export class ServerConnection implements Watcher, RequestContext, LimitedConnection {
  readonly id = nextConnectionId++;
  // ---- LimitedConnection (connection-limits.ts) ----
  outstanding = 0;
  throttled = false;
  owed: number[] | undefined = undefined;
  private dataModes: Map<string, WatchMode> | undefined;
  private childModes: Map<string, WatchMode> | undefined;
  /** The connection's identities; starts as the shared `[ip]` list, copied on the first auth. */
  authIds: readonly Id[];
  /** No more requests are served; the close is queued or done. */
  closing = false;
  /** The server side is closed; nothing more is queued. */
  closed = false;
  private outbox: Out[] = [];
  private flushQueued = false;

  constructor(
    private readonly host: ConnectionHost,
    readonly session: Session<ServerConnection>,
    private readonly sink: ConnectionSink,
    readonly clientAddr: string,
    baseIds: readonly Id[],
  ) {
    this.authIds = baseIds;
  }

  get throttleSink(): ConnectionSink {
    return this.sink;
  }

  watchModes(side: WatchSide, create: true): Map<string, WatchMode>;
  watchModes(side: WatchSide, create?: boolean): Map<string, WatchMode> | undefined;
  watchModes(side: WatchSide, create = false): Map<string, WatchMode> | undefined {
    if (side === 'data') return create ? (this.dataModes ??= new Map()) : this.dataModes;
    return create ? (this.childModes ??= new Map()) : this.childModes;
  }

  /** Adds identities from an auth packet (no duplicates). */
  addAuthIds(ids: readonly Id[]): void {
    const fresh = ids.filter((id) => !this.authIds.some((a) => a.scheme === id.scheme && a.id === id.id));
    if (fresh.length > 0) this.authIds = [...this.authIds, ...fresh];
  }

  get watcher(): Watcher {
    return this;
  }

  notify(event: WatcherEvent, zxid: bigint, acl?: readonly ACL[]): void {
    if (acl !== undefined && !permits(acl, Perms.READ, this.authIds)) return;
    this.push({ kind: 'event', event, zxid, after: this.host.outputZxid() });
  }

  pushReply(token: unknown, reply: Reply): void {
    this.push({ kind: 'reply', token, reply, after: this.host.outputZxid() });
  }

  /** Closes after everything queued so far has been delivered (closeSession, refused request). */
  closeAfterFlush(message: string): void {
    if (this.closing) return;
    this.closing = true;
    this.push({ kind: 'close', reason: { kind: 'server', message }, after: this.host.outputZxid() });
    this.host.detach(this);
  }

  /** Closes now, dropping whatever was not delivered yet (faults, expiry, restart, re-attach). */
  abort(message: string): void {
    if (this.closed) return;
    this.closing = true;
    this.outbox = [];
    // The close reveals no txn: it need not wait for the log.
    this.push({ kind: 'close', reason: { kind: 'server', message }, after: 0n });
    this.closed = true;
    this.host.detach(this);
  }

  /** The client closed its end: nothing more is delivered. */
  closeByClient(): void {
    if (this.closed) return;
    this.closing = true;
    this.closed = true;
    this.outbox = [];
    this.host.detach(this);
  }

  private push(item: Out): void {
    if (this.closed) return;
    this.outbox.push(item);
    if (item.kind === 'close') this.closed = true;
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.host.holdsOutput(this)) return;
    if (this.flushQueued) return;
    this.flushQueued = true;
    this.host.scheduleFlush(this);
  }

  /** Delivers the outbox in order (the host calls it again when a hold ends). */
  flush(): void {
    this.flushQueued = false;
    // A hold that began after this flush was scheduled: the host flushes again when it ends.
    if (this.host.holdsOutput(this)) return;
    let items = this.outbox;
    this.outbox = [];
    const visible = this.host.visibleZxid();
    const held = items.findIndex((item) => item.after > visible);
    if (held !== -1) {
      this.outbox = items.slice(held);
      items = items.slice(0, held);
      this.host.awaitDurable(this);
    }
    let replies = 0;
    let events = 0;
    for (const item of items) {
      try {
        if (item.kind === 'reply') {
          replies++;
          this.sink.deliverReply(item.token, item.reply);
        } else if (item.kind === 'event') {
          events++;
          this.sink.deliverEvent(item.event, item.zxid);
        } else this.sink.deliverClose(item.reason);
      } catch (err) {
        this.host.sinkError(err);
      }
    }
    if (replies + events > 0) this.host.delivered(this, replies, events);
  }
}
