/**
 * A client over WebSocket on a real 3-node ZooKeeper 3.8 ensemble through the gateway: killing the
 * server its gateway connection is carried to suspends the client, and its reconnect (to the same
 * gateway URL) is carried to the next server, with the same session, ephemerals and watches.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionState, CreateMode, createClient } from '@tenure/client';
import { createWebSocketGateway, type WebSocketGateway } from '@tenure/server';
import { EventLog, TestingCluster, eventually, realZooKeeper } from '@tenure/testing';
import { webSocket } from '@tenure/ws';

const zk = realZooKeeper();

describe.skipIf(!zk.available)('WebSocket through the gateway to a 3-node ZooKeeper 3.8 ensemble', () => {
  let cluster: TestingCluster;
  let gateway: WebSocketGateway;

  beforeAll(async () => {
    cluster = await TestingCluster.start();
    gateway = await createWebSocketGateway({ hosts: cluster.addresses, path: '/zookeeper' });
  });
  afterAll(async () => {
    await gateway?.close();
    await cluster?.close();
  });

  /** The server whose `cons` lists the session. */
  async function serverWith(sessionId: bigint): Promise<number> {
    const sid = `sid=0x${sessionId.toString(16)}`;
    for (let n = 0; n < cluster.size; n++) {
      if (cluster.running(n) && (await cluster.fourLetterWord(n, 'cons')).includes(sid)) return n;
    }
    return -1;
  }

  it('killing the carried-to server: SUSPENDED, RECONNECTED through the gateway to another, same session', async () => {
    await using client = createClient({ transport: webSocket(gateway.url), sessionTimeoutMs: 6000, connectionTimeoutMs: 6000 });
    const states: string[] = [];
    client.on('stateChanged', (s) => void states.push(s));
    await client.start();
    const id = client.sessionId;
    await client.create('/ws-eph', Buffer.from('e'), { mode: CreateMode.EPHEMERAL });
    await client.create('/ws-watched', Buffer.from('a'));
    const fired = new EventLog<string>();
    await client.getData('/ws-watched', { watch: (e) => void fired.push(`${e.type}:${e.path}`) });

    let on = -1;
    await eventually(async () => expect((on = await serverWith(id))).toBeGreaterThanOrEqual(0));
    await cluster.killServer(on);
    await client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 20_000 });
    expect(client.sessionId).toBe(id);
    expect(states).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED, ConnectionState.RECONNECTED]);
    const now = await serverWith(id);
    expect(now).not.toBe(on);
    expect((await client.getData('/ws-eph')).data.toString()).toBe('e');
    await client.setData('/ws-watched', Buffer.from('b'));
    await fired.atLeast(1);
    expect(fired).toEqual(['NodeDataChanged:/ws-watched']);
    await cluster.restartServer(on);
  });
});
