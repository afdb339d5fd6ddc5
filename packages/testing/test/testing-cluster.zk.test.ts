/** TestingCluster: a 3-node ensemble on loopback that tests can crash server by server. */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CreateMode, OPEN_ACL_UNSAFE, OpCode, type ACL, type CloseReason, type ConnectParams } from '@tenure/protocol';
import { zookeeper } from '@tenure/zookeeper';
import { TestingCluster, realZooKeeper } from '@tenure/testing';

const zk = realZooKeeper();
const acl = OPEN_ACL_UNSAFE as ACL[];
const NEW: ConnectParams = { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 4000, readOnly: false };

async function connect(host: string, params: Partial<ConnectParams> = {}) {
  let onClosed!: (r: CloseReason) => void;
  const closed = new Promise<CloseReason>((r) => (onClosed = r));
  const result = await zookeeper(host).connect(host, { ...NEW, ...params }, { onEvent() {}, onClose: (r) => onClosed(r) });
  if (result.kind !== 'connected') throw new Error('expired');
  return { connection: result.connection, closed };
}

describe.skipIf(!zk.available)('TestingCluster', () => {
  let cluster: TestingCluster;
  beforeAll(async () => {
    cluster = await TestingCluster.start();
  });
  afterAll(async () => {
    await cluster?.close();
  });

  test('three servers on loopback, one leader, every one serving', async () => {
    expect(cluster.size).toBe(3);
    expect(cluster.connectString.split(',')).toEqual(cluster.addresses);
    const modes = await cluster.modes();
    expect(modes.filter((m) => m === 'leader')).toHaveLength(1);
    expect(modes.filter((m) => m === 'follower')).toHaveLength(2);
    const t = zookeeper(cluster.connectString);
    expect(t.hosts).toEqual(cluster.addresses);
  });

  test('a session lives on across servers; killServer/restartServer crash and revive one', async () => {
    const a = await connect(cluster.address(0));
    expect(cluster.serverOf(a.connection.server)).toBe(0);
    expect(cluster.serverOf({ connectedServer: cluster.address(2) })).toBe(2);
    expect(cluster.serverOf({ connectedServer: null })).toBe(-1);
    await a.connection.send({ type: OpCode.create, path: '/eph', data: null, acl, flags: CreateMode.EPHEMERAL });
    await cluster.killServer(0);
    expect(cluster.running(0)).toBe(false);
    expect(['server', 'network']).toContain((await a.closed).kind);
    // Re-attach the same session on another server: the ephemeral is still there.
    const b = await connect(cluster.address(1), { sessionId: a.connection.sessionId, passwd: a.connection.passwd });
    expect(b.connection.sessionId).toBe(a.connection.sessionId);
    const st = await b.connection.send({ type: OpCode.exists, path: '/eph', watch: false });
    expect(st.response!.stat.ephemeralOwner).toBe(a.connection.sessionId);
    await cluster.restartServer(0);
    expect(await cluster.modes()).toContain('leader');
    const c = await connect(cluster.address(0));
    await c.connection.send({ type: OpCode.sync, path: '/' });
    expect((await c.connection.send({ type: OpCode.exists, path: '/eph', watch: false })).err).toBe(0);
    const dump = await cluster.dump();
    expect(dump.sessions.some((s) => s.sessionId === a.connection.sessionId)).toBe(true);
    b.connection.close();
    c.connection.close();
  });
});
