/**
 * Test certificates made with `openssl` (and Java's `keytool` for the PKCS12 truststore, which
 * OpenSSL 3.0 cannot write in a form Java accepts): a CA, a server certificate for
 * localhost/127.0.0.1, a client certificate, and the bad ones each refusal needs (a CA nobody
 * trusts and certificates from it, an expired server and client certificate, a server
 * certificate for another host name). EC P-256 keys, valid for 30 days; about 1 s to make.
 *
 * Every PEM is also kept in memory (`pem`), ready for Node's TLS options; Java's stores are
 * `server.p12`, `client.p12` and `truststore.p12` (PKCS12, password `STORE_PASSWORD`).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The password of every PKCS12 store made here. */
export const STORE_PASSWORD = 'tenuretls';

/** Certificate subjects, as `openssl -subj` takes them (most significant RDN first). */
export const SUBJECTS = {
  ca: '/O=tenure/CN=tenure-test-ca',
  server: '/O=tenure/CN=localhost',
  client: '/O=tenure/OU=tests/CN=tenure-client',
  otherCa: '/O=elsewhere/CN=untrusted-ca',
} as const;

/** The client certificate's subject as Java's X500Principal.getName() (and ZooKeeper's `x509` scheme) writes it. */
export const CLIENT_X509_ID = 'CN=tenure-client,OU=tests,O=tenure';

/** Names of the PEM pairs made (`<name>.pem`, `<name>-key.pem`). */
export type CertificateName =
  | 'ca'
  | 'server'
  | 'client'
  | 'other-ca'
  /** Client certificate signed by the CA nobody trusts. */
  | 'other-client'
  /** Server certificate for localhost/127.0.0.1 signed by the CA nobody trusts. */
  | 'other-server'
  | 'expired-server'
  | 'expired-client'
  /** Server certificate for `wrong.example` only. */
  | 'wrong-host-server';

export interface TlsCertificates {
  /** The folder holding every file. */
  readonly dir: string;
  /** PEM text of `<name>.pem` (certificate) and `<name>-key.pem` (key). */
  readonly pem: Record<CertificateName, { cert: string; key: string }>;
  /** Java stores: server.p12, client.p12 (key and chain) and truststore.p12 (the CA), password STORE_PASSWORD. */
  readonly stores: { server: string; client: string; truststore: string };
  /** Node TLS options of a client that trusts the CA and presents the client certificate. */
  clientOptions(name?: 'client' | 'other-client' | 'expired-client' | null): { ca: string; cert?: string; key?: string };
  /** Node TLS options of a server with `name`'s certificate that requires a client certificate from the CA. */
  serverOptions(name?: 'server' | 'other-server' | 'expired-server' | 'wrong-host-server'): {
    ca: string;
    cert: string;
    key: string;
    requestCert: true;
    rejectUnauthorized: true;
  };
}

const CONFIG = `[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
[client]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
[wronghost]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:wrong.example
[signing]
dir = .
database = $dir/index.txt
new_certs_dir = $dir/issued
serial = $dir/serial
default_md = sha256
policy = anything
copy_extensions = none
unique_subject = no
[anything]
commonName = optional
organizationName = optional
organizationalUnitName = optional
`;

async function openssl(dir: string, args: string[]): Promise<void> {
  await run('openssl', args, { cwd: dir });
}

/** Makes (or, when `dir` already holds them, reuses) the test certificates in `dir`. */
export async function makeTlsCertificates(dir: string): Promise<TlsCertificates> {
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, 'truststore.p12'))) await generate(dir);
  const names: CertificateName[] = [
    'ca',
    'server',
    'client',
    'other-ca',
    'other-client',
    'other-server',
    'expired-server',
    'expired-client',
    'wrong-host-server',
  ];
  const pem = Object.fromEntries(
    names.map((n) => [n, { cert: readFileSync(join(dir, `${n}.pem`), 'utf8'), key: readFileSync(join(dir, `${n}-key.pem`), 'utf8') }]),
  ) as TlsCertificates['pem'];
  return {
    dir,
    pem,
    stores: { server: join(dir, 'server.p12'), client: join(dir, 'client.p12'), truststore: join(dir, 'truststore.p12') },
    clientOptions(name = 'client') {
      return name === null ? { ca: pem.ca.cert } : { ca: pem.ca.cert, cert: pem[name].cert, key: pem[name].key };
    },
    serverOptions(name = 'server') {
      return { ca: pem.ca.cert, cert: pem[name].cert, key: pem[name].key, requestCert: true, rejectUnauthorized: true };
    },
  };
}

async function generate(dir: string): Promise<void> {
  writeFileSync(join(dir, 'openssl.cnf'), CONFIG);
  mkdirSync(join(dir, 'issued'), { recursive: true });
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  // EC P-256: fast to make, and in the default cipher lists of Node and Java (ECDHE-ECDSA).
  const key = (name: string) =>
    openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}-key.pem`]);
  const names = [
    'ca',
    'other-ca',
    'server',
    'client',
    'other-client',
    'other-server',
    'expired-server',
    'expired-client',
    'wrong-host-server',
  ];
  await Promise.all(names.map(key));
  const selfSigned = (name: string, subj: string) =>
    openssl(dir, [
      'req',
      '-x509',
      '-new',
      '-key',
      `${name}-key.pem`,
      '-subj',
      subj,
      '-days',
      '30',
      '-config',
      'openssl.cnf',
      '-extensions',
      'ca',
      '-out',
      `${name}.pem`,
    ]);
  await Promise.all([selfSigned('ca', SUBJECTS.ca), selfSigned('other-ca', SUBJECTS.otherCa)]);
  // One at a time: `openssl ca` keeps its serial and index in files.
  const sign = async (name: string, subj: string, ca: string, ext: string, dates: string[] = ['-days', '30']) => {
    await openssl(dir, ['req', '-new', '-key', `${name}-key.pem`, '-subj', subj, '-config', 'openssl.cnf', '-out', `${name}.csr`]);
    await openssl(dir, [
      'ca',
      '-batch',
      '-notext',
      '-preserveDN',
      '-config',
      'openssl.cnf',
      '-name',
      'signing',
      '-cert',
      `${ca}.pem`,
      '-keyfile',
      `${ca}-key.pem`,
      '-extfile',
      'openssl.cnf',
      '-extensions',
      ext,
      ...dates,
      '-in',
      `${name}.csr`,
      '-out',
      `${name}.pem`,
    ]);
  };
  const past = ['-startdate', '20200101000000Z', '-enddate', '20200201000000Z'];
  await sign('server', SUBJECTS.server, 'ca', 'server');
  await sign('client', SUBJECTS.client, 'ca', 'client');
  await sign('other-client', SUBJECTS.client, 'other-ca', 'client');
  await sign('other-server', SUBJECTS.server, 'other-ca', 'server');
  await sign('expired-server', SUBJECTS.server, 'ca', 'server', past);
  await sign('expired-client', SUBJECTS.client, 'ca', 'client', past);
  await sign('wrong-host-server', '/O=tenure/CN=wrong.example', 'ca', 'wronghost');
  const p12 = (name: string) =>
    openssl(dir, [
      'pkcs12',
      '-export',
      '-in',
      `${name}.pem`,
      '-inkey',
      `${name}-key.pem`,
      '-certfile',
      'ca.pem',
      '-name',
      name,
      '-passout',
      `pass:${STORE_PASSWORD}`,
      '-out',
      `${name}.p12`,
    ]);
  await Promise.all([p12('server'), p12('client')]);
  await run(
    'keytool',
    [
      '-importcert',
      '-noprompt',
      '-alias',
      'ca',
      '-file',
      'ca.pem',
      '-keystore',
      'truststore.p12',
      '-storetype',
      'PKCS12',
      '-storepass',
      STORE_PASSWORD,
    ],
    { cwd: dir },
  );
}
