/**
 * tenure-server's TLS port from ZooKeeper's `ssl.*` keys: the key store and trust store files
 * read into Node's TLS options for `server.listen({ port: secureClientPort, tls })`.
 *
 * - **PEM** (ZooKeeper's PEMFileLoader): the key store is one file holding the private key
 *   (optionally encrypted with `ssl.keyStore.password`) and its certificate chain; the trust store
 *   holds CA certificates.
 * - **PKCS12** key stores go to Node as `pfx` with the password; OpenSSL 3 reads what Java 17's
 *   keytool and `openssl pkcs12 -export` write (legacy RC2/3DES stores may need converting).
 *   A PKCS12 *trust* store cannot be given to Node (it has no reader for a store of trusted
 *   certificates without keys): convert it to PEM. JKS and BCFKS are Java-only.
 * - The type is `ssl.keyStore.type` / `ssl.trustStore.type`, or, as in ZooKeeper, the file's
 *   extension (.pem, .p12/.pfx, .jks), or PEM when the file starts like PEM.
 * - `ssl.clientAuth`: `need` (ZooKeeper's default: a client without a certificate the trust store
 *   vouches for is refused), `want` (asked for; a verified one gives the `x509` identity, none is
 *   fine) or `none`.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext, type TlsOptions } from 'node:tls';
import { ConfigError } from './config.js';

export type StoreType = 'PEM' | 'PKCS12';
export type ClientAuth = 'need' | 'want' | 'none';

/** ZooKeeper's `ssl.*` keys as zoo.cfg gives them. */
export type SslKeys = Readonly<Record<string, string>>;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** A PEM text's private key blocks and certificate blocks (other blocks are ignored). */
export function splitPem(text: string): { keys: string[]; certs: string[] } {
  const keys: string[] = [];
  const certs: string[] = [];
  for (const m of text.matchAll(PEM_BLOCK)) {
    if (m[1]!.endsWith('PRIVATE KEY')) keys.push(m[0]);
    else if (m[1] === 'CERTIFICATE' || m[1] === 'TRUSTED CERTIFICATE') certs.push(m[0]);
  }
  return { keys, certs };
}

function storeType(which: 'keyStore' | 'trustStore', path: string, data: Buffer, given: string | undefined): StoreType {
  const key = `ssl.${which}.type`;
  const t = (given ?? '').toUpperCase();
  if (t === 'PEM' || t === 'PKCS12') return t;
  if (t === 'JKS' || t === 'BCFKS')
    throw new ConfigError(
      `${key}: ${given} stores are Java-only; give tenure-server PEM (or a PKCS12 key store): keytool -importkeystore -srckeystore ${path} -deststoretype PKCS12`,
      key,
    );
  if (t !== '') throw new ConfigError(`${key}: ${JSON.stringify(given)} is not PEM or PKCS12`, key);
  if (/\.pem$/i.test(path)) return 'PEM';
  if (/\.(p12|pfx)$/i.test(path)) return 'PKCS12';
  if (/\.jks$/i.test(path))
    throw new ConfigError(
      `ssl.${which}.location: ${path} looks like a JKS store, which is Java-only; give tenure-server PEM or PKCS12`,
      `ssl.${which}.location`,
    );
  return data.subarray(0, 64).toString('latin1').includes('-----BEGIN') ? 'PEM' : 'PKCS12';
}

function read(key: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(`${key}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, key);
  }
}

/**
 * Node's TLS server options for the `ssl.*` keys; throws ConfigError naming the key for a store
 * that is missing, unreadable or of a kind Node cannot use.
 */
export function tlsServerOptions(ssl: SslKeys): TlsOptions {
  const location = ssl['ssl.keyStore.location'];
  if (location === undefined)
    throw new ConfigError(
      'secureClientPort needs ssl.keyStore.location: the server key and certificate (PEM or PKCS12)',
      'ssl.keyStore.location',
    );
  const options: TlsOptions = {};
  const password = ssl['ssl.keyStore.password'];
  const keyStore = read('ssl.keyStore.location', location);
  if (storeType('keyStore', location, keyStore, ssl['ssl.keyStore.type']) === 'PEM') {
    const { keys, certs } = splitPem(keyStore.toString('utf8'));
    if (keys.length !== 1 || certs.length === 0) {
      throw new ConfigError(
        `ssl.keyStore.location: ${location} must hold one private key and its certificate chain in PEM (it has ${keys.length} key(s), ${certs.length} certificate(s))`,
        'ssl.keyStore.location',
      );
    }
    options.key = keys[0]!;
    options.cert = certs.join('\n');
  } else options.pfx = keyStore;
  if (password !== undefined) options.passphrase = password;

  const trust = ssl['ssl.trustStore.location'];
  if (trust !== undefined) {
    const trustStore = read('ssl.trustStore.location', trust);
    if (storeType('trustStore', trust, trustStore, ssl['ssl.trustStore.type']) === 'PKCS12') {
      throw new ConfigError(
        `ssl.trustStore.location: Node cannot read a PKCS12 trust store (${trust}); convert it to PEM: openssl pkcs12 -in ${trust} -nokeys -out truststore.pem`,
        'ssl.trustStore.location',
      );
    }
    const { certs } = splitPem(trustStore.toString('utf8'));
    if (certs.length === 0) throw new ConfigError(`ssl.trustStore.location: ${trust} holds no PEM certificate`, 'ssl.trustStore.location');
    options.ca = certs;
  }

  const auth = clientAuth(ssl['ssl.clientAuth']);
  options.requestCert = auth !== 'none';
  options.rejectUnauthorized = auth === 'need';
  // A wrong password, a key that does not match its certificate, a PKCS12 OpenSSL cannot decrypt:
  // found now, as a configuration error, rather than when the port opens.
  try {
    createSecureContext(options);
  } catch (err) {
    const key =
      options.ca !== undefined && /certificate|x509|PEM/i.test((err as Error).message) && !/key/i.test((err as Error).message)
        ? 'ssl.trustStore.location'
        : 'ssl.keyStore.location';
    throw new ConfigError(
      `${key}: Node cannot use the TLS stores (${location}${trust === undefined ? '' : `, ${trust}`}): ${(err as Error).message}${password === undefined ? '' : ' (is ssl.keyStore.password right?)'}`,
      key,
    );
  }
  return options;
}

/** `ssl.clientAuth`, ZooKeeper's values; default `need`, as ZooKeeper's X509Util. */
export function clientAuth(value: string | undefined): ClientAuth {
  const v = (value ?? 'need').toLowerCase();
  if (v === 'need' || v === 'want' || v === 'none') return v;
  throw new ConfigError(`bad value for ssl.clientAuth: ${JSON.stringify(value)} is not need, want or none`, 'ssl.clientAuth');
}
