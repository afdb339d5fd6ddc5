/**
 * The conformance suite, unchanged, against the tenure-server process (a child process, in
 * memory and on a data dir with forceSync=yes) through the @tenure/zookeeper transport, configured by a zoo.cfg with the same knobs as
 * the other targets: tickTime 200, containers reaped every 100 ms, TTL nodes on, no per-address
 * connection limit.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TenureServerProcess } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { conformanceSuite, type ConformanceTarget } from './suite.js';

/** A tenure-server child process with the suite's knobs, optionally on a data dir. */
function target(durable: boolean): () => Promise<ConformanceTarget> {
  return async (): Promise<ConformanceTarget> => {
    const dir = mkdtempSync(join(tmpdir(), 'tenure-conformance-'));
    const cfg = join(dir, 'zoo.cfg');
    writeFileSync(
      cfg,
      [
        ...(durable ? [`dataDir=${join(dir, 'data')}`, 'forceSync=yes'] : []),
        'clientPort=0',
        'clientPortAddress=127.0.0.1',
        'tickTime=200',
        'znode.container.checkIntervalMs=100',
        'extendedTypesEnabled=true',
        'maxClientCnxns=0',
        '4lw.commands.whitelist=*',
        '',
      ].join('\n'),
    );
    const server = await TenureServerProcess.start({ args: ['--config', cfg] });
    return {
      transport: zookeeper(server.connectString),
      tickMs: 200,
      containerCheckIntervalMs: 100,
      close: async () => {
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  };
}

conformanceSuite('tenure-server process, in memory', target(false));
conformanceSuite('tenure-server process, with a data dir', target(true));
