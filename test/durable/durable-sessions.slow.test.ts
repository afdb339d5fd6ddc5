/**
 * Durable sessions: the durable server (a child process on a fixed port with a data dir) is
 * SIGKILLed and restarted. Clients that come back within their timeout find their session, their
 * ephemerals and (through SetWatches) their watches; a session whose client stays away expires
 * after its timeout counted from the restart; a thousand sessions in four processes ride through
 * one restart with none expired and no ephemeral lost.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, ConnectionState, RetryPolicies, type Client } from '@tenure/client';
import { CreateMode, OpCode } from '@tenure/protocol';
import { EventLog, eventually, freePort } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { afterAll, afterEach, expect, test } from 'vitest';
import { startDurable, type DurableChild } from '../../packages/server/test/durable-child.js';
import { open } from '../../packages/server/test/harness.js';

const root = mkdtempSync(join(tmpdir(), 'tenure-dsess-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function server(dir: string, port: number): Promise<DurableChild> {
  const s = await startDurable(['--data-dir', dir, '--port', String(port), '--tick-ms', '200', '--max-session-timeout-ms', '40000']);
  cleanup.push(() => s.kill('SIGKILL'));
  return s;
}

function client(connectString: string, sessionTimeoutMs: number): Client {
  const c = createClient({ connectString, sessionTimeoutMs, retryPolicy: RetryPolicies.forever(100) });
  cleanup.push(() => c.close());
  return c;
}

test('a client with an ephemeral and a watch rides through SIGKILL and restart: same session, ephemeral kept, the watch fires', async () => {
  const dir = join(root, 'ride');
  const port = await freePort();
  const first = await server(dir, port);
  const c = client(first.connectString, 10_000);
  await c.start({ timeoutMs: 20_000 });
  await c.create('/watched', 'before');
  await c.create('/mine', 'eph', { mode: CreateMode.EPHEMERAL });
  const sessionId = c.sessionId;
  const fired = new EventLog<string>();
  await c.getData('/watched', { watch: (e) => fired.push(`${e.type}:${e.path}`) });
  const states: string[] = [];
  c.on('stateChanged', (s) => states.push(s));

  await first.kill('SIGKILL');
  const second = await server(dir, port);
  await c.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 20_000 });
  expect(c.sessionId).toBe(sessionId);
  expect(states).not.toContain(ConnectionState.LOST);
  const other = client(second.connectString, 10_000);
  await other.start({ timeoutMs: 20_000 });
  const eph = await other.exists('/mine');
  expect(eph?.ephemeralOwner).toBe(sessionId);
  await other.setData('/watched', 'after');
  await fired.atLeast(1, { timeoutMs: 10_000 });
  expect(fired).toEqual(['NodeDataChanged:/watched']);
}, 90_000);

test('a session whose client does not come back expires after its timeout, counted from the restart', async () => {
  const dir = join(root, 'gone');
  const port = await freePort();
  const first = await server(dir, port);
  const timeoutMs = 4000;
  const raw = await open(zookeeper(first.connectString), { timeoutMs });
  await raw.conn.send({
    type: OpCode.create,
    path: '/gone',
    data: null,
    acl: [{ perms: 31, id: { scheme: 'world', id: 'anyone' } }],
    flags: CreateMode.EPHEMERAL,
  });
  await first.kill('SIGKILL');
  // Stay down longer than the timeout: the clock must not have run while the server was down.
  await new Promise((r) => setTimeout(r, timeoutMs + 1000));
  const second = await server(dir, port);
  const restarted = performance.now();
  const watcher = client(second.connectString, 10_000);
  await watcher.start({ timeoutMs: 20_000 });
  expect(await watcher.exists('/gone')).not.toBeNull();
  let goneAfter = 0;
  await eventually(async () => {
    if ((await watcher.exists('/gone')) !== null) return false;
    goneAfter = performance.now() - restarted;
    return true;
  }, timeoutMs + 10_000);
  console.log(`the session that did not come back expired ${Math.round(goneAfter)} ms after the restart (timeout ${timeoutMs} ms)`);
  expect(goneAfter).toBeGreaterThanOrEqual(timeoutMs - 500);
  expect(goneAfter).toBeLessThan(timeoutMs + 5000);
}, 90_000);

test('1,000 sessions with an ephemeral each, in four processes, survive one SIGKILL and restart: 0 expired, 0 lost', async () => {
  const dir = join(root, 'thousand');
  const port = await freePort();
  const first = await server(dir, port);
  const setup = client(first.connectString, 20_000);
  await setup.start({ timeoutMs: 20_000 });
  await setup.create('/members');
  await setup.close();
  const script = fileURLToPath(new URL('./fixtures/session-holder.ts', import.meta.url));
  const tsconfig = fileURLToPath(new URL('./fixtures/tsconfig.json', import.meta.url));
  const holders: Array<{ child: ChildProcess; out: () => string }> = [];
  for (let p = 0; p < 4; p++) {
    const child = spawn(process.execPath, ['--import', 'tsx', script, first.connectString, `p${p}`, '250', '30000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    cleanup.push(() => child.kill('SIGKILL'));
    holders.push({ child, out: () => out });
  }
  const lastState = (h: { out: () => string }): [number, number] => {
    const m = [...h.out().matchAll(/state (\d+) (\d+)/g)].at(-1);
    return m ? [Number(m[1]), Number(m[2])] : [0, 0];
  };
  await eventually(() => holders.every((h) => h.out().includes('ready 250')), 120_000, 'the holders to be ready');
  const check = createClient({ connectString: first.connectString, sessionTimeoutMs: 20_000, retryPolicy: RetryPolicies.forever(100) });
  cleanup.push(() => check.close());
  await check.start({ timeoutMs: 20_000 });
  const owners = new Map(
    await Promise.all(
      (await check.getChildren('/members')).children.map(async (n) => [n, (await check.exists(`/members/${n}`))!.ephemeralOwner] as const),
    ),
  );
  expect(owners.size).toBe(1000);

  await first.kill('SIGKILL');
  const restartedAt = performance.now();
  await server(dir, port);
  const serving = performance.now() - restartedAt;
  const timeline: string[] = [];
  await eventually(
    () => {
      timeline.push(`${Math.round(performance.now() - restartedAt)}ms ${holders.map((h) => lastState(h).join('/')).join(' ')}`);
      return holders.every((h) => lastState(h)[0] === 250);
    },
    60_000,
    'every session to be connected again',
  );
  console.log(timeline.filter((_, i) => i % 40 === 0).join('\n'));
  const rejoinMs = performance.now() - restartedAt;
  await check.waitForState([ConnectionState.CONNECTED, ConnectionState.RECONNECTED], { timeoutMs: 20_000 });
  const after = (await check.getChildren('/members')).children;
  let lost = 0;
  for (const [n, owner] of owners) {
    const st = await check.exists(`/members/${n}`);
    if (st === null || st.ephemeralOwner !== owner) lost++;
  }
  const expired = holders.reduce((sum, h) => sum + lastState(h)[1], 0);
  console.log(
    `1,000 sessions across a SIGKILL: ${after.length} ephemerals after, ${lost} lost, ${expired} expired; serving again ${Math.round(serving)} ms after the kill, all reconnected after ${Math.round(rejoinMs)} ms`,
  );
  expect(lost).toBe(0);
  expect(expired).toBe(0);
  expect(after.length).toBe(1000);
}, 240_000);
