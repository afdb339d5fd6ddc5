/** Throw-away certificates for the wss:// tests: a CA, a server certificate for localhost, a client certificate (openssl). */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether the openssl command is here (Debian's `openssl` package); the wss:// tests skip without it. */
export function opensslAvailable(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface TestCerts {
  ca: Buffer;
  serverKey: Buffer;
  serverCert: Buffer;
  clientKey: Buffer;
  clientCert: Buffer;
}

export function makeCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'tenure-ws-certs-'));
  const ssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  };
  try {
    ssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=Tenure test CA',
    );
    for (const [name, subject, san] of [
      ['server', '/CN=localhost', 'subjectAltName=DNS:localhost'],
      ['client', '/CN=app/O=example', 'extendedKeyUsage=clientAuth'],
    ] as const) {
      ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
      writeFileSync(join(dir, `${name}.ext`), `${san}\n`);
      ssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.pem`,
        '-days',
        '2',
        '-extfile',
        `${name}.ext`,
      );
    }
    const read = (f: string): Buffer => readFileSync(join(dir, f));
    return {
      ca: read('ca.pem'),
      serverKey: read('server.key'),
      serverCert: read('server.pem'),
      clientKey: read('client.key'),
      clientCert: read('client.pem'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
