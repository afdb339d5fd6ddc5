/**
 * The conformance suite, unchanged, against the embedded server's TLS listener
 * (`server.listen({ tls })`) through the @tenure/zookeeper transport over TLS. The listener asks
 * for a client certificate but does not require one (ZooKeeper's ssl.clientAuth=want) and the
 * client sends none: a certificate would authenticate every session as `x509`, and the suite's
 * ACL cases need anonymous sessions. Certificate identities: test/tls/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedServer } from '@tenure/server';
import { makeTlsCertificates } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { conformanceSuite } from './suite.js';

conformanceSuite('embedded server, TLS listener', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tenure-tls-conformance-'));
  const certs = await makeTlsCertificates(dir);
  const server = createEmbeddedServer({ tickMs: 200, containerCheckIntervalMs: 100 });
  const { connectString } = await server.listen({ port: 0, tls: { ...certs.serverOptions(), rejectUnauthorized: false } });
  return {
    transport: zookeeper(connectString, { tls: certs.clientOptions(null) }),
    tickMs: 200,
    containerCheckIntervalMs: 100,
    close: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
