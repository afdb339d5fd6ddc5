/**
 * Subjects in Java's RFC 2253 form from hand-built DER (the agreement with Java itself on real
 * certificates is test/tls/zookeeper-tls.zk.test.ts), and malformed DER: a RangeError, never a crash.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ProtocolError } from '@tenure/protocol';
import { certificateSubject, formatName } from '../src/security/x509-subject.js';

const tlv = (tag: number, body: Buffer): Buffer => {
  const n = body.length;
  const len = n < 128 ? Buffer.from([n]) : n < 256 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, body]);
};
const seq = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [a! * 40 + b!];
  for (const v of rest) {
    const enc = [v & 0x7f];
    for (let x = v >> 7; x > 0; x >>= 7) enc.unshift((x & 0x7f) | 0x80);
    bytes.push(...enc);
  }
  return tlv(0x06, Buffer.from(bytes));
}
const ava = (type: string, value: Buffer) => seq(oid(type), value);
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
const printable = (s: string) => tlv(0x13, Buffer.from(s, 'latin1'));
const bmp = (s: string) => tlv(0x1e, Buffer.from(s, 'utf16le').swap16());
const CN = '2.5.4.3';
const O = '2.5.4.10';
const OU = '2.5.4.11';
const C = '2.5.4.6';

describe('formatName (Java X500Principal.getName())', () => {
  test('RDNs are written last to first', () => {
    expect(formatName(seq(set(ava(C, printable('DE'))), set(ava(O, utf8('example'))), set(ava(CN, utf8('app')))))).toBe(
      'CN=app,O=example,C=DE',
    );
  });

  test('a multi-valued RDN joins its attributes with + in DER order', () => {
    expect(formatName(seq(set(ava(O, utf8('o'))), set(ava(CN, utf8('a')), ava(OU, utf8('b')))))).toBe('CN=a+OU=b,O=o');
  });

  test('special characters, NUL and leading/trailing spaces are escaped', () => {
    expect(formatName(seq(set(ava(CN, utf8('a,b+c=d<e>f#g;h"i\\j')))))).toBe('CN=a\\,b\\+c\\=d\\<e\\>f\\#g\\;h\\"i\\\\j');
    expect(formatName(seq(set(ava(CN, utf8('  two  ')))))).toBe('CN=\\ \\ two\\ \\ ');
    expect(formatName(seq(set(ava(CN, utf8('nul\u0000here')))))).toBe('CN=nul\\00here');
    expect(formatName(seq(set(ava(CN, utf8('Jürgen')))))).toBe('CN=Jürgen');
    expect(formatName(seq(set(ava(CN, bmp('Ünï')))))).toBe('CN=Ünï');
  });

  test('attribute types without an RFC 2253 name are dotted OIDs with the value as #hex of its DER', () => {
    const email = tlv(0x16, Buffer.from('x@y.z'));
    expect(formatName(seq(set(ava('1.2.840.113549.1.9.1', email)), set(ava(CN, utf8('a')))))).toBe(
      `CN=a,1.2.840.113549.1.9.1=#${email.toString('hex')}`,
    );
    // A named type whose value is not a string (an INTEGER here) is hex too.
    const int = tlv(0x02, Buffer.from([5]));
    expect(formatName(seq(set(ava(CN, int))))).toBe('CN=#020105');
  });

  test('DC, UID, STREET, L and ST are named', () => {
    const names: [string, string][] = [
      ['0.9.2342.19200300.100.1.25', 'DC'],
      ['0.9.2342.19200300.100.1.1', 'UID'],
      ['2.5.4.9', 'STREET'],
      ['2.5.4.7', 'L'],
      ['2.5.4.8', 'ST'],
    ];
    for (const [type, name] of names) expect(formatName(seq(set(ava(type, utf8('v')))))).toBe(`${name}=v`);
  });

  test('an empty name is the empty string', () => {
    expect(formatName(seq())).toBe('');
  });
});

describe('malformed input', () => {
  test('random bytes and truncated certificates give a RangeError, never anything else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        try {
          certificateSubject(bytes);
        } catch (e) {
          expect(e).toBeInstanceOf(ProtocolError);
        }
      }),
      { numRuns: 2000 },
    );
    const name = seq(set(ava(CN, utf8('app'))));
    const cert = seq(seq(tlv(0xa0, tlv(0x02, Buffer.from([2]))), tlv(0x02, Buffer.from([1])), seq(), name, seq(), name));
    expect(certificateSubject(cert)).toBe('CN=app');
    for (let cut = 0; cut < cert.length; cut++) expect(() => certificateSubject(cert.subarray(0, cut))).toThrow(ProtocolError);
  });
});
