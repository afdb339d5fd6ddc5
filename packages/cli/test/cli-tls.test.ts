/**
 * `tenure --tls-ca/--tls-cert/--tls-key` against the embedded server's TLS listener (client
 * certificates required): the connection is x509:<subject> and x509 ACLs hold; without a client
 * certificate, or trusting another CA, it is one line and exit 1 (TlsError), never a hang; bad TLS
 * usage is exit 2 before anything connects.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { CLIENT_X509_ID, makeTlsCertificates } from '@tenure/testing';
import { tenure } from './cli-harness.js';

describe('tenure over TLS', () => {
  let dir: string;
  let server: EmbeddedServer;
  let secure: string;
  let plain: string;
  const files: Record<'ca' | 'cert' | 'key' | 'otherCa', string> = { ca: '', cert: '', key: '', otherCa: '' };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tenure-cli-tls-'));
    const certs = await makeTlsCertificates(join(dir, 'certs'));
    for (const [name, text] of [
      ['ca', certs.pem.ca.cert],
      ['cert', certs.pem.client.cert],
      ['key', certs.pem.client.key],
      ['otherCa', certs.pem['other-ca'].cert],
    ] as const) {
      files[name] = join(dir, `${name}.pem`);
      writeFileSync(files[name], text);
    }
    server = createEmbeddedServer();
    secure = `localhost:${(await server.listen({ port: 0, tls: certs.serverOptions() })).port}`;
    plain = (await server.listen({ port: 0 })).connectString;
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with a client certificate: x509:<subject>, whose ACL the plaintext port cannot pass', async () => {
    const tls = ['--server', secure, '--tls-ca', files.ca, '--tls-cert', files.cert, '--tls-key', files.key];
    // `auth::` is the connection's own identity (x509 ids hold commas, which zkCli's ACL text splits on).
    expect(await tenure([...tls, 'create', '--acl', 'auth::cdrwa', '/cert-only', 'mine'])).toMatchObject({
      code: 0,
      stdout: 'Created /cert-only\n',
    });
    expect(await tenure(['get', '/cert-only', ...tls])).toMatchObject({ code: 0, stdout: 'mine\n' });
    expect((await tenure([...tls, 'getAcl', '/cert-only'])).stdout).toBe(`x509:${CLIENT_X509_ID}:cdrwa\n`);
    const anonymous = await tenure(['--server', plain, 'get', '/cert-only']);
    expect(anonymous).toMatchObject({ code: 1, stdout: '' });
    expect(anonymous.stderr).toMatch(/^tenure: NoAuth: /);
  });

  it('refused handshakes are one line and exit 1, within the timeout: no client certificate, an untrusted server', async () => {
    for (const args of [
      ['--tls-ca', files.ca],
      ['--tls-ca', files.otherCa, '--tls-cert', files.cert, '--tls-key', files.key],
    ]) {
      const t0 = performance.now();
      const r = await tenure(['--server', secure, ...args, '--timeout', '5000', 'ls', '/']);
      expect(r, args.join(' ')).toMatchObject({ code: 1, stdout: '' });
      expect(r.stderr).toMatch(/^tenure: [^\n]*(TLS|certificate)[^\n]*\n$/i);
      expect(performance.now() - t0).toBeLessThan(8000);
    }
  });

  it('bad TLS usage is exit 2 before connecting: half a key pair, an unreadable file', async () => {
    expect(await tenure(['--server', secure, '--tls-cert', files.cert, 'ls', '/'])).toMatchObject({
      code: 2,
      stderr: 'tenure: --tls-cert needs --tls-key too (a client certificate and its key)\n',
    });
    expect(await tenure(['--server', secure, '--tls-ca', join(dir, 'missing.pem'), 'ls', '/'])).toMatchObject({
      code: 2,
      stderr: `tenure: --tls-ca: cannot read ${join(dir, 'missing.pem')}: ENOENT\n`,
    });
  });
});
