/**
 * SASL on the client: the mechanism layer and ZooKeeper's exchange (OpCode.sasl packets).
 *
 * The session runs `runSaslExchange` on every new connection, after the handshake and before
 * anything else is sent (auth packets, SetWatches, waiting requests), as ZooKeeper's Java client
 * does; CONNECTED / RECONNECTED are reported only once it succeeded. The session knows only the
 * `SaslMechanism` interface: DIGEST-MD5 is one implementation, and GSSAPI (Kerberos) could be
 * another without touching the session (see the README's SASL section).
 */
import { AuthFailedError, DigestMd5Client, OpCode, SaslError, type Connection, InvalidArgumentError } from '@tenure/protocol';

/** One exchange on one connection. Tokens are opaque bytes to the session. */
export interface SaslExchange {
  /** The first token sent: empty for mechanisms without an initial response (DIGEST-MD5). */
  initialResponse(): Uint8Array | Promise<Uint8Array>;
  /**
   * Answers a token from the server. Returns the next token to send, or null when nothing more is
   * to be sent. Throws (any error) to refuse the server, e.g. a server that does not know the password.
   */
  evaluateChallenge(token: Uint8Array): Uint8Array | null | Promise<Uint8Array | null>;
  /** True once the mechanism considers the client authenticated. */
  readonly complete: boolean;
  /** Releases what the exchange holds (a GSS context, say). Called once, whatever the outcome. */
  dispose?(): void;
}

/** A SASL mechanism: makes one exchange per connection. */
export interface SaslMechanism {
  /** The mechanism's SASL name, e.g. 'DIGEST-MD5' or 'GSSAPI'. */
  readonly name: string;
  /** A fresh exchange for a connection to `server` (host:port; GSSAPI derives its service principal from it). */
  start(server: string): SaslExchange;
}

/** `sasl` option: DIGEST-MD5 with a user name and password (ZooKeeper's JAAS DigestLoginModule). */
export interface DigestMd5Options {
  mechanism: 'DIGEST-MD5';
  username: string;
  password: string;
  /** Sent as authzid; default the user name, as ZooKeeper's Java client does. */
  authzid?: string;
  /** The server name in the digest-uri (`zookeeper/<serverName>`). Default 'zk-sasl-md5', ZooKeeper's. */
  serverName?: string;
}

/** The client's `sasl` option: DIGEST-MD5 settings, or any mechanism (`{ mechanism: myGssapi }`). */
export type SaslOptions = DigestMd5Options | { mechanism: SaslMechanism };

/** DIGEST-MD5 as a SaslMechanism, over @tenure/protocol's DigestMd5Client. */
export function digestMd5Mechanism(options: Omit<DigestMd5Options, 'mechanism'>): SaslMechanism {
  const { username, password, authzid, serverName } = options;
  // Checked now, so a bad option fails createClient rather than the first connection.
  new DigestMd5Client({ username, password });
  return {
    name: 'DIGEST-MD5',
    start: () => new DigestMd5Client({ username, password, serverName, ...(authzid !== undefined ? { authzid } : {}) }),
  };
}

/** The mechanism an option names. Throws TypeError for a bad option. */
export function saslMechanism(options: SaslOptions): SaslMechanism {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('sasl must be an object');
  const m = options.mechanism;
  if (m === 'DIGEST-MD5') return digestMd5Mechanism(options as DigestMd5Options);
  if (m !== null && typeof m === 'object' && typeof m.start === 'function' && typeof m.name === 'string') return m;
  throw new InvalidArgumentError(
    `sasl.mechanism must be 'DIGEST-MD5' or a SaslMechanism, got ${typeof m === 'string' ? JSON.stringify(m) : m === null ? 'null' : typeof m}`,
  );
}

/** No mechanism ZooKeeper uses needs more rounds than this; a server that wants more is refused. */
const MAX_ROUNDS = 16;

/**
 * Runs one exchange on `conn`. Resolves when authenticated. Rejects with AuthFailedError when the
 * server refuses (err AUTHFAILED, or any error code, or a missing token) or the mechanism refuses
 * the server; with ConnectionLossError when the connection closes first.
 */
export async function runSaslExchange(conn: Connection, mechanism: SaslMechanism): Promise<void> {
  const where = `SASL ${mechanism.name} with ${conn.server}`;
  const ex = mechanism.start(conn.server);
  const refused = (detail: string, cause?: unknown): AuthFailedError => {
    const e = new AuthFailedError(undefined, `${where}: ${detail}`);
    if (cause !== undefined) (e as { cause?: unknown }).cause = cause;
    return e;
  };
  try {
    let out: Uint8Array;
    try {
      out = await ex.initialResponse();
    } catch (err) {
      throw refused('the mechanism could not start', err);
    }
    for (let round = 0; ; round++) {
      if (round >= MAX_ROUNDS) throw refused(`no result after ${MAX_ROUNDS} rounds`);
      const reply = await conn.send({ type: OpCode.sasl, token: Buffer.from(out.buffer, out.byteOffset, out.byteLength) });
      if (reply.err !== 0) throw refused(`the server refused (error ${reply.err})`);
      // The server's answer to our last token, once the mechanism is done, only confirms it.
      if (ex.complete) return;
      const token = reply.response?.token;
      if (token === null || token === undefined) throw refused('the server sent no token');
      let next: Uint8Array | null;
      try {
        next = await ex.evaluateChallenge(token);
      } catch (err) {
        throw refused(err instanceof SaslError ? err.message : `the mechanism refused the server: ${String(err)}`, err);
      }
      if (next === null) {
        if (ex.complete) return;
        throw refused('the mechanism stopped before completing');
      }
      out = next;
    }
  } finally {
    ex.dispose?.();
  }
}
