/** `tenure config` and `tenure reconfig` against the embedded server (standalone, and presenting an ensemble's config). */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TestingEmbeddedServer } from '@tenure/testing';
import { json, tenure } from './cli-harness.js';

describe('tenure config / reconfig', () => {
  let server: TestingEmbeddedServer;
  beforeAll(async () => {
    server = await TestingEmbeddedServer.start();
  });
  afterAll(async () => {
    await server?.close();
  });

  test('config on a standalone server says so; --json gives the empty config', async () => {
    const r = await tenure(['--server', server.connectString, 'config']);
    expect(r).toMatchObject({ code: 0, stdout: 'no dynamic config (a standalone server)\n' });
    expect(json(await tenure(['--server', server.connectString, '--json', 'config']))).toEqual({ members: [], version: '', raw: '' });
  });

  test("config prints an ensemble's members, roles, client addresses and version", async () => {
    const version = server.server.setEnsembleConfig([
      'server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181',
      'server.2=10.0.0.2:2888:3888:observer;10.0.0.2:2181',
    ]);
    const r = await tenure(['--server', server.connectString, 'config']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'ID  HOST      QUORUM  ELECTION  ROLE         CLIENT',
      '1   10.0.0.1  2888    3888      participant  0.0.0.0:2181',
      '2   10.0.0.2  2888    3888      observer     10.0.0.2:2181',
      `version ${version}`,
      '',
    ]);
    const doc = json<{ members: { id: string; role: string }[]; version: string }>(
      await tenure(['--server', server.connectString, '--json', 'config']),
    );
    expect(doc.version).toBe(version);
    expect(doc.members.map((m) => [m.id, m.role])).toEqual([
      ['1', 'participant'],
      ['2', 'observer'],
    ]);
  });

  test('reconfig: usage is checked before connecting; the server refuses with ReconfigDisabled (exit 1)', async () => {
    expect((await tenure(['--server', server.connectString, 'reconfig'])).code).toBe(2);
    expect((await tenure(['--server', server.connectString, 'reconfig', '--remove', 'one'])).code).toBe(2);
    expect((await tenure(['--server', server.connectString, 'reconfig', '--members', 'server.1=h:1:2', '--remove', '2'])).code).toBe(2);
    expect((await tenure(['--server', server.connectString, 'reconfig', '--add', 'h:1:2'])).code).toBe(2);
    const r = await tenure(['--server', server.connectString, '--json', 'reconfig', '--remove', '1,2', '--from', '100000000']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'RECONFIGDISABLED', exitCode: 1 } });
  });
});
