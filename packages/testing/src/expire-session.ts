/**
 * expireSession: ends a client's session on a real ZooKeeper the only way ZooKeeper allows from
 * outside: a second connection re-attaches with the session's id and password and sends
 * closeSession. The server closes the client's connection, deletes the session's ephemerals, fires
 * their watches, and answers any later re-attach with "expired". Nothing is simulated in the client.
 */
import { OpCode, type ConnectionHandlers, IllegalStateError, InvalidArgumentError, KeeperError, TenureError } from '@tenure/protocol';
import { zookeeper } from '@tenure/zookeeper';

/** What expireSession needs to know about a session; a Tenure client provides it. */
export interface SessionHandle {
  readonly sessionId: bigint;
  /** The session password (a client exposes it as `sessionPassword`; a Connection as `passwd`). */
  readonly sessionPassword?: Buffer;
  readonly passwd?: Buffer;
  /** The servers the session's client may connect to (a client exposes them as `hosts`). */
  readonly hosts?: readonly string[];
}

/** Where to reach the ensemble: a connect string or anything with one (TestingServer, TestingCluster). */
export type ServerTarget = string | { readonly connectString: string };

export interface ExpireSessionOptions {
  /** Gives up after this many ms. Default 10000. */
  timeoutMs?: number;
}

const IGNORE: ConnectionHandlers = { onEvent() {}, onClose() {} };

/**
 * Expires `session` on the servers of `target` (any server of the ensemble will do; each is tried
 * in turn until one answers), by default on the servers the client itself connects to. Resolves
 * once the server acknowledged closeSession, or at once if the session is already gone.
 */
export async function expireSession(session: SessionHandle, target?: ServerTarget, options: ExpireSessionOptions = {}): Promise<void> {
  const passwd = session.sessionPassword ?? session.passwd;
  if (session.sessionId === 0n || !passwd) throw new IllegalStateError('expireSession: the client has no session yet');
  const connectString = target === undefined ? ownServers(session) : typeof target === 'string' ? target : target.connectString;
  // The chroot does not matter for closeSession.
  const transport = zookeeper(connectString.replace(/\/.*$/, ''));
  const deadline = AbortSignal.timeout(options.timeoutMs ?? 10_000);
  let lastError: unknown;
  // ZooKeeper may close our second connection along with the session before its closeSession
  // answer is flushed: the next round's re-attach is then answered "expired", which settles it.
  for (let round = 0; round < 3 && !deadline.aborted; round++) {
    for (const host of transport.hosts) {
      try {
        const result = await transport.connect(
          host,
          { sessionId: session.sessionId, passwd, lastZxidSeen: 0n, timeoutMs: 30_000, readOnly: false, signal: deadline },
          IGNORE,
        );
        if (result.kind === 'expired') return;
        const conn = result.connection;
        try {
          const reply = await conn.send({ type: OpCode.closeSession });
          if (reply.err !== 0) throw KeeperError.from(reply.err, undefined, 'closeSession');
          return;
        } finally {
          conn.close();
        }
      } catch (error) {
        lastError = error;
        if (deadline.aborted) break;
      }
    }
  }
  throw new TenureError(
    'EXPIRE_FAILED',
    `expireSession: no server of ${connectString} closed session 0x${session.sessionId.toString(16)}`,
    { cause: lastError },
  );
}

/** The client's own servers as a connect string (a ZooKeeper transport's hosts are host:port). */
function ownServers(session: SessionHandle): string {
  const hosts = session.hosts ?? [];
  if (hosts.length === 0 || !hosts.every((h) => /:\d+$/.test(h))) {
    throw new InvalidArgumentError(
      `expireSession: give a target; the client's servers (${hosts.join(',') || 'none'}) are not ZooKeeper host:port addresses`,
    );
  }
  return hosts.join(',');
}
