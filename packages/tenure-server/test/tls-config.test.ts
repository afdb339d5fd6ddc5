/**
 * tenure-server's TLS keys: ZooKeeper's ssl.keyStore / ssl.trustStore in PEM (one file with the
 * key and its chain, as ZooKeeper's PEM loader) and PKCS12 (made by openssl, as @tenure/testing's
 * certificates), ssl.clientAuth, and the configuration errors naming their key.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { STORE_PASSWORD, makeTlsCertificates, type TlsCertificates } from '@tenure/testing';
import { ConfigError } from '../src/config.js';
import { loadSettings } from '../src/main.js';
import { splitPem, tlsServerOptions } from '../src/tls-stores.js';

let dir: string;
let certs: TlsCertificates;
let keyStore: string;
let trustStore: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tenure-tls-cfg-'));
  certs = await makeTlsCertificates(join(dir, 'certs'));
  keyStore = join(dir, 'server.pem');
  writeFileSync(keyStore, certs.pem.server.key + certs.pem.server.cert + certs.pem.ca.cert);
  trustStore = join(dir, 'ca.pem');
  writeFileSync(trustStore, certs.pem.ca.cert);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const configError = (f: () => unknown): ConfigError => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('no ConfigError was thrown');
};

describe('key and trust stores', () => {
  test('PEM: one file with the key and its chain; a PEM trust store; clientAuth need (the default), want, none', () => {
    const o = tlsServerOptions({ 'ssl.keyStore.location': keyStore, 'ssl.trustStore.location': trustStore });
    expect(o.key).toBe(splitPem(certs.pem.server.key).keys[0]);
    expect(splitPem(o.cert as string).certs).toHaveLength(2);
    expect(o.ca).toEqual(splitPem(certs.pem.ca.cert).certs);
    expect(o).toMatchObject({ requestCert: true, rejectUnauthorized: true });
    expect(tlsServerOptions({ 'ssl.keyStore.location': keyStore, 'ssl.clientAuth': 'want' })).toMatchObject({
      requestCert: true,
      rejectUnauthorized: false,
    });
    expect(tlsServerOptions({ 'ssl.keyStore.location': keyStore, 'ssl.clientAuth': 'NONE' })).toMatchObject({
      requestCert: false,
      rejectUnauthorized: false,
    });
  });

  test('PKCS12 key store with its password, by extension or ssl.keyStore.type', () => {
    const o = tlsServerOptions({ 'ssl.keyStore.location': certs.stores.server, 'ssl.keyStore.password': STORE_PASSWORD });
    expect(Buffer.isBuffer(o.pfx)).toBe(true);
    expect(o.passphrase).toBe(STORE_PASSWORD);
    const copy = join(dir, 'server-store');
    writeFileSync(copy, o.pfx as Buffer);
    expect(tlsServerOptions({ 'ssl.keyStore.location': copy, 'ssl.keyStore.password': STORE_PASSWORD }).pfx).toBeDefined(); // sniffed: not PEM
    expect(
      tlsServerOptions({ 'ssl.keyStore.location': copy, 'ssl.keyStore.type': 'PKCS12', 'ssl.keyStore.password': STORE_PASSWORD }).pfx,
    ).toBeDefined();
  });

  test('refusals name the key: a wrong password, a PKCS12 trust store, JKS, a PEM without a key, a missing file', () => {
    expect(
      configError(() => tlsServerOptions({ 'ssl.keyStore.location': certs.stores.server, 'ssl.keyStore.password': 'wrong' })),
    ).toMatchObject({
      key: 'ssl.keyStore.location',
      message: expect.stringMatching(/Node cannot use the TLS stores .*is ssl\.keyStore\.password right/),
    });
    expect(
      configError(() => tlsServerOptions({ 'ssl.keyStore.location': keyStore, 'ssl.trustStore.location': certs.stores.truststore })),
    ).toMatchObject({
      key: 'ssl.trustStore.location',
      message: expect.stringMatching(/cannot read a PKCS12 trust store .*openssl pkcs12 -in .* -nokeys/),
    });
    expect(configError(() => tlsServerOptions({ 'ssl.keyStore.location': keyStore, 'ssl.keyStore.type': 'JKS' })).message).toMatch(
      /JKS stores are Java-only/,
    );
    expect(configError(() => tlsServerOptions({ 'ssl.keyStore.location': trustStore })).message).toMatch(
      /must hold one private key and its certificate chain in PEM \(it has 0 key\(s\), 1 certificate\(s\)\)/,
    );
    expect(configError(() => tlsServerOptions({ 'ssl.keyStore.location': join(dir, 'nope.pem') })).message).toMatch(
      /^ssl\.keyStore\.location: cannot read .*nope\.pem: ENOENT/,
    );
    expect(configError(() => tlsServerOptions({})).message).toMatch(/secureClientPort needs ssl\.keyStore\.location/);
  });
});

describe('zoo.cfg', () => {
  const cfg = (text: string): string => {
    const path = join(dir, `zoo-${Math.random().toString(36).slice(2)}.cfg`);
    writeFileSync(path, text);
    return path;
  };

  test('a ZooKeeper TLS config is read as it is (serverCnxnFactory is no warning); --secure-port and --secure-host', () => {
    const { settings, warnings } = loadSettings([
      '--config',
      cfg(
        `clientPort=2181\nsecureClientPort=2281\nserverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n` +
          `authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider\n` +
          `ssl.keyStore.location=${keyStore}\nssl.trustStore.location=${trustStore}\nssl.clientAuth=want\n`,
      ),
    ]);
    expect(settings.secureClientPort).toBe(2281);
    expect(settings.tls).toMatchObject({ requestCert: true, rejectUnauthorized: false });
    // ZooKeeper takes any authProvider.<suffix>; the built-in providers are no warning.
    expect(warnings).toEqual([]);
    expect(
      loadSettings(['--secure-port', '0', '--secure-host', '127.0.0.1', '--config', cfg(`ssl.keyStore.location=${keyStore}\n`)]).settings,
    ).toMatchObject({
      secureClientPort: 0,
      secureClientPortAddress: '127.0.0.1',
    });
  });

  test('bad values name the key; ssl.* without a TLS port is a warning; a port used twice is an error', () => {
    expect(configError(() => loadSettings(['--config', cfg('ssl.clientAuth=maybe\n')])).message).toMatch(
      /:1: bad value for ssl\.clientAuth: "maybe" is not need, want, none/,
    );
    expect(configError(() => loadSettings(['--config', cfg('ssl.keyStore.type=BKS\n')])).key).toBe('ssl.keyStore.type');
    expect(loadSettings(['--config', cfg(`ssl.keyStore.location=${keyStore}\n`)]).warnings).toEqual([
      expect.stringMatching(/ssl\.\* keys are set without secureClientPort/),
    ]);
    expect(
      configError(() => loadSettings(['--port', '2181', '--secure-port', '2181', '--config', cfg(`ssl.keyStore.location=${keyStore}\n`)]))
        .key,
    ).toBe('secureClientPort');
    expect(configError(() => loadSettings(['--ws-secure', 'true'])).message).toMatch(/webSocketSecure is set without webSocketPort/);
  });
});
