/**
 * tenure-server front ends (`--etcd`) over one TestingEtcd and prefix, for the suites that put
 * ZooKeeper clients on them. stop() stops the front ends and etcd, and asserts that each front end
 * exited 0 and logged no error.
 */
import { expect } from 'vitest';
import { TenureServerProcess, TestingEtcd } from '@tenure/testing';

export interface FrontEnds {
  etcd: TestingEtcd;
  servers: TenureServerProcess[];
  /** Every front end's host:port, comma-separated: a connect string over all of them. */
  connectString: string;
  stop(): Promise<void>;
}

/** Starts one etcd and `count` front ends on it, all on `prefix`. */
export async function startFrontEnds(prefix: string, count = 2): Promise<FrontEnds> {
  const etcd = await TestingEtcd.start();
  const args = ['--etcd', etcd.endpoint, '--etcd-prefix', prefix, '--tick-time', '1000'];
  const started = await Promise.allSettled(Array.from({ length: count }, () => TenureServerProcess.start({ args })));
  const servers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.all(servers.map((s) => s.stop()));
    await etcd.close();
    throw failed.reason;
  }
  return {
    etcd,
    servers,
    connectString: servers.map((s) => s.connectString).join(','),
    async stop() {
      try {
        for (const s of servers) {
          const stopped = await s.stop();
          expect(stopped.code).toBe(0);
          expect(s.logs.filter((l) => l.level >= 50)).toEqual([]);
        }
      } finally {
        await etcd.close();
      }
    },
  };
}
