/**
 * The installed command: node_modules/.bin/tenure as `npm ci` links it, spawned as a user would run
 * it. Exit codes, Ctrl-C on watch, and the interactive shell driven through its stdin (piped, and
 * through a pseudo-terminal made by util-linux's `script` for tab completion and history).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '@tenure/client';
import { TestingEmbeddedServer } from '@tenure/testing';
import { BIN, distIsStale, REPO, spawnProcess } from './cli-harness.js';

const hasScript = spawnSync('script', ['--version']).status === 0;

describe('node_modules/.bin/tenure', () => {
  let server: TestingEmbeddedServer;
  let admin: Client;
  let dir: string;

  beforeAll(async () => {
    // The bin runs dist/: build it when src/ is newer (npm ci builds it at install time).
    if (distIsStale() !== null) execFileSync('npx', ['tsc', '-b', 'packages/cli'], { cwd: REPO, stdio: 'ignore' });
    server = await TestingEmbeddedServer.start();
    admin = createClient({ connectString: server.connectString });
    await admin.start();
    await admin.create('/app/config', 'cfg', { createParents: true });
    await admin.create('/app/locks', null);
    dir = mkdtempSync(join(tmpdir(), 'tenure-bin-'));
  }, 120_000);
  afterAll(async () => {
    await admin?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const runBin = async (...args: string[]) => {
    const p = spawnProcess(BIN, args);
    p.end();
    const code = await p.exited;
    return { code, stdout: p.stdout(), stderr: p.stderr() };
  };

  it('exists after npm ci, is executable, points at the committed launcher and runs', async () => {
    expect(lstatSync(BIN).isSymbolicLink()).toBe(true);
    expect(realpathSync(BIN)).toBe(realpathSync(join(REPO, 'packages/cli/bin/tenure.js')));
    accessSync(BIN, constants.X_OK);
    expect(await runBin('--version')).toMatchObject({ code: 0, stdout: expect.stringMatching(/^tenure 0\.\d+\.\d+\n$/) });
    expect(await runBin('--server', server.connectString, 'ls', '/app')).toEqual({ code: 0, stdout: 'config\nlocks\n', stderr: '' });
    expect(JSON.parse((await runBin('get', '/app/config', '--json', '--server', server.connectString)).stdout)).toMatchObject({
      data: { value: 'cfg' },
    });
  });

  it('exit codes: 1 for a ZooKeeper error, 2 for bad usage, one line each', async () => {
    expect(await runBin('--server', server.connectString, 'get', '/nothing')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'tenure: NoNode: no node (/nothing)\n',
    });
    expect(await runBin('--server', server.connectString, 'nonsense')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'tenure: unknown command "nonsense" (tenure help lists them)\n',
    });
    expect(await runBin('--server', server.connectString, 'ls')).toMatchObject({
      code: 2,
      stdout: '',
      stderr: expect.stringMatching(/^tenure: ls takes 1 argument, got 0 \(usage: tenure ls .*\)\n$/),
    });
  });

  it('watch runs until Ctrl-C (SIGINT), then exits 0 with one JSON document', async () => {
    await admin.create('/watched', null);
    const p = spawnProcess(BIN, ['--server', server.connectString, 'watch', '/watched', '--json']);
    await p.waitFor(/watching \/watched/, 15_000, 'stderr');
    await admin.create('/watched/child', 'x');
    await p.waitFor(/\/watched\/child/);
    p.kill('SIGINT');
    expect(await p.exited).toBe(0);
    expect(JSON.parse(p.stdout())).toEqual([expect.objectContaining({ type: 'NodeCreated', path: '/watched/child' })]);
  });

  it('the shell runs commands from piped stdin, reports errors in one line and goes on, ends at end of input', async () => {
    const p = spawnProcess(BIN, ['--server', server.connectString]);
    p.write('ls /app\nget /app/config\nget /missing\nbogus\ncreate /from-shell "two words"\nget /from-shell --json\nhistory\n');
    p.end();
    expect(await p.exited).toBe(0);
    const out = p.stdout();
    expect(out.startsWith('config\nlocks\ncfg\n')).toBe(true); // no prompts when piped
    expect(out).toContain('cfg\n');
    expect(out).toContain('Created /from-shell\n');
    expect(out).toMatch(/"value": "two words"/);
    expect(out).toMatch(/ {3}1 {2}ls \/app\n(.*\n)* {3}7 {2}history\n/);
    expect(p.stderr()).toContain('tenure: NoNode: no node (/missing)\n');
    expect(p.stderr()).toContain('tenure: unknown command "bogus" (help lists them)\n');
    expect(p.stderr()).toMatch(/^Connected to 127\.0\.0\.1:\d+ \(session 0x[0-9a-f]+\)/);
  });

  it.skipIf(!hasScript)('the shell completes commands and paths with Tab and keeps a history across runs (in a terminal)', async () => {
    const history = join(dir, 'history');
    const shell = (): ReturnType<typeof spawnProcess> =>
      spawnProcess('script', ['-q', '-e', '-c', `${BIN} --server ${server.connectString}`, '/dev/null'], { TENURE_HISTORY: history });
    const p = shell();
    await p.waitFor(/\[tenure: [^\]]+\] /);
    p.write('loc\t'); // -> "locks"
    await p.waitFor(/locks$/);
    p.write('\r');
    await p.waitFor(/no locks found/);
    p.write('get /ap\t'); // -> "/app"
    await p.waitFor(/get \/app$/m);
    p.write('/con\t'); // -> "/app/config"
    await p.waitFor(/get \/app\/config/);
    p.write('\r');
    await p.waitFor(/\r?\ncfg\r?\n/);
    p.write('quit\r');
    expect(await p.exited).toBe(0);
    expect(readFileSync(history, 'utf8')).toBe('locks\nget /app/config\nquit\n');

    // A new shell: the up arrow brings back the earlier lines.
    const q = shell();
    await q.waitFor(/\[tenure: [^\]]+\] /);
    q.write('\x1b[A\x1b[A'); // quit, then get /app/config
    await q.waitFor(/get \/app\/config/);
    q.write('\r');
    await q.waitFor(/\r?\ncfg\r?\n/);
    q.write('\x03'); // Ctrl-C with nothing running leaves the shell
    expect(await q.exited).toBe(0);
  });
});
