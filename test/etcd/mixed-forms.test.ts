/**
 * The two forms over one etcd and prefix: a Tenure client over etcdTransport (in-process) and one
 * through a tenure-server front end (`--etcd`, ZooKeeper's wire protocol). Their Mutexes on one
 * path exclude each other with rising fencing tokens; each reads what the other writes; an
 * in-process watch fires for a write made through the front end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client, type WatchEvent } from '@tenure/client';
import { etcdTransport, type EtcdTransport } from '@tenure/etcd';
import { Mutex } from '@tenure/locks';
import { TenureServerProcess, TestingEtcd } from '@tenure/testing';

describe('etcdTransport and tenure-server on one etcd', () => {
  let etcd: TestingEtcd;
  let server: TenureServerProcess;
  let transport: EtcdTransport;
  let inProcess: Client;
  let wire: Client;

  beforeAll(async () => {
    etcd = await TestingEtcd.start();
    server = await TenureServerProcess.start({ args: ['--etcd', etcd.endpoint, '--etcd-prefix', '/mixed'] });
    transport = etcdTransport(etcd.endpoint, { prefix: '/mixed' });
    inProcess = createClient({ transport, sessionTimeoutMs: 10_000 });
    wire = createClient({ connectString: server.connectString, sessionTimeoutMs: 10_000 });
    await Promise.all([inProcess.start(), wire.start()]);
  });
  afterAll(async () => {
    await Promise.all([inProcess?.close(), wire?.close()]);
    await transport?.close();
    await server?.stop();
    await etcd?.close();
  });

  it('Mutexes of both forms on one path exclude each other; fencing tokens rise', async () => {
    await inProcess.create('/shared-count', '0');
    const tokens: bigint[] = [];
    let inside = 0;
    let overlap = false;
    await Promise.all(
      [inProcess, wire].map(async (c) => {
        const mutex = new Mutex(c, '/locks/mixed');
        for (let i = 0; i < 15; i++) {
          await using lease = await mutex.acquire({ timeoutMs: 20_000 });
          if (++inside > 1) overlap = true;
          tokens.push(lease.fencingToken);
          const { data, stat } = await c.getData('/shared-count');
          await c.setData('/shared-count', String(Number(data.toString()) + 1), { version: stat.version });
          inside--;
        }
        await mutex.close();
      }),
    );
    expect(overlap).toBe(false);
    expect(tokens).toEqual([...tokens].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    await wire.sync('/shared-count');
    expect((await wire.getData('/shared-count')).data.toString()).toBe('30');
  });

  it('each form reads what the other writes, and an in-process watch fires for a write through the front end', async () => {
    await wire.create('/from-wire', 'w');
    await inProcess.sync('/from-wire');
    expect((await inProcess.getData('/from-wire')).data.toString()).toBe('w');
    await inProcess.create('/from-process', 'p');
    await wire.sync('/from-process');
    expect((await wire.getData('/from-process')).data.toString()).toBe('p');
    let fired!: (e: WatchEvent) => void;
    const event = new Promise<WatchEvent>((resolve) => (fired = resolve));
    await inProcess.getData('/from-wire', { watch: (e) => fired(e) });
    await wire.setData('/from-wire', 'w2');
    expect(await event).toMatchObject({ type: 'NodeDataChanged', path: '/from-wire' });
  });
});
