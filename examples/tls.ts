/**
 * TLS end to end on one machine: the embedded server's TLS listener requiring a client
 * certificate, a Tenure client presenting one (its identity becomes `x509:<subject>`), an ACL
 * naming that identity, a refused handshake as a typed TlsError, and a certificate swap with
 * updateTls. Test certificates come from @tenure/testing (openssl); in production pass your own PEMs.
 *
 *   npm run build && node examples/dist/tls.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, Perms, TlsError } from '@tenure/client';
import { createEmbeddedServer } from '@tenure/server';
import { makeTlsCertificates } from '@tenure/testing';

const dir = mkdtempSync(join(tmpdir(), 'tenure-tls-example-'));
const { pem } = await makeTlsCertificates(dir); // ca, server, client, ... as PEM strings

const server = createEmbeddedServer();
const { connectString } = await server.listen({
  port: 0,
  tls: { key: pem.server.key, cert: pem.server.cert, ca: pem.ca.cert, requestCert: true, rejectUnauthorized: true },
});

// No client certificate: start() rejects at once with a TlsError naming the host and the reason.
const client = createClient({ connectString, tls: { ca: pem.ca.cert }, connectionTimeoutMs: 5000 });
try {
  await client.start();
} catch (err) {
  if (!(err instanceof TlsError)) throw err;
  console.log(`refused: ${err.reason} by ${err.host}`); // refused: no-client-certificate by 127.0.0.1:...
}

// Give it a certificate (a function returning options would be called before every connection).
client.updateTls({ ca: pem.ca.cert, cert: pem.client.cert, key: pem.client.key });
await client.start();
const [me] = await client.whoAmI();
console.log(`connected as ${me!.authScheme}:${me!.user}`); // x509:CN=tenure-client,OU=tests,O=tenure
await client.create('/only-me', 'secret', { acl: [{ perms: Perms.ALL, id: { scheme: 'x509', id: me!.user } }] });
console.log((await client.getData('/only-me')).data.toString()); // secret

await client.close();
await server.close();
rmSync(dir, { recursive: true, force: true });
