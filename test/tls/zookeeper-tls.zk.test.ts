/**
 * Tenure's TLS transport against a real ZooKeeper 3.8's secureClientPort (Netty factory,
 * ssl.clientAuth=need): the client certificate authenticates as ZooKeeper's `x509` scheme, an
 * `x509` ACL set by a Java client is enforced, and each refused handshake is a typed TlsError,
 * logged, within the connection timeout, with one attempt (not a retry loop).
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient, NoAuthError, TlsError, type TlsOptions } from '@tenure/client';
import { certificateSubject } from '@tenure/server';
import { CLIENT_X509_ID, TlsTestingServer, javaClientFlags, realZooKeeper } from '@tenure/testing';
import { x509Tool } from './java-x509.js';

const zk = realZooKeeper();
const run = promisify(execFile);

/** A logger that keeps what the client logs at error level. */
function recordingLogger() {
  const errors: { obj: unknown; msg: string | undefined }[] = [];
  const noop = (): void => {};
  const logger = {
    error: (obj: unknown, msg?: string) => errors.push({ obj, msg }),
    warn: noop,
    info: noop,
    debug: noop,
    trace: noop,
    fatal: noop,
    child: () => logger,
  };
  return { logger, errors };
}

describe.skipIf(!zk.available)('TLS against real ZooKeeper (secureClientPort, clientAuth=need)', () => {
  let server: TlsTestingServer;

  beforeAll(async () => {
    server = await TlsTestingServer.start();
  });
  afterAll(async () => {
    await server?.close();
  });

  const client = (tls: TlsOptions, connectionTimeoutMs = 5000) =>
    createClient({ connectString: server.secureConnectString, tls, sessionTimeoutMs: 4000, connectionTimeoutMs });

  test('subjects are formatted exactly as Java formats them (RFC 2253: order, multi-valued RDNs, escapes, OIDs, UTF-8)', async () => {
    const dir = server.certificates.dir;
    const subjects = [
      String.raw`/C=DE/O=Acme\, Inc./OU=a\+b/OU=x=y;z<>#"\\q/CN= lead and trail /emailAddress=x@y.z/DC=example/UID=u1+CN=multi/2.5.4.5=SN123/street=Main St`,
      String.raw`/CN=Jürgen Ünïcødé/O=#hash/L=back\\slash/ST=  two`,
    ];
    const files = await Promise.all(
      subjects.map(async (subj, i) => {
        const out = join(dir, `tricky-${i}.pem`);
        await run('openssl', [
          'req',
          '-new',
          '-x509',
          '-key',
          join(dir, 'client-key.pem'),
          '-days',
          '1',
          '-utf8',
          '-multivalue-rdn',
          '-subj',
          subj,
          '-out',
          out,
        ]);
        return out;
      }),
    );
    files.push(join(dir, 'client.pem'), join(dir, 'server.pem'), join(dir, 'ca.pem'));
    const java = await x509Tool(['subject', ...files]);
    const ours = files.map((f) => certificateSubject(new X509Certificate(readFileSync(f)).raw));
    expect(ours).toEqual(java);
    expect(ours[2]).toBe(CLIENT_X509_ID);
  });

  test('the client certificate authenticates as x509; an x509 ACL a Java client set is enforced', async () => {
    // The Java client (Netty, TLS, the same client certificate) creates the node for our subject.
    const out = await x509Tool(
      ['create', server.secureConnectString, '/x509-java', 'from-java', CLIENT_X509_ID],
      javaClientFlags(server.certificates),
    );
    expect(out).toEqual(['created /x509-java', `acl x509:${CLIENT_X509_ID}:31`]);

    await using c = client(server.certificates.clientOptions());
    await c.start();
    expect(await c.whoAmI()).toEqual(expect.arrayContaining([{ authScheme: 'x509', user: CLIENT_X509_ID }]));
    expect((await c.getData('/x509-java')).data.toString()).toBe('from-java');
    await c.setData('/x509-java', 'from-tenure');
    expect(await c.getACL('/x509-java')).toMatchObject({ acl: [{ perms: 31, id: { scheme: 'x509', id: CLIENT_X509_ID } }] });

    // Without the certificate (the plaintext port) the same node is out of reach.
    await using anon = createClient({ connectString: server.server.connectString, sessionTimeoutMs: 4000 });
    await anon.start();
    await expect(anon.getData('/x509-java')).rejects.toBeInstanceOf(NoAuthError);
    await expect(anon.setData('/x509-java', 'x')).rejects.toBeInstanceOf(NoAuthError);
  });

  const certs = () => server.certificates;
  const refusals: [string, TlsError['reason'], () => TlsOptions][] = [
    ['no client certificate', 'no-client-certificate', () => certs().clientOptions(null)],
    ['a client certificate from an unknown CA', 'certificate-refused', () => certs().clientOptions('other-client')],
    ['an expired client certificate', 'certificate-refused', () => certs().clientOptions('expired-client')],
    [
      'a server certificate from an unknown CA',
      'untrusted-certificate',
      () => ({ ...certs().clientOptions(), ca: certs().pem['other-ca'].cert }),
    ],
    [
      'a host name the server certificate does not name',
      'hostname-mismatch',
      () => ({ ...certs().clientOptions(), servername: 'wrong.example' }),
    ],
  ];

  test.each(refusals)(
    '%s: start() rejects with TlsError (%s) naming the host, at once, logged, one attempt',
    async (_name, reason, tls) => {
      const { logger, errors } = recordingLogger();
      const c = createClient({
        connectString: server.secureConnectString,
        tls: tls(),
        sessionTimeoutMs: 4000,
        connectionTimeoutMs: 5000,
        logger,
      });
      const t0 = performance.now();
      const err = await c.start().then(
        () => undefined,
        (e: unknown) => e,
      );
      const ms = performance.now() - t0;
      await c.close();
      expect(err).toBeInstanceOf(TlsError);
      const e = err as TlsError;
      expect(e.reason).toBe(reason);
      expect(e.host).toBe(server.secureConnectString);
      expect(e.message).toContain(server.secureConnectString);
      expect(e.message).toContain(reason);
      expect(ms).toBeLessThan(5000); // within the connection timeout, in practice tens of ms
      // The log says the same, once: a refused handshake is not retried like a lost connection.
      const logged = errors.filter((x) => x.msg?.includes('TLS handshake refused'));
      expect(logged).toHaveLength(1);
      expect(logged[0]!.msg).toContain(reason);
    },
  );
});
