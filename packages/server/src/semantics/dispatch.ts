/**
 * The dispatch: one request on one connection, whichever front door carried it. Requests are
 * served in the order they arrive, each one synchronously; replies and the notifications they
 * cause leave through the connection's outbox (server-connection.ts).
 *
 * Auth and SASL are answered at once and do not touch the session; a ping touches it and answers
 * the last zxid; closeSession and expiry end the session (its ephemerals go at one zxid); every
 * other op goes to the request processor, and a write it applied is logged (with a data dir).
 */
import { ErrorCode, OpCode, type Request } from '@tenure/protocol';
import type { FaultGate } from '../ops/fault-gate.js';
import type { ResolvedOptions } from '../options.js';
import { authenticate } from '../security/acl-policy.js';
import type { SaslAuthenticator } from '../security/sasl-auth.js';
import { captureRequest } from '../storage/txn-capture.js';
import type { TxnBody } from '../storage/txn-records.js';
import type { DataTree } from './data-tree.js';
import type { RequestProcessor, ZxidCounter } from './request-processor.js';
import type { ServerConnection } from './server-connection.js';
import type { Session, SessionTable } from './session-table.js';
import type { SessionWheel } from './session-wheel.js';

type ServerSession = Session<ServerConnection>;

/** Where applied transactions go: the data dir's log, or nowhere for a server in memory. */
export interface TxnLog {
  append(header: { clientId: bigint; cxid: number; zxid: bigint; time: number; type: number }, body: TxnBody): void;
}

export interface DispatchParts {
  readonly tree: DataTree;
  readonly processor: RequestProcessor;
  readonly zxid: ZxidCounter;
  readonly sessions: SessionTable<ServerConnection>;
  readonly wheel: SessionWheel<ServerSession>;
  readonly sasl: SaslAuthenticator;
  readonly faults: FaultGate;
  readonly options: Readonly<ResolvedOptions>;
  readonly log: TxnLog | undefined;
  /** Wall time (ms since the epoch) on the server's clock: txn times. */
  wallNow(): number;
}

export class Dispatch {
  constructor(private readonly p: DispatchParts) {}

  serve(conn: ServerConnection, request: unknown, token: unknown, oversize: boolean): void {
    const p = this.p;
    const session = conn.session;
    if (session.closing) return;
    if (oversize) {
      conn.abort(`request larger than maxBufferBytes (${p.options.maxBufferBytes})`);
      return;
    }
    const type = (request as { type?: unknown } | null)?.type;
    if (type === OpCode.auth) {
      this.auth(conn, request as Request & { type: 100 }, token);
      return;
    }
    if (type === OpCode.sasl) {
      const out = p.sasl.handle(conn, request as { token?: unknown });
      if (out.ids) conn.addAuthIds(out.ids);
      conn.pushReply(token, out.reply);
      if (out.close !== undefined) conn.closeAfterFlush(out.close);
      return;
    }
    p.wheel.touch(session, session.timeoutMs);
    if (type === OpCode.ping) {
      conn.pushReply(token, { zxid: p.zxid.last, err: 0, response: undefined });
      return;
    }
    const lose = p.faults.armed && p.faults.losesReply(session);
    if (type === OpCode.closeSession) {
      const zxid = this.endSession(session);
      if (lose) conn.abort('reply lost (fault injection)');
      else {
        conn.pushReply(token, { zxid, err: 0, response: undefined });
        conn.closeAfterFlush('session closed');
      }
      return;
    }
    let outcome;
    const before = p.zxid.last;
    try {
      outcome = p.processor.process(conn, request as Request);
    } catch (err) {
      p.options.logger?.warn({ err, request }, 'request failed');
      outcome = { reply: { zxid: p.zxid.last, err: ErrorCode.MARSHALLINGERROR, response: undefined } };
    }
    if (p.log !== undefined && p.zxid.last !== before) {
      const now = p.wallNow();
      let c;
      try {
        c = captureRequest(p.tree, request as Request, outcome.reply, conn.authIds, now);
      } catch (err) {
        p.options.logger?.warn({ err, request }, 'could not derive the txn; logging an error txn');
        c = { type: OpCode.error, body: { type: OpCode.error, err: outcome.reply.err } as TxnBody, time: now };
      }
      this.log(session.id, p.zxid.last, c.type, c.time, c.body);
    }
    if (lose) {
      conn.abort('reply lost (fault injection)');
      return;
    }
    conn.pushReply(token, outcome.reply);
    if (outcome.close !== undefined) conn.closeAfterFlush(outcome.close);
  }

  /** Auth is answered at once with zxid 0 and does not touch the session, as in ZooKeeper. */
  private auth(conn: ServerConnection, req: { scheme?: unknown; auth?: unknown }, token: unknown): void {
    const scheme = typeof req.scheme === 'string' ? req.scheme : '';
    const auth = req.auth instanceof Uint8Array ? Buffer.from(req.auth) : null;
    const ids = authenticate(scheme, auth, conn.clientAddr, this.p.options.superDigest, conn.authIds);
    if (ids === undefined) {
      conn.pushReply(token, { zxid: 0n, err: ErrorCode.AUTHFAILED, response: undefined });
      conn.closeAfterFlush(`authentication failed for scheme ${JSON.stringify(scheme)}`);
      return;
    }
    conn.addAuthIds(ids);
    conn.pushReply(token, { zxid: 0n, err: 0, response: undefined });
  }

  /** Sessions the wheel found due: each expires unless a fault defers it. */
  due(sessions: ServerSession[]): void {
    const faults = this.p.faults;
    for (const s of sessions) {
      if (!(faults.armed && faults.defersExpiry(s))) this.expire(s);
    }
  }

  expire(s: ServerSession): void {
    if (s.closing) return;
    this.endSession(s);
    s.connection?.abort('session expired');
  }

  /** closeSession and expiry: delete the ephemerals at one zxid and forget the session. */
  endSession(s: ServerSession): bigint {
    const p = this.p;
    s.closing = true;
    p.wheel.remove(s);
    p.sessions.delete(s.id);
    if (p.faults.armed) p.faults.forgetSession(s);
    const paths = p.log === undefined ? [] : [...(p.tree.ephemerals.get(s.id) ?? [])];
    const zxid = p.processor.killSession(s.id);
    if (p.log !== undefined) this.log(s.id, zxid, OpCode.closeSession, p.wallNow(), { type: OpCode.closeSession, paths2Delete: paths });
    return zxid;
  }

  /** One reaper pass: empty containers and expired TTL nodes go, each at its own zxid. */
  reap(): void {
    const p = this.p;
    if (p.tree.containers.size === 0 && p.tree.ttls.size === 0) return;
    for (const path of p.processor.reapCandidates(p.wallNow())) {
      const before = p.zxid.last;
      p.processor.reap(path);
      if (p.zxid.last !== before) this.log(0n, p.zxid.last, OpCode.deleteContainer, p.wallNow(), { type: OpCode.deleteContainer, path });
    }
  }

  /** Appends a txn to the data dir's log (nothing in memory). */
  log(clientId: bigint, zxid: bigint, type: number, time: number, body: TxnBody): void {
    this.p.log?.append({ clientId, cxid: 0, zxid, time, type }, body);
  }
}
