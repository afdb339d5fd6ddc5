/**
 * TLS for the ZooKeeper transport: the options a connection is opened with (reloadable, so new
 * connections pick up renewed certificates), and the mapping of Node's TLS failures onto a typed
 * TlsError with a reason. What counts as a refusal: a certificate check that failed on our side,
 * a TLS alert from the server during the handshake (under TLS 1.3 a refused client certificate's
 * alert arrives after 'secureConnect'), or the embedded TLS listener's in-band refusal. Resets and
 * timeouts stay connection losses.
 */
import type { ConnectionOptions } from 'node:tls';
import { ErrorCode, TlsError, type TlsRefusal, InvalidArgumentError } from '@tenure/protocol';

/** Node's `tls.ConnectionOptions` (`ca`, `cert`, `key`, `servername`, `rejectUnauthorized`, `minVersion`, ...). */
export type TlsOptions = ConnectionOptions;

/**
 * TLS for every connection: `true` (Node's defaults and trusted CAs), options, or a function
 * called before each connection that returns them (a certificate reloaded from disk, say).
 */
export type TlsSetting = true | TlsOptions | (() => TlsOptions | Promise<TlsOptions>);

/** The current TLS setting of a transport; `update` applies to connections opened afterwards. */
export class TlsConfig {
  private setting: TlsSetting;

  constructor(setting: TlsSetting) {
    this.setting = checked(setting);
  }

  update(setting: TlsSetting): void {
    this.setting = checked(setting);
  }

  /** The options for the next connection, without host and port. */
  async resolve(): Promise<TlsOptions> {
    const s = this.setting;
    if (s === true) return {};
    if (typeof s === 'function') return checked(await s()) as TlsOptions;
    return s;
  }
}

function checked<T>(setting: T): T {
  if (setting === true || typeof setting === 'function' || (setting !== null && typeof setting === 'object')) return setting;
  throw new InvalidArgumentError(`tls must be true, tls.ConnectionOptions or a function returning them, got ${String(setting)}`);
}

const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
]);
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED']);
const REFUSED_BY_SERVER = new Set([
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN',
  'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED',
  'ERR_SSL_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE',
  'ERR_SSL_TLSV1_ALERT_ACCESS_DENIED',
]);

const DETAIL: Record<TlsRefusal, string> = {
  'untrusted-certificate': "the server's certificate is not signed by a trusted CA",
  expired: 'a certificate is expired or not yet valid',
  'hostname-mismatch': "the server's certificate does not name this host",
  'no-client-certificate': 'the server requires a client certificate and none was given',
  'certificate-refused': 'the server refused the client certificate (unknown CA, expired or revoked)',
  'handshake-failed': 'no TLS handshake (no common version or cipher, or the server does not speak TLS)',
};

/**
 * The TlsError for `error` on a TLS connection to `host` that has not completed ZooKeeper's
 * handshake, or undefined when it is not a TLS refusal (a reset, a refused TCP connection).
 */
export function tlsRefusal(error: Error, host: string, options: TlsOptions): TlsError | undefined {
  const code = alertCode(error) ?? (error as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  let reason: TlsRefusal | undefined;
  if (UNTRUSTED.has(code)) reason = 'untrusted-certificate';
  else if (EXPIRED.has(code)) reason = 'expired';
  else if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') reason = 'hostname-mismatch';
  else if (code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED') reason = 'no-client-certificate';
  // Java servers answer an empty client chain with bad_certificate (alert 42): with no
  // certificate of ours configured that is what it means.
  else if (code === 'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE')
    reason = hasClientCertificate(options) ? 'certificate-refused' : 'no-client-certificate';
  else if (REFUSED_BY_SERVER.has(code)) reason = 'certificate-refused';
  else if (code.startsWith('ERR_SSL_') || code === 'EPROTO') reason = 'handshake-failed';
  if (reason === undefined) return undefined;
  return new TlsError(host, reason, `${DETAIL[reason]} (${code}: ${error.message})`, { cause: error, nodeCode: code });
}

/**
 * The TlsError for a bare AUTHFAILED reply header in place of the ConnectResponse on a TLS
 * connection: the embedded server's TLS listener refusing a client certificate that did not verify
 * (Node's TLS server cannot send the alert; tls-listener.ts). Undefined for any other code.
 */
export function certificateRefusal(err: number, host: string, options: TlsOptions): TlsError | undefined {
  if (err !== ErrorCode.AUTHFAILED) return undefined;
  const reason: TlsRefusal = hasClientCertificate(options) ? 'certificate-refused' : 'no-client-certificate';
  return new TlsError(host, reason, `${DETAIL[reason]} (the server answered the handshake with AUTHFAILED)`, { nodeCode: 'AUTHFAILED' });
}

/** TLS alerts by number (RFC 8446 §6), named as Node names them when it sets a specific code. */
const ALERTS: Record<number, string> = {
  40: 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
  42: 'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
  43: 'ERR_SSL_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE',
  44: 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED',
  45: 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED',
  46: 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN',
  48: 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  49: 'ERR_SSL_TLSV1_ALERT_ACCESS_DENIED',
  70: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
  116: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
};

/**
 * An alert that arrives on a write is reported as a bare EPROTO whose message says
 * `SSL alert number N`: name it as Node does on a read.
 */
function alertCode(error: Error): string | undefined {
  const m = /SSL alert number (\d+)/.exec(error.message);
  return m === null ? undefined : (ALERTS[Number(m[1])] ?? `ERR_SSL_ALERT_${m[1]}`);
}

function hasClientCertificate(o: TlsOptions): boolean {
  return o.cert !== undefined || o.pfx !== undefined || o.secureContext !== undefined;
}
