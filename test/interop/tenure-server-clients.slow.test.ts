/**
 * Real ZooKeeper clients against the tenure-server PROCESS (a child process on a data dir, with
 * the process defaults: maxClientCnxns 60 and so on): ZooKeeper's zkCli.sh, Apache Curator
 * (an InterProcessMutex counter, 3 clients x 30 increments, lands at 90) and kazoo
 * (python3-kazoo: nodes, versions, a watch, a transaction, its Lock recipe). JVM and Python
 * start-ups make this a slow file.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient } from '@tenure/client';
import { TenureServerProcess } from '@tenure/testing';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';
import { ZKCLI, zkCli } from './zkcli.js';

const PYTHON = '/usr/bin/python3';
const KAZOO_SCRIPT = fileURLToPath(new URL('./kazoo/tenure_server_check.py', import.meta.url));
const WORKER = fileURLToPath(new URL('./java/CuratorLockWorker.java', import.meta.url));
const java = javaToolchain();
const ci = process.env.CI === 'true' || process.env.CI === '1';
if (ci && !existsSync(ZKCLI)) throw new Error(`${ZKCLI} is missing: apt-get install zookeeper`);

function hasKazoo(): boolean {
  return existsSync(PYTHON) && existsSync('/usr/lib/python3/dist-packages/kazoo/__init__.py');
}
if (ci && !hasKazoo()) throw new Error('kazoo is missing: apt-get install python3-kazoo');

describe('real clients against the tenure-server process', () => {
  let server: TenureServerProcess;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tenure-server-clients-'));
    server = await TenureServerProcess.start({ args: ['--data-dir', join(dir, 'data'), '--tick-time', '500'] });
  });
  afterAll(async () => {
    const stopped = await server?.stop();
    expect(stopped?.code).toBe(0);
    // The clients never made the server log a failure.
    expect(server.logs.filter((l) => l.level >= 50)).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });

  test.skipIf(!existsSync(ZKCLI))('zkCli.sh: create, get, set, ls, stat, delete', async () => {
    const out = await zkCli(server.connectString, [
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
  });

  test.skipIf(!java.available)('Curator: an InterProcessMutex counter, 3 clients x 30 increments, lands at 90', async () => {
    const compiled: CompiledJava = await compileJava([WORKER]);
    const curator = await JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorLockWorker', args: [server.connectString] },
      /^ready$/,
    );
    try {
      const client = createClient({ connectString: server.connectString });
      await using _ = client;
      await client.start();
      await client.create('/curator-counter', '0');
      expect(await curator.ask('count c1 /curator-lock /curator-counter 3 30', /^counted c1 /, 110_000)).toBe('counted c1 90');
      expect((await client.getData('/curator-counter')).data.toString()).toBe('90');
      const { stat } = await client.getData('/curator-counter');
      expect(stat.version).toBe(90);
      expect((await client.getChildren('/curator-lock')).children).toEqual([]);
    } finally {
      await curator.stop();
      compiled.dispose();
    }
  });

  test.skipIf(!hasKazoo())('kazoo: nodes, versions, a watch, a transaction, its Lock recipe', async () => {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(PYTHON, [KAZOO_SCRIPT, server.connectString], { timeout: 90_000 }, (err, out, errOut) =>
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
  });
});
