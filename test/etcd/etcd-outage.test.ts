/**
 * An etcd outage under a client of etcdTransport: etcd SIGKILLed while the client writes. The
 * client goes SUSPENDED, then LOST by its session's deadline, as when a ZooKeeper ensemble loses
 * its quorum; once etcd is back, every write that was acknowledged is there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionState, createClient } from '@tenure/client';
import { etcdTransport } from '@tenure/etcd';
import { TestingEtcd } from '@tenure/testing';

describe('etcd outage under etcdTransport', () => {
  let etcd: TestingEtcd;
  beforeAll(async () => {
    etcd = await TestingEtcd.start();
  });
  afterAll(async () => {
    await etcd?.close();
  });

  it('etcd killed: SUSPENDED, then LOST by the deadline; nothing acknowledged is lost', async () => {
    const t = etcdTransport(etcd.endpoint, { prefix: '/outage' });
    const client = createClient({ transport: t, sessionTimeoutMs: 4000 });
    const states: string[] = [];
    client.on('stateChanged', (s: string) => states.push(s));
    await client.start();
    const T = client.negotiatedTimeoutMs;
    expect(T).toBe(4000);
    await client.create('/acked', '');
    const acked: string[] = [];
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        try {
          await client.create(`/acked/n${i}`, String(i));
          acked.push(`n${i}`);
        } catch {
          return; // the outcome of this one is unknown; it was never acknowledged
        }
      }
    })();
    while (acked.length < 20) await new Promise((r) => setTimeout(r, 10));
    const killedAt = performance.now();
    await etcd.kill();
    await client.waitForState(ConnectionState.SUSPENDED, { timeoutMs: 10_000 });
    await client.waitForState(ConnectionState.LOST, { timeoutMs: T + 10_000 });
    expect(performance.now() - killedAt).toBeLessThan(T + 8000);
    stop = true;
    await writer;
    expect(states.slice(0, 3)).toEqual([ConnectionState.CONNECTED, ConnectionState.SUSPENDED, ConnectionState.LOST]);
    await client.close();
    await t.close();

    await etcd.restart();
    const t2 = etcdTransport(etcd.endpoint, { prefix: '/outage' });
    const reader = createClient({ transport: t2 });
    await reader.start({ timeoutMs: 10_000 });
    const { children } = await reader.getChildren('/acked');
    for (const name of acked) expect(children).toContain(name);
    await reader.close();
    await t2.close();
  }, 60_000);
});
