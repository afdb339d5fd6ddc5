/**
 * TLS options and refusals: which of Node's TLS failures are a TlsError (and with which reason),
 * which stay connection losses, and how reloadable options resolve.
 */
import { describe, expect, test } from 'vitest';
import { TlsError, InvalidArgumentError } from '@tenure/protocol';
import { TlsConfig, tlsRefusal } from '../src/tls-options.js';

const err = (code: string | undefined, message = 'boom'): Error => Object.assign(new Error(message), code === undefined ? {} : { code });
const withCert = { cert: 'PEM', key: 'PEM' };

describe('tlsRefusal', () => {
  test.each([
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'untrusted-certificate'],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'untrusted-certificate'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'untrusted-certificate'],
    ['CERT_HAS_EXPIRED', 'expired'],
    ['CERT_NOT_YET_VALID', 'expired'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'hostname-mismatch'],
    ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'no-client-certificate'],
    ['ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN', 'certificate-refused'],
    ['ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'certificate-refused'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'handshake-failed'],
    ['ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION', 'handshake-failed'],
  ])('%s is %s', (code, reason) => {
    const e = tlsRefusal(err(code), 'zk1:2281', withCert);
    expect(e).toBeInstanceOf(TlsError);
    expect(e).toMatchObject({ reason, nodeCode: code, host: 'zk1:2281' });
    expect(e!.message).toContain('zk1:2281');
    expect(e!.message).toContain(code);
  });

  test("a bad_certificate alert is a missing certificate when we sent none, a refused one when we did (Java's answers)", () => {
    expect(tlsRefusal(err('ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE'), 'h:1', {})?.reason).toBe('no-client-certificate');
    expect(tlsRefusal(err('ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE'), 'h:1', withCert)?.reason).toBe('certificate-refused');
  });

  test('an alert reported on a write as a bare EPROTO is read from its alert number', () => {
    const write = (n: number) =>
      err('EPROTO', `write EPROTO 80:error:0A000416:SSL routines:ssl3_read_bytes:sslv3 alert:...:SSL alert number ${n}\n`);
    expect(tlsRefusal(write(42), 'h:1', {})?.reason).toBe('no-client-certificate');
    expect(tlsRefusal(write(46), 'h:1', withCert)).toMatchObject({
      reason: 'certificate-refused',
      nodeCode: 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN',
    });
    expect(tlsRefusal(write(48), 'h:1', withCert)?.reason).toBe('certificate-refused');
    expect(tlsRefusal(write(116), 'h:1', {})?.reason).toBe('no-client-certificate');
    expect(tlsRefusal(write(40), 'h:1', {})?.reason).toBe('handshake-failed');
    expect(tlsRefusal(write(99), 'h:1', {})).toMatchObject({ reason: 'handshake-failed', nodeCode: 'ERR_SSL_ALERT_99' });
  });

  test('network failures are not refusals: they stay connection losses', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', undefined])
      expect(tlsRefusal(err(code), 'h:1', {})).toBeUndefined();
  });
});

describe('TlsConfig', () => {
  test('true is Node defaults; options are used as given; a function is called for every connection', async () => {
    expect(await new TlsConfig(true).resolve()).toEqual({});
    const o = { ca: 'x' };
    expect(await new TlsConfig(o).resolve()).toBe(o);
    let n = 0;
    const c = new TlsConfig(async () => ({ servername: `s${++n}` }));
    expect(await c.resolve()).toEqual({ servername: 's1' });
    expect(await c.resolve()).toEqual({ servername: 's2' });
    c.update({ servername: 'fixed' });
    expect(await c.resolve()).toEqual({ servername: 'fixed' });
  });

  test('anything else is an InvalidArgumentError, at creation and on update', () => {
    for (const bad of [false, null, 'yes', 1]) expect(() => new TlsConfig(bad as never)).toThrow(InvalidArgumentError);
    expect(() => new TlsConfig(true).update(null as never)).toThrow(InvalidArgumentError);
  });
});
