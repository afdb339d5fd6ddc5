/**
 * Real ZooKeeper clients on two tenure-server front ends over one etcd (`--etcd`): zkCli.sh against
 * one front end; Apache Curator's InterProcessMutex, 3 clients x 30 increments with both front ends
 * in the connect string, landing at 90; kazoo (python3-kazoo: nodes, versions, a watch, a
 * transaction, its Lock recipe, its Counter) against the other. JVM and Python start-ups make this a slow file.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient } from '@tenure/client';
import type { TenureServerProcess } from '@tenure/testing';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from '../interop/java.js';
import { ZKCLI, zkCli } from '../interop/zkcli.js';
import { startFrontEnds, type FrontEnds } from './front-ends.js';

const PYTHON = '/usr/bin/python3';
const KAZOO_SCRIPT = fileURLToPath(new URL('../interop/kazoo/tenure_server_check.py', import.meta.url));
const WORKER = fileURLToPath(new URL('../interop/java/CuratorLockWorker.java', import.meta.url));
const java = javaToolchain();
const hasKazoo = existsSync(PYTHON) && existsSync('/usr/lib/python3/dist-packages/kazoo/__init__.py');

describe('real clients on two tenure-server front ends over one etcd', () => {
  let frontEnds: FrontEnds;
  let a: TenureServerProcess;
  let b: TenureServerProcess;

  beforeAll(async () => {
    frontEnds = await startFrontEnds('/clients');
    [a, b] = frontEnds.servers as [TenureServerProcess, TenureServerProcess];
  }, 60_000);
  afterAll(async () => {
    await frontEnds?.stop();
  });

  test.skipIf(!existsSync(ZKCLI))(
    'zkCli.sh: create, get, set, ls, stat, delete, deleteall',
    async () => {
      const out = await zkCli(a.connectString, [
        'create /cli hello',
        'create /cli/child c',
        'create -e /cli/eph e',
        'get /cli',
        'set /cli world',
        'get /cli',
        'ls /cli',
        'stat /cli',
        'delete /cli/child',
        'ls /cli',
        'get /nope',
        'create /tree',
        'create /tree/a',
        'create /tree/a/b',
        'deleteall /tree',
        'ls /',
        'quit',
      ]);
      expect(out).toContain('Created /cli');
      expect(out).toMatch(/^hello$/m);
      expect(out).toMatch(/^world$/m);
      expect(out).toContain('[child, eph]');
      expect(out).toMatch(/^dataVersion = 1$/m);
      expect(out).toMatch(/^numChildren = 2$/m);
      expect(out).toContain('[eph]');
      expect(out).toMatch(/Node does not exist: \/nope/);
      expect(out).not.toContain('Failed to delete');
    },
    90_000,
  );

  test.skipIf(!java.available)(
    'Curator: InterProcessMutex, 3 clients x 30 increments over both front ends, lands at 90',
    async () => {
      const compiled: CompiledJava = await compileJava([WORKER]);
      const both = frontEnds.connectString;
      const curator = await JavaProgram.start({ classpath: compiled.classpath, mainClass: 'CuratorLockWorker', args: [both] }, /^ready$/);
      try {
        const client = createClient({ connectString: b.connectString });
        await using _ = client;
        await client.start();
        await client.create('/curator-counter', '0');
        expect(await curator.ask('count c1 /curator-lock /curator-counter 3 30', /^counted c1 /, 110_000)).toBe('counted c1 90');
        await client.sync('/curator-counter');
        expect((await client.getData('/curator-counter')).data.toString()).toBe('90');
      } finally {
        await curator.stop();
        compiled.dispose();
      }
    },
    150_000,
  );

  test.skipIf(!hasKazoo)(
    'kazoo: nodes, versions, a watch, a transaction, its Lock recipe',
    async () => {
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile(PYTHON, [KAZOO_SCRIPT, b.connectString], { timeout: 90_000 }, (err, out, errOut) =>
          err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out),
        ),
      );
      const seen = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
      expect(seen).toEqual({
        get: ['v1', 0],
        set_version: 1,
        watch: [['CHANGED', '/kazoo/app/config']],
        ephemeral_owner_is_me: true,
        transaction: ['/kazoo/app/t1', '/kazoo/app/t2'],
        counter: 60,
        children: ['config', 't1', 't2'],
        missing: 'NoNodeError',
      });
    },
    120_000,
  );
});
