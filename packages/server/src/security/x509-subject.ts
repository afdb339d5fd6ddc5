/**
 * A certificate's subject as Java's `X500Principal.getName()` writes it (RFC 2253), which is the
 * identity ZooKeeper's X509AuthenticationProvider gives a TLS client: `x509:CN=app,O=example`.
 *
 * Read from the DER, not from Node's `subject` object, which loses the order of the RDNs,
 * multi-valued RDNs and attributes it has no name for. Java's rules, as reproduced here:
 * - RDNs last to first, joined by `,`; the attributes of a multi-valued RDN joined by `+`, in DER order;
 * - CN, C, L, ST, O, OU, STREET, DC and UID by name, every other type as its dotted OID;
 * - a string value (UTF8, Printable, IA5, T61, BMP, Universal) has `, = + < > # ; " \` escaped with
 *   a backslash, NUL as `\00`, and leading and trailing spaces escaped;
 * - an OID-named type, or a value that is not a string, is `#` and the hex of its DER encoding.
 */
import { ProtocolError } from '@tenure/protocol';

/** Attribute types Java writes by name in RFC 2253 form. */
const KEYWORDS: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.9': 'STREET',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
};

const SEQUENCE = 0x30;
const SET = 0x31;
const OID = 0x06;
const UTF8 = 0x0c;
const PRINTABLE = 0x13;
const T61 = 0x14;
const IA5 = 0x16;
const GENERAL = 0x1b;
const UNIVERSAL = 0x1c;
const BMP = 0x1e;

interface Tlv {
  tag: number;
  /** Offset of the value's first byte. */
  start: number;
  /** Offset just past the value. */
  end: number;
  /** Offset of the tag byte (the whole encoding is [headerStart, end)). */
  headerStart: number;
}

function readTlv(der: Uint8Array, at: number, limit: number): Tlv {
  if (at + 2 > limit) throw new ProtocolError('truncated DER');
  const tag = der[at]!;
  if ((tag & 0x1f) === 0x1f) throw new ProtocolError('multi-byte DER tags are not used in names');
  let len = der[at + 1]!;
  let p = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || p + n > limit) throw new ProtocolError('bad DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[p + i]!;
    p += n;
  }
  if (p + len > limit) throw new ProtocolError('DER value runs past its container');
  return { tag, start: p, end: p + len, headerStart: at };
}

function children(der: Uint8Array, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let p = parent.start; p < parent.end;) {
    const t = readTlv(der, p, parent.end);
    out.push(t);
    p = t.end;
  }
  return out;
}

function oidString(der: Uint8Array, t: Tlv): string {
  const parts: number[] = [];
  let v = 0;
  for (let i = t.start; i < t.end; i++) {
    const b = der[i]!;
    v = v * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) {
      if (parts.length === 0) {
        const first = v < 80 ? Math.floor(v / 40) : 2;
        parts.push(first, v - first * 40);
      } else parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

function stringValue(der: Uint8Array, t: Tlv): string | undefined {
  const bytes = Buffer.from(der.buffer, der.byteOffset + t.start, t.end - t.start);
  switch (t.tag) {
    case UTF8:
      return bytes.toString('utf8');
    case PRINTABLE:
    case IA5:
    case T61:
    case GENERAL:
      return bytes.toString('latin1');
    case BMP: {
      let s = '';
      for (let i = 0; i + 1 < bytes.length; i += 2) s += String.fromCharCode(bytes.readUInt16BE(i));
      return s;
    }
    case UNIVERSAL: {
      let s = '';
      for (let i = 0; i + 3 < bytes.length; i += 4) s += String.fromCodePoint(bytes.readUInt32BE(i));
      return s;
    }
    default:
      return undefined;
  }
}

const ESCAPED = new Set([',', '=', '+', '<', '>', '#', ';', '"', '\\']);

function escapeValue(value: string): string {
  let body = '';
  for (const c of value) body += c === '\u0000' ? '\\00' : ESCAPED.has(c) ? `\\${c}` : c;
  // Java escapes each leading and trailing space (and CR) of the escaped text.
  let lead = 0;
  while (lead < body.length && (body[lead] === ' ' || body[lead] === '\r')) lead++;
  let trail = body.length - 1;
  while (trail >= lead && (body[trail] === ' ' || body[trail] === '\r')) trail--;
  let out = '';
  for (let i = 0; i < body.length; i++) out += i < lead || i > trail ? `\\${body[i]}` : body[i];
  return out;
}

function hexOf(der: Uint8Array, from: number, to: number): string {
  return Buffer.from(der.buffer, der.byteOffset + from, to - from).toString('hex');
}

/** Formats a DER-encoded X.500 Name (a SEQUENCE of RDN SETs) as Java's RFC 2253 form. */
export function formatName(der: Uint8Array, name: Tlv = readTlv(der, 0, der.length)): string {
  if (name.tag !== SEQUENCE) throw new ProtocolError('an X.500 name is a SEQUENCE');
  const rdns: string[] = [];
  for (const rdn of children(der, name)) {
    if (rdn.tag !== SET) throw new ProtocolError('an RDN is a SET');
    const avas: string[] = [];
    for (const ava of children(der, rdn)) {
      const [type, value] = children(der, ava);
      if (ava.tag !== SEQUENCE || type?.tag !== OID || value === undefined) throw new ProtocolError('bad AttributeTypeAndValue');
      const oid = oidString(der, type);
      const keyword = KEYWORDS[oid];
      const text = keyword === undefined ? undefined : stringValue(der, value);
      avas.push(text === undefined ? `${keyword ?? oid}=#${hexOf(der, value.headerStart, value.end)}` : `${keyword}=${escapeValue(text)}`);
    }
    rdns.push(avas.join('+'));
  }
  return rdns.reverse().join(',');
}

/**
 * The subject of a DER-encoded X.509 certificate (`X509Certificate.raw`, `getPeerCertificate().raw`)
 * in Java's RFC 2253 form. Throws ProtocolError on a malformed certificate.
 */
export function certificateSubject(der: Uint8Array): string {
  const cert = readTlv(der, 0, der.length);
  const [tbs] = children(der, cert);
  if (cert.tag !== SEQUENCE || tbs?.tag !== SEQUENCE) throw new ProtocolError('a certificate is a SEQUENCE');
  const fields = children(der, tbs);
  // [0] version is optional; then serial, signature, issuer, validity, subject.
  const first = fields[0]?.tag === 0xa0 ? 1 : 0;
  const subject = fields[first + 4];
  if (subject === undefined) throw new ProtocolError('certificate without a subject');
  return formatName(der, subject);
}
