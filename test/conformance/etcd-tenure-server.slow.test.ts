/**
 * (Slow suite: two suites of tenure-server processes.) The conformance suite, unchanged, against tenure-server over etcd (`--etcd`): first one front end,
 * then two front ends over one etcd and prefix with the suite's sessions alternating between them
 * (the @tenure/zookeeper transport's host list holds both; each session picks its own). tickTime
 * 1000 ms: etcd's lease TTLs are whole seconds, at least 2.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TenureServerProcess, TestingEtcd } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { conformanceSuite, type ConformanceTarget } from './suite.js';

function target(frontEnds: number): () => Promise<ConformanceTarget> {
  return async () => {
    const etcd = await TestingEtcd.start();
    const dir = mkdtempSync(join(tmpdir(), 'tenure-etcd-conformance-'));
    const cfg = join(dir, 'zoo.cfg');
    writeFileSync(
      cfg,
      [
        `etcd.endpoints=${etcd.endpoint}`,
        `etcd.prefix=/conformance-${frontEnds}`,
        'clientPort=0',
        'clientPortAddress=127.0.0.1',
        'tickTime=1000',
        'znode.container.checkIntervalMs=100',
        'extendedTypesEnabled=true',
        'maxClientCnxns=0',
        '4lw.commands.whitelist=*',
        '',
      ].join('\n'),
    );
    const servers: TenureServerProcess[] = [];
    for (let i = 0; i < frontEnds; i++) servers.push(await TenureServerProcess.start({ args: ['--config', cfg] }));
    const transport = zookeeper(servers.map((s) => s.connectString).join(','));
    let next = 0;
    return {
      transport,
      // One front end: its address. Two: the suite's `host` is read per session, so sessions alternate.
      get host(): string {
        return transport.hosts[next++ % transport.hosts.length]!;
      },
      tickMs: 1000,
      containerCheckIntervalMs: 100,
      close: async () => {
        await Promise.all(servers.map((s) => s.stop()));
        await etcd.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  };
}

conformanceSuite('tenure-server over etcd, one front end', target(1));
// Sessions on different front ends: a read on one may trail a write made on the other by the
// Watch's delay, as a read on a ZooKeeper follower may trail its leader (sync() orders it; the
// cases do not sync). A case that lost that race runs again; the etcd README names the difference.
conformanceSuite('tenure-server over etcd, two front ends with alternating sessions', target(2), { retry: 2 });
