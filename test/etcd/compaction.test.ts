/**
 * A Watch broken across a compaction: etcdTransport's connection to etcd is cut (FaultProxy), another
 * process writes, etcd is compacted past the last revision the mirror applied, and the connection
 * heals. The Watch cannot resume from there (etcd cancels it with compact_revision), so the engine
 * loads the prefix again and applies the difference: the client's watches on the nodes that changed
 * fire, once; a watch on a node that did not change stays set and fires for its next change.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionState, createClient, type WatchEvent } from '@tenure/client';
import { etcdTransport } from '@tenure/etcd';
import { FaultProxy, TestingEtcd } from '@tenure/testing';

const etcdctl = (endpoint: string, ...args: string[]): string =>
  execFileSync('etcdctl', ['--endpoints', endpoint, ...args], { env: { ...process.env, ETCDCTL_API: '3' } }).toString();

describe('a watch resumed across a compaction', () => {
  let etcd: TestingEtcd;
  let proxy: FaultProxy;
  beforeAll(async () => {
    etcd = await TestingEtcd.start();
    proxy = await FaultProxy.start(etcd.endpoint.slice('http://'.length));
  });
  afterAll(async () => {
    await proxy?.close();
    await etcd?.close();
  });

  it('fires the watches of exactly the nodes that changed in the compacted gap', async () => {
    const cut = etcdTransport(`http://${proxy.address}`, { prefix: '/compact' });
    const direct = etcdTransport(etcd.endpoint, { prefix: '/compact' });
    const watcher = createClient({ transport: cut, sessionTimeoutMs: 20_000 });
    const writer = createClient({ transport: direct, sessionTimeoutMs: 20_000 });
    await watcher.start();
    await writer.start();
    for (const p of ['/w', '/w/changed', '/w/gone', '/w/same']) await watcher.create(p, 'v0');
    const events: string[] = [];
    let sameFired!: () => void;
    const same = new Promise<void>((resolve) => (sameFired = resolve));
    const seen = (e: WatchEvent): void => {
      events.push(`${e.type} ${e.path}`);
      if (e.path === '/w/same') sameFired();
    };
    await watcher.getData('/w/changed', { watch: seen });
    await watcher.getData('/w/gone', { watch: seen });
    await watcher.getData('/w/same', { watch: seen });
    const rangesBefore = cut.etcdCalls()['Range'] ?? 0;

    proxy.blackhole();
    proxy.reset();
    await writer.sync('/w');
    await writer.setData('/w/changed', 'v1');
    await writer.delete('/w/gone');
    for (let i = 0; i < 5; i++) await writer.setData('/w/changed', `v${i + 2}`);
    const revision = JSON.parse(etcdctl(etcd.endpoint, 'endpoint', 'status', '-w', 'json'))[0].Status.header.revision as number;
    etcdctl(etcd.endpoint, 'compaction', String(revision));
    proxy.heal();

    await watcher.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 15_000 });
    await watcher.sync('/w');
    await writer.setData('/w/same', 'v1'); // the untouched watch is still set: it fires now, once
    await watcher.sync('/w/same');
    await same;
    expect(events.sort()).toEqual(['NodeDataChanged /w/changed', 'NodeDataChanged /w/same', 'NodeDeleted /w/gone']);
    expect((await watcher.getData('/w/changed')).data.toString()).toBe('v6');
    expect(await watcher.exists('/w/gone')).toBeNull();
    // The engine reloaded the prefix (more Ranges than its first load).
    expect(cut.etcdCalls()['Range'] ?? 0).toBeGreaterThan(rangesBefore);
    await watcher.close();
    await writer.close();
    await Promise.all([cut.close(), direct.close()]);
  }, 60_000);
});
