/**
 * Every command of `tenure` against a real ZooKeeper 3.8 (see cli-suite.ts), and `sessions` on a
 * server that refuses the four-letter words it needs.
 */
import { describe, expect, it } from 'vitest';
import { createClient, CreateMode } from '@tenure/client';
import { realZooKeeper, SaslZooKeeper, TestingServer } from '@tenure/testing';
import { sessionHex } from '../src/index.js';
import { json, tenure } from './cli-harness.js';
import { cliSuite, saslSuite } from './cli-suite.js';

const zk = realZooKeeper();

describe.skipIf(!zk.available)('real ZooKeeper 3.8', () => {
  cliSuite('tenure against ZooKeeper 3.8', () => TestingServer.start());
  saslSuite(
    'tenure --sasl against ZooKeeper 3.8 (JAAS DigestLoginModule)',
    () => SaslZooKeeper.start({ users: { bob: 'bobsecret' } }),
    'bobsecret',
  );

  it('sessions says why cons and dump cannot be had, and falls back to the owners of ephemeral nodes', async () => {
    await using server = await TestingServer.start({ config: { '4lw.commands.whitelist': 'srvr' } });
    const client = createClient({ connectString: server.connectString, sessionTimeoutMs: 4000 });
    await client.start();
    try {
      await client.create('/mine', 'x', { mode: CreateMode.EPHEMERAL });
      const r = await tenure(['--server', server.connectString, 'sessions', '--json']);
      const report = json(r);
      expect(report.source).toBe('tree');
      expect(report.problems).toEqual([
        { server: server.connectString, reason: expect.stringMatching(/is not executed because it is not in the whitelist/) },
      ]);
      expect(report.sessions).toEqual([
        expect.objectContaining({ sessionId: sessionHex(client.sessionId), ephemerals: ['/mine'], clientAddress: null, timeoutMs: null }),
      ]);
      expect(r.stderr).toMatch(/cannot read sessions from .*not in the whitelist/);
      const table = await tenure(['--server', server.connectString, 'sessions']);
      expect(table.stdout).toMatch(new RegExp(`^${sessionHex(client.sessionId)} +- +- +- +- +/mine$`, 'm'));
    } finally {
      await client.close();
    }
  });
});
