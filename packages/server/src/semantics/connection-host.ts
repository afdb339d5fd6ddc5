/**
 * What every server connection asks of the server (ConnectionHost): the registry of open
 * connections and the maxClientCnxns slot each holds, the one microtask that flushes every
 * connection due, and the rule that output revealing a zxid not yet on disk waits for it.
 * The embedded server holds one, privately; nothing outside the server calls it.
 */
import type { ConnectionLimits } from '../front-doors/connection-limits.js';
import type { FaultGate } from '../ops/fault-gate.js';
import type { Logger } from '../options.js';
import type { ZxidCounter } from './request-processor.js';
import type { ConnectionHost, ServerConnection } from './server-connection.js';
import type { WatchRegistry } from './watch-registry.js';

/** Output of a server in memory is never held for the log. */
export const ALWAYS_VISIBLE = (1n << 63n) - 1n;

export class ServerConnections implements ConnectionHost {
  readonly open = new Set<ServerConnection>();
  /** Everything up to this zxid is on disk; output that reveals a later one waits. */
  durableZxid = ALWAYS_VISIBLE;
  /** The client address each connection holds a maxClientCnxns slot for. */
  private readonly slots = new Map<ServerConnection, string>();
  private readonly waitingForLog = new Set<ServerConnection>();
  private failed = false;
  /** Connections with output to deliver at the next flush. */
  private due: ServerConnection[] = [];

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly watches: WatchRegistry,
    private readonly faults: FaultGate,
    private readonly zxid: ZxidCounter,
    private readonly logger: Logger | undefined,
  ) {}

  /** A handshake produced `conn`, which holds a maxClientCnxns slot for `address`. */
  add(conn: ServerConnection, address: string): void {
    this.open.add(conn);
    this.slots.set(conn, address);
  }

  /** More of the log is on disk: output that waited for it goes. */
  durable(zxid: bigint): void {
    this.durableZxid = zxid;
    for (const conn of this.waitingForLog) this.scheduleFlush(conn);
    this.waitingForLog.clear();
  }

  /** The log failed: nothing waits for it any more (what was not on disk is never shown). */
  storageFailed(): void {
    this.failed = true;
    this.waitingForLog.clear();
  }

  abortAll(message: string): void {
    for (const conn of [...this.open]) conn.abort(message);
  }

  // ---- ConnectionHost ----

  detach(conn: ServerConnection): void {
    this.open.delete(conn);
    this.limits.forget(conn);
    const address = this.slots.get(conn);
    if (address !== undefined) {
      this.slots.delete(conn);
      this.limits.release(address);
    }
    this.watches.removeAll(conn);
    if (conn.session.connection === conn) conn.session.connection = undefined;
    if (this.faults.armed) this.faults.forgetConnection(conn);
  }

  delivered(conn: ServerConnection, replies: number, events: number): void {
    this.limits.delivered(conn, replies, events);
  }

  sinkError(err: unknown): void {
    this.logger?.warn({ err }, 'a connection callback threw');
  }

  holdsOutput(conn: ServerConnection): boolean {
    return this.faults.armed && this.faults.parksOutput(conn);
  }

  outputZxid(): bigint {
    return this.zxid.last;
  }

  visibleZxid(): bigint {
    return this.durableZxid;
  }

  awaitDurable(conn: ServerConnection): void {
    if (!this.failed) this.waitingForLog.add(conn);
  }

  scheduleFlush(conn: ServerConnection): void {
    this.due.push(conn);
    if (this.due.length === 1) queueMicrotask(this.flushDue);
  }

  /** Flushes the connections due; any made due meanwhile get the next microtask. */
  private readonly flushDue = (): void => {
    const due = this.due;
    this.due = [];
    for (const c of due) c.flush();
  };
}
