/**
 * TestingCluster with reconfigEnabled: the dynamic config names every server with its client
 * address, and with skipACL an unauthenticated session may reconfig (the README's second set-up).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OpCode, type ConnectParams } from '@tenure/protocol';
import { zookeeper } from '@tenure/zookeeper';
import { TestingCluster, realZooKeeper } from '@tenure/testing';

const zk = realZooKeeper();
const NEW: ConnectParams = { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 4000, readOnly: false };

describe.skipIf(!zk.available)('TestingCluster({ reconfigEnabled, skipACL })', () => {
  let cluster: TestingCluster;
  beforeAll(async () => {
    cluster = await TestingCluster.start({ reconfigEnabled: true, skipACL: true });
  });
  afterAll(async () => {
    await cluster?.close();
  });

  test('/zookeeper/config holds the three server lines with client addresses; an anonymous reconfig succeeds (server 1, the lowest id, which does not lead a fresh ensemble)', async () => {
    const host = cluster.address(1);
    const result = await zookeeper(host).connect(host, NEW, { onEvent() {}, onClose() {} });
    if (result.kind !== 'connected') throw new Error('expired');
    const conn = result.connection;
    try {
      const read = await conn.send({ type: OpCode.getData, path: '/zookeeper/config', watch: false });
      const lines = read.response!.data!.toString().split('\n');
      expect(lines.slice(0, 3)).toEqual([0, 1, 2].map((n) => cluster.serverLine(n)));
      expect(lines[3]).toMatch(/^version=[0-9a-f]+$/);
      expect(cluster.serverId(0)).toBe('1');

      const r = await conn.send({ type: OpCode.reconfig, joiningServers: null, leavingServers: '1', newMembers: null, curConfigId: -1n });
      expect(r.err).toBe(0);
      const after = r.response!.data!.toString();
      expect(after).not.toContain('server.1=');
      expect(after).toContain(cluster.serverLine(2));
    } finally {
      conn.close();
    }
  });
});
