/**
 * `dump` and `cons` on tenure-server over etcd, with two front ends: `dump` at either one lists the
 * sessions of the whole namespace and their ephemerals (the sessions are leases under the prefix,
 * the ephemerals are in the shared tree); `cons` and dump's connections are the front end's own,
 * and both answers say so.
 */
import { describe, expect, it } from 'vitest';
import { CreateMode } from '@tenure/client';
import { eventually, fourLetterWord, parseServerDump, TenureServerProcess } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { useEtcdBed } from './etcd-bed.js';

const hex = (id: bigint): string => `0x${BigInt.asUintN(64, id).toString(16)}`;

describe('dump and cons over etcd', () => {
  const bed = useEtcdBed();

  it('dump shows every session of the namespace; cons shows this front end and says so', async () => {
    const args = ['--etcd', bed.etcd.endpoint, '--etcd-prefix', '/dump', '--4lw-whitelist', '*'];
    const [a, b] = (await Promise.all([TenureServerProcess.start({ args }), TenureServerProcess.start({ args })])).map((s) =>
      bed.server(s),
    ) as [TenureServerProcess, TenureServerProcess];
    const onA = await bed.open(zookeeper(a.connectString), 6000);
    const onB = await bed.open(zookeeper(b.connectString), 6000);
    await onA.create('/a-eph', '', { mode: CreateMode.EPHEMERAL });
    await onB.create('/b-eph', '', { mode: CreateMode.EPHEMERAL });

    for (const s of [a, b]) {
      // The other front end's writes reach this one's mirror a moment later.
      const dump = await eventually(async () => {
        const d = parseServerDump(await fourLetterWord('127.0.0.1', s.port, 'dump'), await fourLetterWord('127.0.0.1', s.port, 'wchc'));
        const eph = new Map(d.sessions.map((x) => [x.sessionId, x.ephemerals]));
        return eph.get(onA.sessionId)?.includes('/a-eph') && eph.get(onB.sessionId)?.includes('/b-eph') ? d : undefined;
      }, 10_000);
      expect(dump.raw.dump).toMatch(/expire with their leases in the shared store/);
      expect(dump.raw.dump).toMatch(/the whole namespace \(every front end\); connections: this front end only/);
      // Its connections section lists only its own client.
      const own = s === a ? onA : onB;
      const other = s === a ? onB : onA;
      const connections = dump.raw.dump.slice(dump.raw.dump.indexOf('Connections dump'));
      expect(connections).toContain(`sessionId: ${hex(own.sessionId)}`);
      expect(connections).not.toContain(`sessionId: ${hex(other.sessionId)}`);

      const cons = await fourLetterWord('127.0.0.1', s.port, 'cons');
      expect(cons).toContain(`sid=${hex(own.sessionId)}`);
      expect(cons).not.toContain(`sid=${hex(other.sessionId)}`);
      expect(cons).toMatch(/Connections of this front end only/);
    }
  }, 30_000);
});
