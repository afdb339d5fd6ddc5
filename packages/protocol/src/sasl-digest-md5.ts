/**
 * SASL DIGEST-MD5 (RFC 2831), both ends, as ZooKeeper uses it: authentication only (qop=auth), no
 * integrity or confidentiality layer, algorithm md5-sess, charset utf-8. The client and the server
 * share the arithmetic below, so there is one place where A1, A2, `response` and `rspauth` are made.
 *
 * No I/O and no `node:` imports (a browser bundle carries this module): hashing is @noble/hashes'
 * md5, randomness is `globalThis.crypto.getRandomValues`, tokens are plain Uint8Arrays.
 *
 * ZooKeeper's names: the service is `zookeeper`, the server name (and realm) `zk-sasl-md5`, so the
 * digest-uri is `zookeeper/zk-sasl-md5`. The Java client sends its user name as authzid too.
 */
import { md5 } from '@noble/hashes/legacy.js';
import { InvalidArgumentError, TenureError } from './tenure-error.js';

/** A SASL exchange went wrong: a malformed token, a digest that does not match, an unknown user. */
export class SaslError extends TenureError {
  override name = 'SaslError';
  constructor(message = 'the SASL exchange failed', options?: { cause?: unknown }) {
    super('SASL', message, options);
  }
}

/** ZooKeeper's DIGEST-MD5 service (protocol) name. */
export const ZOOKEEPER_SASL_PROTOCOL = 'zookeeper';
/** ZooKeeper's DIGEST-MD5 server name, which its server also offers as the realm. */
export const ZOOKEEPER_SASL_SERVER_NAME = 'zk-sasl-md5';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

// ---- directives (RFC 2831 §7.1: `#rule` lists of key=value, values a token or a quoted-string) ----

const SEPARATORS = '()<>@,;:\\"/[]?={} \t';
const isTokenChar = (c: string): boolean => c > ' ' && c < '\x7f' && !SEPARATORS.includes(c);
const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';

/**
 * Parses a challenge or response into its directives, names lower-cased. Repeated names keep every
 * value (only `realm` may repeat in a challenge; the callers check). Throws SaslError on bad syntax.
 */
export function parseDirectives(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let i = 0;
  const n = text.length;
  const skipSpace = (): void => {
    while (i < n && isSpace(text[i])) i++;
  };
  for (;;) {
    skipSpace();
    while (i < n && text[i] === ',') {
      i++; // empty list elements are allowed
      skipSpace();
    }
    if (i >= n) return out;
    const start = i;
    while (i < n && isTokenChar(text[i]!)) i++;
    if (i === start) throw new SaslError(`DIGEST-MD5: bad directive name at offset ${start}`);
    const name = text.slice(start, i).toLowerCase();
    skipSpace();
    if (text[i] !== '=') throw new SaslError(`DIGEST-MD5: directive ${name} has no value`);
    i++;
    skipSpace();
    let value = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= n) throw new SaslError(`DIGEST-MD5: unterminated quoted value of ${name}`);
        const c = text[i++]!;
        if (c === '"') break;
        if (c === '\\') {
          if (i >= n) throw new SaslError(`DIGEST-MD5: unterminated quoted value of ${name}`);
          value += text[i++];
        } else value += c;
      }
    } else {
      const vs = i;
      while (i < n && isTokenChar(text[i]!)) i++;
      value = text.slice(vs, i);
    }
    const list = out.get(name);
    if (list) list.push(value);
    else out.set(name, [value]);
    skipSpace();
    if (i < n && text[i] !== ',') throw new SaslError(`DIGEST-MD5: expected ',' after ${name}`);
  }
}

/** Writes directives in order; values listed in `quoted` are quoted (with `"` and `\` escaped). */
export function formatDirectives(entries: ReadonlyArray<readonly [string, string]>, quoted: ReadonlySet<string>): string {
  return entries.map(([k, v]) => (quoted.has(k) ? `${k}="${v.replace(/(["\\])/g, '\\$1')}"` : `${k}=${v}`)).join(',');
}

function single(d: Map<string, string[]>, name: string, what: string): string | undefined {
  const v = d.get(name);
  if (v === undefined) return undefined;
  if (v.length > 1) throw new SaslError(`DIGEST-MD5: ${what} has more than one ${name}`);
  return v[0];
}

function required(d: Map<string, string[]>, name: string, what: string): string {
  const v = single(d, name, what);
  if (v === undefined) throw new SaslError(`DIGEST-MD5: ${what} has no ${name}`);
  return v;
}

function decodeToken(token: Uint8Array, what: string): string {
  try {
    return decoder.decode(token);
  } catch {
    throw new SaslError(`DIGEST-MD5: ${what} is not UTF-8`);
  }
}

// ---- the arithmetic (RFC 2831 §2.1.2.1) ----

const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/**
 * A user name, realm or password as bytes for hashing. With charset=utf-8 a value whose characters
 * all fit ISO 8859-1 is hashed as 8859-1 (RFC 2831 §2.1.2.1), as Java's DIGEST-MD5 does; otherwise UTF-8.
 */
function credentialBytes(s: string, utf8: boolean): Uint8Array {
  let latin1 = true;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) latin1 = false;
  if (latin1) return Uint8Array.from(s, (c) => c.charCodeAt(0));
  if (!utf8) throw new SaslError('DIGEST-MD5: a credential outside ISO 8859-1 needs charset=utf-8');
  return encoder.encode(s);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const COLON = Uint8Array.of(0x3a);

/** What both ends put into A1 and the digests. */
export interface DigestMd5Inputs {
  username: string;
  realm: string;
  password: string;
  nonce: string;
  cnonce: string;
  /** 8 hex digits; ZooKeeper authenticates once per connection, so always `00000001`. */
  nc: string;
  digestUri: string;
  /** Included in A1 when given and non-empty. */
  authzid?: string | undefined;
  /** charset=utf-8 was negotiated. Default true. */
  utf8?: boolean;
  /** Only `auth` (no security layer) is supported. */
  qop?: 'auth';
}

/** HEX(H(A1)) of md5-sess: H( H(user:realm:password) : nonce : cnonce [: authzid] ). */
function hexHA1(p: DigestMd5Inputs): string {
  const utf8 = p.utf8 ?? true;
  const inner = md5(
    concat([credentialBytes(p.username, utf8), COLON, credentialBytes(p.realm, utf8), COLON, credentialBytes(p.password, utf8)]),
  );
  const tail = `:${p.nonce}:${p.cnonce}${p.authzid ? `:${p.authzid}` : ''}`;
  return hex(md5(concat([inner, encoder.encode(tail)])));
}

function kd(hexA1: string, p: DigestMd5Inputs, a2: string): string {
  const hexA2 = hex(md5(encoder.encode(a2)));
  return hex(md5(encoder.encode(`${hexA1}:${p.nonce}:${p.nc}:${p.cnonce}:${p.qop ?? 'auth'}:${hexA2}`)));
}

/** The client's `response` directive: 32 lower-case hex digits. */
export function digestMd5Response(p: DigestMd5Inputs): string {
  return kd(hexHA1(p), p, `AUTHENTICATE:${p.digestUri}`);
}

/** The server's `rspauth` directive, which proves to the client that the server knows the password too. */
export function digestMd5ResponseAuth(p: DigestMd5Inputs): string {
  return kd(hexHA1(p), p, `:${p.digestUri}`);
}

/** A fresh nonce: 32 random bytes, base64 (what Java's DIGEST-MD5 uses; no quotes or commas). */
export function newSaslNonce(): string {
  const b = new Uint8Array(32);
  globalThis.crypto.getRandomValues(b);
  let s = '';
  for (const x of b) s += String.fromCharCode(x);
  return btoa(s);
}

/** Constant-time comparison of two strings of hex digits. */
function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

const HEX32 = /^[0-9a-f]{32}$/;

// ---- the client ----

export interface DigestMd5ClientOptions {
  username: string;
  password: string;
  /** Sent as authzid; default the user name (what ZooKeeper's Java client does). '' sends none. */
  authzid?: string;
  /** Default `zookeeper`. */
  protocol?: string;
  /** Default `zk-sasl-md5`. */
  serverName?: string;
  /** The client nonce; random by default (tests fix it). */
  cnonce?: string;
}

const CLIENT_QUOTED = new Set(['username', 'realm', 'nonce', 'cnonce', 'digest-uri', 'authzid']);

/**
 * The client's side of one exchange. DIGEST-MD5 has no initial response: the client sends an
 * empty token, answers the server's challenge with a digest-response, then checks `rspauth`.
 */
export class DigestMd5Client {
  private step: 'challenge' | 'rspauth' | 'done' = 'challenge';
  private expectedRspauth = '';
  private readonly opts: DigestMd5ClientOptions;

  constructor(options: DigestMd5ClientOptions) {
    if (typeof options?.username !== 'string' || options.username === '')
      throw new InvalidArgumentError('DIGEST-MD5: username is required');
    if (typeof options.password !== 'string') throw new InvalidArgumentError('DIGEST-MD5: password must be a string');
    this.opts = { ...options };
  }

  /** The exchange finished and the server proved it knows the password. */
  get complete(): boolean {
    return this.step === 'done';
  }

  /** The first token: empty. */
  initialResponse(): Uint8Array {
    return new Uint8Array(0);
  }

  /**
   * Answers a token from the server: the digest-response to the challenge, then (given `rspauth`)
   * null, as there is nothing more to send. Throws SaslError for a bad challenge or a wrong rspauth.
   */
  evaluateChallenge(token: Uint8Array): Uint8Array | null {
    if (this.step === 'challenge') return this.answerChallenge(decodeToken(token, 'challenge'));
    if (this.step === 'rspauth') {
      const d = parseDirectives(decodeToken(token, 'final challenge'));
      const got = required(d, 'rspauth', 'the final challenge').toLowerCase();
      if (!sameDigest(got, this.expectedRspauth))
        throw new SaslError("DIGEST-MD5: the server's rspauth does not match: it does not know the password");
      this.step = 'done';
      return null;
    }
    throw new SaslError('DIGEST-MD5: the exchange is already complete');
  }

  private answerChallenge(text: string): Uint8Array {
    const d = parseDirectives(text);
    const nonce = required(d, 'nonce', 'the challenge');
    const algorithm = required(d, 'algorithm', 'the challenge');
    if (algorithm.toLowerCase() !== 'md5-sess') throw new SaslError(`DIGEST-MD5: unsupported algorithm ${algorithm}`);
    const qops = (single(d, 'qop', 'the challenge') ?? 'auth').split(',').map((q) => q.trim().toLowerCase());
    if (!qops.includes('auth')) throw new SaslError(`DIGEST-MD5: the server offers no qop=auth (${qops.join(',')})`);
    const charset = single(d, 'charset', 'the challenge');
    const utf8 = charset?.toLowerCase() === 'utf-8';
    if (charset !== undefined && !utf8) throw new SaslError(`DIGEST-MD5: unsupported charset ${charset}`);
    // Of several realms offered, the first; none offered: the empty realm (RFC 2831 §2.1.2).
    const realm = d.get('realm')?.[0] ?? '';
    const o = this.opts;
    const digestUri = `${o.protocol ?? ZOOKEEPER_SASL_PROTOCOL}/${o.serverName ?? ZOOKEEPER_SASL_SERVER_NAME}`;
    const authzid = o.authzid ?? o.username;
    const inputs: DigestMd5Inputs = {
      username: o.username,
      realm,
      password: o.password,
      nonce,
      cnonce: o.cnonce ?? newSaslNonce(),
      nc: '00000001',
      digestUri,
      authzid,
      utf8,
      qop: 'auth',
    };
    this.expectedRspauth = digestMd5ResponseAuth(inputs);
    this.step = 'rspauth';
    const entries: [string, string][] = [];
    if (utf8) entries.push(['charset', 'utf-8']);
    entries.push(['username', o.username]);
    if (d.has('realm')) entries.push(['realm', realm]);
    entries.push(
      ['nonce', nonce],
      ['nc', inputs.nc],
      ['cnonce', inputs.cnonce],
      ['digest-uri', digestUri],
      ['maxbuf', '65536'],
      ['response', digestMd5Response(inputs)],
      ['qop', 'auth'],
    );
    if (authzid) entries.push(['authzid', authzid]);
    return encoder.encode(formatDirectives(entries, CLIENT_QUOTED));
  }
}

// ---- the server ----

export interface DigestMd5ServerOptions {
  /** The password of a user, or undefined for one that does not exist. */
  passwordOf(username: string): string | undefined;
  /** The realm offered. Default `zk-sasl-md5`. */
  realm?: string;
  /** Default `zookeeper`. */
  protocol?: string;
  /** Default `zk-sasl-md5`. */
  serverName?: string;
  /** The server nonce; random by default (tests fix it). */
  nonce?: string;
}

/** What a successful exchange proved. */
export interface DigestMd5Success {
  /** The token to send back: `rspauth=…`. */
  token: Uint8Array;
  /** The user name the client proved (the authentication id; ZooKeeper's `sasl:` identity). */
  authenticationId: string;
  /** The authzid the client asked for, if any. ZooKeeper does not use it. */
  authzid: string | undefined;
}

/**
 * The server's side of one exchange: `challenge()` answers the client's empty first token;
 * `verify(response)` checks the digest-response and returns `rspauth`, or throws SaslError.
 * Every refusal has the same message, so a client cannot tell an unknown user from a wrong password.
 */
export class DigestMd5Server {
  private nonce: string | undefined;
  private finished = false;
  private readonly realm: string;
  private readonly digestUri: string;

  constructor(private readonly opts: DigestMd5ServerOptions) {
    this.realm = opts.realm ?? ZOOKEEPER_SASL_SERVER_NAME;
    this.digestUri = `${opts.protocol ?? ZOOKEEPER_SASL_PROTOCOL}/${opts.serverName ?? ZOOKEEPER_SASL_SERVER_NAME}`;
  }

  /** Whether `verify` has been called (successfully or not): an exchange is not reused. */
  get done(): boolean {
    return this.finished;
  }

  /** Whether the challenge has been sent and a response is due. */
  get awaitingResponse(): boolean {
    return this.nonce !== undefined && !this.finished;
  }

  /** The digest-challenge: realm, nonce, qop, charset and algorithm. */
  challenge(): Uint8Array {
    if (this.nonce !== undefined) throw new SaslError('DIGEST-MD5: the challenge was already sent');
    this.nonce = this.opts.nonce ?? newSaslNonce();
    return encoder.encode(
      formatDirectives(
        [
          ['realm', this.realm],
          ['nonce', this.nonce],
          ['qop', 'auth'],
          ['charset', 'utf-8'],
          ['algorithm', 'md5-sess'],
        ],
        new Set(['realm', 'nonce', 'qop']),
      ),
    );
  }

  /** Checks a digest-response. Returns the rspauth token and the proven user, or throws SaslError. */
  verify(token: Uint8Array): DigestMd5Success {
    const nonce = this.nonce;
    if (nonce === undefined || this.finished) throw new SaslError('DIGEST-MD5: no challenge is outstanding');
    this.finished = true;
    const d = parseDirectives(decodeToken(token, 'response'));
    const what = 'the response';
    const username = required(d, 'username', what);
    const realm = single(d, 'realm', what) ?? '';
    const charset = single(d, 'charset', what);
    const utf8 = charset?.toLowerCase() === 'utf-8';
    const qop = (single(d, 'qop', what) ?? 'auth').toLowerCase();
    const response = required(d, 'response', what).toLowerCase();
    const inputs = {
      username,
      realm,
      nonce: required(d, 'nonce', what),
      cnonce: required(d, 'cnonce', what),
      nc: required(d, 'nc', what),
      digestUri: required(d, 'digest-uri', what),
      authzid: single(d, 'authzid', what),
      utf8,
    };
    const mismatch = (why: string): never => {
      throw new SaslError(`DIGEST-MD5: ${why}`);
    };
    if (charset !== undefined && !utf8) mismatch(`unsupported charset ${charset}`);
    if (qop !== 'auth') mismatch(`unsupported qop ${qop}`);
    if (inputs.nonce !== nonce) mismatch('the nonce does not match the challenge');
    if (inputs.nc !== '00000001') mismatch(`unexpected nonce count ${inputs.nc}`);
    if (realm !== this.realm && realm !== '') mismatch(`unknown realm ${JSON.stringify(realm)}`);
    if (inputs.digestUri !== this.digestUri) mismatch(`digest-uri ${JSON.stringify(inputs.digestUri)} is not ${this.digestUri}`);
    if (!HEX32.test(response)) mismatch('malformed response digest');
    const password = this.opts.passwordOf(username);
    // An unknown user is checked against a password nobody has, so both refusals take the same path.
    const full: DigestMd5Inputs = { ...inputs, password: password ?? '\u0000no such user', qop: 'auth' };
    if (!sameDigest(digestMd5Response(full), response) || password === undefined) {
      mismatch('digest response format violation. Mismatched response.');
    }
    return {
      token: encoder.encode(`rspauth=${digestMd5ResponseAuth(full)}`),
      authenticationId: username,
      authzid: inputs.authzid,
    };
  }
}
