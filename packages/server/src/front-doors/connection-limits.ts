/**
 * ZooKeeper's connection limits, kept behind the front door so that every listener (in-process,
 * TCP, TLS, WebSocket) gets them alike:
 *
 * - **maxClientCnxns**: at most this many connections per client address (0: no limit). A handshake
 *   over the limit is refused and its socket closed without an answer, as ZooKeeper's
 *   NIOServerCnxnFactory closes a socket from an address that has too many ("Too many connections
 *   from /ip - max is N").
 * - **globalOutstandingLimit**: requests received but not yet answered, over every connection.
 *   Once the total is above the limit, a connection that adds one more with replies still owed
 *   stops being read (its sink's `pauseReading`), and it is read again when one of its replies
 *   leaves and it no longer needs throttling: ZooKeeper's `shouldThrottle` and `disableRecv` /
 *   `enableRecv`. The bytes stay in the kernel's socket buffers, so a client that keeps writing
 *   is slowed down by TCP itself instead of growing a queue here.
 *
 * It also keeps the server-wide counts the metrics show (ZooKeeper's ServerStats): packets
 * received and sent, request latencies, read and write latencies, connections refused.
 */
import { OpCode } from '@tenure/protocol';

/** A connection as the limits see it. */
export interface LimitedConnection {
  /** Requests received and not yet answered on this connection. */
  outstanding: number;
  /** Reading was paused for the outstanding limit. */
  throttled: boolean;
  /** Receive times (ms) and op codes of the requests owed, oldest first, while timing is on. */
  owed: number[] | undefined;
  readonly throttleSink: ThrottleSink;
}

/** What a front door's connection offers to be paused (a socket's reads); optional. */
export interface ThrottleSink {
  /** Stop reading requests from this connection (keep what is buffered for later). */
  pauseReading?(): void;
  /** Read again. */
  resumeReading?(): void;
}

/** Called for each answered request while timing is on (readlatency / updatelatency). */
export type LatencyObserver = (ms: number, op: number) => void;

/** Write ops, as ZooKeeper's metrics split readlatency from updatelatency. */
const WRITES = new Set<number>([
  OpCode.create,
  OpCode.create2,
  OpCode.createContainer,
  OpCode.createTTL,
  OpCode.delete,
  OpCode.deleteContainer,
  OpCode.setData,
  OpCode.setACL,
  OpCode.multi,
  OpCode.reconfig,
  OpCode.closeSession,
]);
/** Requests that are neither reads nor writes (ZooKeeper's xid <= 0 requests and sessions' housekeeping). */
const HOUSEKEEPING = new Set<number>([OpCode.ping, OpCode.auth, OpCode.setWatches, OpCode.setWatches2, OpCode.sasl]);

/** Whether `op` is a write (updatelatency), a read (readlatency) or neither. */
export function requestKind(op: number): 'write' | 'read' | 'other' {
  return WRITES.has(op) ? 'write' : HOUSEKEEPING.has(op) ? 'other' : 'read';
}

export class ConnectionLimits {
  /** Requests received and not yet answered, over every connection (ZooKeeper's outstanding_requests). */
  outstanding = 0;
  /** Requests and handshakes received; replies and notifications delivered (packets_received / sent). */
  packetsReceived = 0;
  packetsSent = 0;
  /** Handshakes refused for maxClientCnxns (connection_rejected). */
  rejected = 0;
  /** Request latency in ms over every answered request while timing is on (avg/min/max_latency). */
  latency = { count: 0, sumMs: 0, minMs: Infinity, maxMs: 0 };
  private readonly perAddress = new Map<string, number>();
  private observer: LatencyObserver | undefined;
  private idleWaiters: Array<() => void> = [];

  constructor(
    /** Connections per client address; 0 for no limit. */
    readonly maxClientCnxns: number,
    /** Requests owed over every connection before reading stops; 0 for no limit. */
    readonly globalOutstandingLimit: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Starts timing requests (metrics); `observe` hears each answered one. */
  time(observe: LatencyObserver): void {
    this.observer = observe;
  }

  get timing(): boolean {
    return this.observer !== undefined;
  }

  /** Resets the latency and packet counts (`srst`). */
  resetStats(): void {
    this.packetsReceived = 0;
    this.packetsSent = 0;
    this.latency = { count: 0, sumMs: 0, minMs: Infinity, maxMs: 0 };
  }

  // ---- maxClientCnxns ----

  /** Connections now open from `address`. */
  connectionsFrom(address: string): number {
    return this.perAddress.get(address) ?? 0;
  }

  /** Takes a connection slot for `address`, or returns the refusal message when it has too many. */
  admit(address: string): string | undefined {
    this.packetsReceived++;
    const n = this.perAddress.get(address) ?? 0;
    if (this.maxClientCnxns > 0 && n >= this.maxClientCnxns) {
      this.rejected++;
      return `Too many connections from /${address} - max is ${this.maxClientCnxns}`;
    }
    this.perAddress.set(address, n + 1);
    return undefined;
  }

  /** Gives back the slot `admit` took. */
  release(address: string): void {
    const n = this.perAddress.get(address) ?? 0;
    if (n <= 1) this.perAddress.delete(address);
    else this.perAddress.set(address, n - 1);
  }

  // ---- globalOutstandingLimit ----

  /** A request arrived on `conn`. */
  received(conn: LimitedConnection, op: number): void {
    this.packetsReceived++;
    conn.outstanding++;
    this.outstanding++;
    if (this.observer !== undefined) (conn.owed ??= []).push(this.clock(), op);
    if (!conn.throttled && this.shouldThrottle(conn)) {
      conn.throttled = true;
      conn.throttleSink.pauseReading?.();
    }
  }

  /** `replies` answers and `events` notifications left `conn`. */
  delivered(conn: LimitedConnection, replies: number, events: number): void {
    this.packetsSent += replies + events;
    if (replies === 0) return;
    const n = Math.min(replies, conn.outstanding);
    conn.outstanding -= n;
    this.outstanding -= n;
    const owed = conn.owed;
    if (owed !== undefined && this.observer !== undefined) {
      const now = this.clock();
      for (let i = 0; i < n && owed.length > 0; i++) {
        const ms = now - owed.shift()!;
        this.note(ms, owed.shift()!);
      }
    }
    if (conn.throttled && !this.shouldThrottle(conn)) {
      conn.throttled = false;
      conn.throttleSink.resumeReading?.();
    }
    if (this.outstanding === 0) this.wakeIdle();
  }

  /** `conn` closed: what it was owed is no longer outstanding. */
  forget(conn: LimitedConnection): void {
    this.outstanding -= conn.outstanding;
    conn.outstanding = 0;
    conn.owed = undefined;
    conn.throttled = false;
    if (this.outstanding === 0) this.wakeIdle();
  }

  /** Resolves once no request is owed (at once when none is). */
  idle(): Promise<void> {
    if (this.outstanding === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private shouldThrottle(conn: LimitedConnection): boolean {
    return this.globalOutstandingLimit > 0 && this.outstanding > this.globalOutstandingLimit && conn.outstanding > 0;
  }

  private note(ms: number, op: number): void {
    const l = this.latency;
    l.count++;
    l.sumMs += ms;
    if (ms < l.minMs) l.minMs = ms;
    if (ms > l.maxMs) l.maxMs = ms;
    this.observer?.(ms, op);
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
