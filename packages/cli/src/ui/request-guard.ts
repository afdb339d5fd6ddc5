/**
 * Who may talk to the page server, and which requests may write.
 *
 * - **Basic auth** (`--ui-auth user:password`): every request, the page included, needs it. It is
 *   required whenever the server listens beyond loopback.
 * - **Host header**: on loopback without auth, only `127.0.0.1`, `localhost` and `[::1]` are
 *   accepted, so a DNS-rebinding page on another site cannot reach the server under its own name.
 * - **Writes** (any method but GET/HEAD): refused with 403 unless started with `--write`; then they
 *   need a JSON body, a CSRF token minted into the page (an HMAC of a per-page nonce under a secret
 *   of this server run, so it cannot be guessed and is never valid for another run), and no
 *   cross-site `Origin` / `Sec-Fetch-Site`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The header a write carries its CSRF token in. */
export const CSRF_HEADER = 'x-tenure-csrf';

/** A refusal: the HTTP status and one line saying why. */
export interface Refusal {
  status: number;
  reason: string;
  /** Extra response headers (WWW-Authenticate for 401). */
  headers?: Record<string, string>;
}

export interface GuardOptions {
  /** `user:password`, or undefined for no auth. */
  uiAuth?: string;
  /** Whether writes are allowed at all (`--write`). */
  write: boolean;
  /** Whether the listener is on a loopback address. */
  loopback: boolean;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

function sameBytes(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function hostName(hostHeader: string): string {
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1);
  const colon = hostHeader.lastIndexOf(':');
  return colon < 0 ? hostHeader : hostHeader.slice(0, colon);
}

export class RequestGuard {
  private readonly secret = randomBytes(32);
  private readonly expectedAuth: string | undefined;

  constructor(private readonly options: GuardOptions) {
    this.expectedAuth = options.uiAuth === undefined ? undefined : `Basic ${Buffer.from(options.uiAuth).toString('base64')}`;
  }

  get writable(): boolean {
    return this.options.write;
  }

  /** A fresh CSRF token for one page load. */
  mintToken(): string {
    const nonce = randomBytes(16).toString('base64url');
    return `${nonce}.${this.sign(nonce)}`;
  }

  private sign(nonce: string): string {
    return createHmac('sha256', this.secret).update(nonce).digest('base64url');
  }

  private validToken(token: string | undefined): boolean {
    if (!token) return false;
    const dot = token.indexOf('.');
    if (dot <= 0) return false;
    return sameBytes(token.slice(dot + 1), this.sign(token.slice(0, dot)));
  }

  /** Checks that apply to every request: auth and the Host header. */
  admit(req: IncomingMessage): Refusal | null {
    if (this.expectedAuth !== undefined && !sameBytes(req.headers.authorization ?? '', this.expectedAuth)) {
      return { status: 401, reason: 'basic auth required', headers: { 'WWW-Authenticate': 'Basic realm="tenure ui", charset="UTF-8"' } };
    }
    if (this.options.loopback && this.expectedAuth === undefined) {
      const host = req.headers.host;
      if (host === undefined || !LOOPBACK_HOSTS.has(hostName(host))) {
        return { status: 403, reason: `host ${host ?? '(none)'} refused: this server answers on loopback names only` };
      }
    }
    return null;
  }

  /** Checks for a request that would change something (every method but GET and HEAD). */
  admitWrite(req: IncomingMessage): Refusal | null {
    if (!this.options.write) return { status: 403, reason: 'read-only: start `tenure ui` with --write to allow changes' };
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') {
      return { status: 403, reason: `cross-site request refused (Sec-Fetch-Site: ${site})` };
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${req.headers.host ?? ''}`) {
      return { status: 403, reason: `cross-origin request refused (Origin: ${origin})` };
    }
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
      return { status: 415, reason: 'writes take a JSON body (Content-Type: application/json)' };
    }
    const token = req.headers[CSRF_HEADER];
    if (!this.validToken(Array.isArray(token) ? token[0] : token)) {
      return { status: 403, reason: `missing or invalid CSRF token (${CSRF_HEADER})` };
    }
    return null;
  }
}
