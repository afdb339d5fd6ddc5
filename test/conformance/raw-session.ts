/**
 * A raw session for the conformance suite: one Connection from the transport contract, with its
 * notifications and close recorded. No client, no timers: a RawSession sends nothing unless told
 * to, so a session left alone goes silent (which is how the suite lets sessions expire).
 */
import type {
  ACL,
  CloseReason,
  ConnectParams,
  Connection,
  MultiOp,
  MultiResult,
  Reply,
  Request,
  ResponseFor,
  Stat,
  Transport,
  WatcherEvent,
} from '@tenure/protocol';
import { ErrorCode, OPEN_ACL_UNSAFE, OpCode, errorCodeName } from '@tenure/protocol';

export interface Recorded {
  event: WatcherEvent;
  /** performance.now() when it arrived. */
  at: number;
}

export class RawSession {
  readonly events: Recorded[] = [];
  readonly closes: CloseReason[] = [];
  readonly closed: Promise<CloseReason>;
  private waiters: Array<() => void> = [];
  private onClosed!: (r: CloseReason) => void;
  conn!: Connection;

  constructor() {
    this.closed = new Promise((r) => (this.onClosed = r));
  }

  /** Opens a connection; resolves 'expired' for ZooKeeper's zero-timeout answer. */
  static async open(transport: Transport, host: string, params: Partial<ConnectParams> = {}): Promise<RawSession | 'expired'> {
    const s = new RawSession();
    const r = await transport.connect(
      host,
      { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 30_000, readOnly: false, ...params },
      {
        onEvent: (event) => {
          s.events.push({ event, at: performance.now() });
          s.wake();
        },
        onClose: (reason) => {
          s.closes.push(reason);
          s.onClosed(reason);
          s.wake();
        },
      },
    );
    if (r.kind === 'expired') return 'expired';
    s.conn = r.connection;
    return s;
  }

  get id(): bigint {
    return this.conn.sessionId;
  }

  /** The events received so far, without arrival times. */
  get eventList(): WatcherEvent[] {
    return this.events.map((r) => r.event);
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits until `predicate` holds over the recorded events (or the connection state). */
  until(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; events: ${JSON.stringify(this.eventList)}`));
      }, timeoutMs);
      const check = (): void => {
        if (predicate()) {
          clearTimeout(timer);
          resolve();
        } else this.waiters.push(check);
      };
      check();
    });
  }

  /** Waits until at least `n` events have arrived. */
  async eventCount(n: number, timeoutMs?: number): Promise<WatcherEvent[]> {
    await this.until(() => this.events.length >= n, `${n} events`, timeoutMs);
    return this.eventList;
  }

  send<R extends Request>(req: R): Promise<Reply<ResponseFor<R>>> {
    return this.conn.send(req);
  }

  /** Sends and expects err 0; returns the response. */
  async ok<R extends Request>(req: R): Promise<NonNullable<ResponseFor<R>>> {
    const r = await this.conn.send(req);
    if (r.err !== 0) throw new Error(`${opName(req.type)} ${describeReq(req)} failed with ${errorCodeName(r.err)}`);
    return r.response as NonNullable<ResponseFor<R>>;
  }

  /** Sends and returns the error code (0 for success). */
  async code(req: Request): Promise<number> {
    return (await this.conn.send(req)).err;
  }

  // ---- request builders that send ----

  create(path: string, data: Buffer | null = null, flags = 0, acl: ACL[] = [...OPEN_ACL_UNSAFE]) {
    return this.send({ type: OpCode.create, path, data, acl, flags });
  }
  create2(path: string, data: Buffer | null = null, flags = 0, acl: ACL[] = [...OPEN_ACL_UNSAFE]) {
    return this.send({ type: OpCode.create2, path, data, acl, flags });
  }
  async mkdir(path: string, data: Buffer | null = null, flags = 0): Promise<string> {
    return (await this.ok({ type: OpCode.create, path, data, acl: [...OPEN_ACL_UNSAFE], flags })).path;
  }
  getData(path: string, watch = false) {
    return this.send({ type: OpCode.getData, path, watch });
  }
  exists(path: string, watch = false) {
    return this.send({ type: OpCode.exists, path, watch });
  }
  async stat(path: string): Promise<Stat> {
    return (await this.ok({ type: OpCode.exists, path, watch: false })).stat;
  }
  setData(path: string, data: Buffer | null, version = -1) {
    return this.send({ type: OpCode.setData, path, data, version });
  }
  delete(path: string, version = -1) {
    return this.send({ type: OpCode.delete, path, version });
  }
  getChildren(path: string, watch = false) {
    return this.send({ type: OpCode.getChildren, path, watch });
  }
  async children(path: string): Promise<string[]> {
    return (await this.ok({ type: OpCode.getChildren, path, watch: false })).children.slice().sort();
  }
  multi(ops: MultiOp[]) {
    return this.send({ type: OpCode.multi, ops });
  }
  async multiResults(ops: MultiOp[]): Promise<MultiResult[]> {
    return (await this.ok({ type: OpCode.multi, ops })).results;
  }
  addAuth(user: string, password: string) {
    return this.send({ type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from(`${user}:${password}`) });
  }
  ping() {
    return this.send({ type: OpCode.ping });
  }

  /**
   * A barrier: any notification caused by a change the caller already saw acknowledged arrives on
   * this connection before the answer to a later request (ZooKeeper's ordering guarantee).
   */
  async barrier(): Promise<void> {
    await this.send({ type: OpCode.exists, path: '/', watch: false });
  }

  /** closeSession, tolerating a connection that is already gone. */
  async closeSession(): Promise<void> {
    if (this.conn === undefined || this.conn.closed) return;
    try {
      await this.conn.send({ type: OpCode.closeSession });
    } catch {
      // already closed
    }
    this.conn.close();
  }
}

const opNames = new Map<number, string>(Object.entries(OpCode).map(([k, v]) => [v, k]));
export const opName = (t: number): string => opNames.get(t) ?? `op${t}`;
const describeReq = (r: Request): string => ('path' in r ? String(r.path) : '');

export const E = ErrorCode;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
