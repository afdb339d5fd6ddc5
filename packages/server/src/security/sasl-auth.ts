/**
 * The server's side of ZooKeeper's SASL exchange (OpCode.sasl), DIGEST-MD5 against a user table,
 * as ZooKeeper's SaslServerCallbackHandler with a JAAS `Server { DigestLoginModule user_bob=... }`.
 *
 * Per connection: an empty first token gets the challenge; the digest-response is verified and
 * answered with `rspauth`, and the connection gains the identity `sasl:<user>` (the authentication
 * id; authzid is not used, as in ZooKeeper). A refusal is answered AUTHFAILED and the connection
 * closes. SASL is optional, as in ZooKeeper without `enforce.auth`: a connection that never runs it
 * keeps its other identities. Like auth packets, SASL packets do not touch the session.
 */
import { DigestMd5Server, ErrorCode, SaslError, type Id, type Reply, InvalidArgumentError } from '@tenure/protocol';

/** `createEmbeddedServer({ sasl })`. */
export interface SaslServerOptions {
  /** DIGEST-MD5 users and their passwords, e.g. `{ bob: 'secret' }`. */
  users: Readonly<Record<string, string>>;
  /** The realm offered. Default `zk-sasl-md5`, as ZooKeeper. */
  realm?: string;
}

/** What one SASL packet produced: the reply, the identities gained, and whether to close after it. */
export interface SaslOutcome {
  reply: Reply;
  ids?: Id[];
  close?: string;
}

// With a null token after the header, as ZooKeeper sends it: its Java client reads one regardless.
const refusal = (why: string): SaslOutcome => ({
  reply: { zxid: 0n, err: ErrorCode.AUTHFAILED, response: { token: null } },
  close: `SASL authentication failed: ${why}`,
});

export class SaslAuthenticator {
  /** The exchange in progress on each connection (gone with the connection). */
  private readonly exchanges = new WeakMap<object, DigestMd5Server>();
  private readonly users: ReadonlyMap<string, string> | undefined;

  constructor(private readonly options: SaslServerOptions | undefined) {
    if (options !== undefined) {
      if (options === null || typeof options.users !== 'object' || options.users === null)
        throw new InvalidArgumentError('sasl.users must be an object of user names to passwords');
      const users = new Map<string, string>();
      for (const [u, p] of Object.entries(options.users)) {
        if (typeof p !== 'string') throw new InvalidArgumentError(`sasl.users.${u} must be a string`);
        users.set(u, p);
      }
      this.users = users;
    }
  }

  /** Serves one SASL packet of connection `conn`. Never throws. */
  handle(conn: object, request: { token?: unknown }): SaslOutcome {
    const users = this.users;
    if (users === undefined) return refusal('this server has no SASL users');
    const token = request.token instanceof Uint8Array ? request.token : null;
    let ex = this.exchanges.get(conn);
    try {
      if (ex === undefined || ex.done) {
        // A new exchange starts with DIGEST-MD5's empty initial response.
        if (token !== null && token.length > 0) return refusal('DIGEST-MD5 starts with an empty token');
        ex = new DigestMd5Server({ passwordOf: (u) => users.get(u), realm: this.options?.realm });
        this.exchanges.set(conn, ex);
        return { reply: { zxid: 0n, err: 0, response: { token: Buffer.from(ex.challenge()) } } };
      }
      if (token === null) return refusal('no response token');
      const ok = ex.verify(token);
      return {
        reply: { zxid: 0n, err: 0, response: { token: Buffer.from(ok.token) } },
        ids: [{ scheme: 'sasl', id: ok.authenticationId }],
      };
    } catch (err) {
      this.exchanges.delete(conn);
      return refusal(err instanceof SaslError ? err.message : String(err));
    }
  }
}
