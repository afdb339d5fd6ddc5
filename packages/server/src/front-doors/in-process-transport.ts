/**
 * The in-process transport: the transport contract of @tenure/protocol over direct calls into a
 * server's front door (front-door.ts), with no network and no serialization. Records are handed
 * over as they are; the server copies data buffers it keeps and returns copies, so neither side
 * can alter the other's.
 *
 * It holds no timers: the client's own timers notice silence and pauses, as they would on TCP.
 * Replies resolve in send order and notifications are reported in the order the server produced
 * them, interleaved with replies; a reply's promise continuation runs after any notification
 * delivered in the same batch, exactly as when a TCP transport reads several frames in one chunk.
 */
import type {
  CloseReason,
  ConnectParams,
  ConnectResult,
  Connection,
  ConnectionHandlers,
  Reply,
  Request,
  ResponseFor,
  Transport,
  WatcherEvent,
} from '@tenure/protocol';
import { ConnectionLossError, exceedsMaxBuffer } from '@tenure/protocol';
import type { FrontDoor } from './front-door.js';
import type { ConnectionSink, ServerConnection } from '../semantics/server-connection.js';

interface Pending {
  resolve(reply: Reply): void;
  onReply: ((reply: Reply) => void) | undefined;
  reject(err: Error): void;
}

export class InProcessTransport implements Transport {
  readonly hosts: readonly string[];

  constructor(private readonly server: FrontDoor) {
    this.hosts = Object.freeze([server.name]);
  }

  async connect(host: string, params: ConnectParams, handlers: ConnectionHandlers): Promise<ConnectResult> {
    if (host !== this.server.name) throw new ConnectionLossError(undefined, `no server named ${JSON.stringify(host)}`);
    const face = new InProcessConnection(this.server, handlers);
    const result = await this.server.accept(params, face);
    if (result.kind === 'expired') return { kind: 'expired' };
    face.bind(result.connection, result.timeoutMs);
    return { kind: 'connected', connection: face };
  }
}

class InProcessConnection implements Connection, ConnectionSink {
  sessionId = 0n;
  negotiatedTimeoutMs = 0;
  readonly readOnly = false;
  readonly server: string;
  private conn!: ServerConnection;
  /** Requests awaiting their reply, oldest first (the server answers in order). */
  private pending: Array<Pending | undefined> = [];
  private head = 0;
  private isClosed = false;

  constructor(
    private readonly host: FrontDoor,
    private readonly handlers: ConnectionHandlers,
  ) {
    this.server = host.name;
  }

  bind(conn: ServerConnection, timeoutMs: number): void {
    this.conn = conn;
    this.sessionId = conn.session.id;
    this.negotiatedTimeoutMs = timeoutMs;
  }

  /** A copy of the session's password (the server's own stays out of reach). */
  get passwd(): Buffer {
    return Buffer.from(this.conn.session.passwd);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  send<R extends Request>(request: R, onReply?: (reply: Reply<ResponseFor<R>>) => void): Promise<Reply<ResponseFor<R>>> {
    if (this.isClosed) return Promise.reject(new ConnectionLossError(undefined, 'the connection is closed'));
    let oversize = false;
    try {
      oversize = exceedsMaxBuffer(request, this.host.limits.maxBufferBytes);
    } catch {
      // A record the size check cannot read is left to the server, which refuses it.
    }
    return new Promise<Reply<ResponseFor<R>>>((resolve, reject) => {
      const p: Pending = { resolve: resolve as (r: Reply) => void, reject, onReply: onReply as ((r: Reply) => void) | undefined };
      this.pending.push(p);
      this.host.receive(this.conn, request, p, oversize);
    });
  }

  close(): void {
    if (this.isClosed) return;
    this.conn.closeByClient();
    this.finish({ kind: 'client', message: 'closed by the client' });
  }

  // ---- ConnectionSink ----

  deliverReply(token: unknown, reply: Reply): void {
    const p = token as Pending;
    const q = this.pending;
    let i = this.head;
    if (q[i] !== p) {
      i = q.indexOf(p, i);
      if (i < 0) return;
      q[i] = undefined;
    } else {
      q[i] = undefined;
      while (this.head < q.length && q[this.head] === undefined) this.head++;
      if (this.head === q.length) {
        q.length = 0;
        this.head = 0;
      } else if (this.head > 1024 && this.head * 2 > q.length) {
        this.pending = q.slice(this.head);
        this.head = 0;
      }
    }
    // A refusal the wire can only say as an error code (a write too large for a replicated store)
    // reaches an in-process caller as the typed error, which names the limit.
    const refusal = (reply as { refusal?: unknown }).refusal;
    if (refusal instanceof Error) {
      p.reject(refusal);
      return;
    }
    if (p.onReply) {
      try {
        p.onReply(reply);
      } catch (err) {
        // The caller's hook failed: its promise carries the error; the server is not disturbed.
        p.reject(err as Error);
        return;
      }
    }
    p.resolve(reply);
  }

  deliverEvent(event: WatcherEvent, zxid: bigint): void {
    if (!this.isClosed) this.handlers.onEvent(event, zxid);
  }

  deliverClose(reason: CloseReason): void {
    this.finish(reason);
  }

  /** Rejects what is pending, then reports the close (once). */
  private finish(reason: CloseReason): void {
    if (this.isClosed) return;
    this.isClosed = true;
    const pending = this.pending.slice(this.head);
    this.pending = [];
    this.head = 0;
    let err: Error | undefined;
    for (const p of pending) if (p !== undefined) p.reject((err ??= new ConnectionLossError(undefined, reason.message)));
    queueMicrotask(() => {
      try {
        this.handlers.onClose(reason);
      } catch (err) {
        this.host.logger?.warn({ err }, 'a connection callback threw');
      }
    });
  }
}
