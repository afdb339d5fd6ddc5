/**
 * The conformance suite, unchanged, against @tenure/etcd's in-process transport: the embedded
 * server's semantics over an etcd store (one TestingEtcd member on free ports, --max-txn-ops=4096).
 * tickTime is 1000 ms here, not 200: etcd's lease TTLs are whole seconds, at least 2, so session
 * timeouts clamp to [2 s, 20 s]. Containers are checked every 100 ms, as on the other targets.
 */
import { etcdTransport } from '@tenure/etcd';
import { TestingEtcd } from '@tenure/testing';
import { conformanceSuite } from './suite.js';

conformanceSuite('etcd, in-process transport', async () => {
  const etcd = await TestingEtcd.start();
  const transport = etcdTransport(etcd.endpoint, {
    prefix: '/conformance',
    maxTxnOps: 4096,
    server: { tickMs: 1000, containerCheckIntervalMs: 100 },
  });
  return {
    transport,
    tickMs: 1000,
    containerCheckIntervalMs: 100,
    close: async () => {
      await transport.close();
      await etcd.close();
    },
  };
});
