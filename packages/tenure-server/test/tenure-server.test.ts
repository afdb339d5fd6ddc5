/**
 * The tenure-server process, spawned: the installed bin (node_modules/.bin/tenure-server, built
 * dist) starts, serves, answers --help and exits 0 within 1 s of SIGTERM when idle; JSON logs;
 * config errors; in-memory mode; the limits under the process defaults; the metrics scrape under
 * ZooKeeper's names with sane values.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, lstatSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { OpCode } from '@tenure/protocol';
import { TenureServerProcess, sleep } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { create, open, tryOpen, type RawSession } from '../../server/test/harness.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'node_modules/.bin/tenure-server');
const dir = mkdtempSync(join(tmpdir(), 'tenure-server-'));

const running: TenureServerProcess[] = [];
const sessions: RawSession[] = [];
async function start(args: string[], command?: string[]): Promise<TenureServerProcess> {
  const p = await TenureServerProcess.start({ args, command });
  running.push(p);
  return p;
}
afterEach(async () => {
  for (const s of sessions.splice(0)) s.conn.close();
  await Promise.all(running.splice(0).map((p) => p.kill()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function word(port: number, w: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port });
    let out = '';
    s.on('data', (b: Buffer) => (out += b.toString()));
    s.on('error', reject);
    s.on('close', () => resolve(out));
    s.write(w);
  });
}

describe('the installed bin', () => {
  beforeAll(() => {
    // The bin runs dist: build this package (incremental; a no-op when it is current).
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'packages/tenure-server'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
  }, 120_000);

  test('npm linked node_modules/.bin/tenure-server to the committed launcher, and it is executable', () => {
    expect(lstatSync(BIN).isSymbolicLink()).toBe(true);
    expect(realpathSync(BIN)).toBe(join(ROOT, 'packages/tenure-server/bin/tenure-server.js'));
    accessSync(BIN, constants.X_OK);
  });

  test('--help lists the flags and exits 0; --version prints the version', () => {
    const help = execFileSync(BIN, ['--help'], { encoding: 'utf8' });
    for (const flag of [
      '--config',
      '--port',
      '--data-dir',
      '--log-level',
      '--metrics-port',
      '--max-client-cnxns',
      '--global-outstanding-limit',
      '--jute-maxbuffer',
      '--tick-time',
    ]) {
      expect(help).toContain(flag);
    }
    expect(execFileSync(BIN, ['--version'], { encoding: 'utf8' })).toMatch(/^tenure-server \d+\.\d+\.\d+\n$/);
  });

  test('starts, serves ZooKeeper clients, logs JSON lines, and exits 0 within 1 s of SIGTERM when idle', async () => {
    const p = await start(['--port', '0', '--host', '127.0.0.1', '--log-level', 'info'], [BIN]);
    const s = await open(zookeeper(p.connectString));
    expect((await s.conn.send(create('/from-bin', Buffer.from('hi')))).err).toBe(0);
    expect((await s.conn.send({ type: OpCode.getData, path: '/from-bin', watch: false })).response?.data?.toString()).toBe('hi');
    const closed = s.closed;
    s.conn.close();
    await closed;
    await sleep(100);
    const stopped = await p.stop('SIGTERM');
    expect(stopped.code).toBe(0);
    expect(stopped.ms).toBeLessThan(1000);
    expect(
      p.logs.every((l) => typeof l.level === 'number' && l.level > 0 && typeof l.time === 'number' && l.name === 'tenure-server'),
    ).toBe(true);
    expect(p.logs.map((l) => l.msg)).toEqual(expect.arrayContaining(['serving', 'shutting down', 'stopped']));
    expect(p.logs.find((l) => l.msg === 'shutting down')).toMatchObject({ signal: 'SIGTERM', level: 30 });
  });
});

describe('the process', () => {
  test('SIGINT with a client connected: the client is answered, then closed; exit 0', async () => {
    const p = await start([]);
    const s = await open(zookeeper(p.connectString));
    const pending = Array.from({ length: 50 }, (_, i) => s.conn.send(create(`/n${i}`)));
    const stopped = p.stop('SIGINT');
    // Whatever the server took in before the signal is answered; nothing after it is applied.
    const results = await Promise.allSettled(pending);
    await s.closed;
    expect((await stopped).code).toBe(0);
    const answered = results.filter((r) => r.status === 'fulfilled');
    for (const r of answered) expect((r as PromiseFulfilledResult<{ err: number }>).value.err).toBe(0);
  });

  test('in memory without a data dir: it says so, and a restart starts empty', async () => {
    const p = await start([]);
    expect(p.logs.some((l) => l.msg?.includes('kept in memory'))).toBe(true);
    const s = await open(zookeeper(p.connectString));
    expect((await s.conn.send(create('/gone'))).err).toBe(0);
    s.conn.close();
    expect((await p.stop()).code).toBe(0);
    const q = await start([]);
    const t = await open(zookeeper(q.connectString));
    sessions.push(t);
    expect((await t.conn.send({ type: OpCode.exists, path: '/gone', watch: false })).err).not.toBe(0);
  });

  test('with --data-dir the data outlives the process: SIGTERM syncs, a restart recovers it', async () => {
    const data = mkdtempSync(join(dir, 'data-'));
    const p = await start(['--data-dir', data, '--snap-count', '1000']);
    expect(p.logs.some((l) => l.msg?.includes('kept in memory'))).toBe(false);
    const s = await open(zookeeper(p.connectString));
    for (let i = 0; i < 20; i++) expect((await s.conn.send(create(`/kept${i}`, Buffer.from(`v${i}`)))).err).toBe(0);
    s.conn.close();
    const stopped = await p.stop('SIGTERM');
    expect(stopped.code).toBe(0);
    expect(stopped.ms).toBeLessThan(1000);
    const q = await start(['--data-dir', data]);
    expect(q.serving).toMatchObject({ dataDir: data, zxid: expect.stringMatching(/^0x[0-9a-f]+$/) });
    const t = await open(zookeeper(q.connectString));
    sessions.push(t);
    for (let i = 0; i < 20; i++)
      expect((await t.conn.send({ type: OpCode.getData, path: `/kept${i}`, watch: false })).response?.data?.toString()).toBe(`v${i}`);
  });

  test('a bad value exits 2 with one line naming the key; an unknown key is a JSON warning', async () => {
    const bad = join(dir, 'bad.cfg');
    writeFileSync(bad, 'clientPort=0\ntickTime=soon\n');
    const p = TenureServerProcess.spawn({ args: ['--config', bad] });
    expect((await p.exited).code).toBe(2);
    expect(p.stderr).toBe(`tenure-server: ${bad}:2: bad value for tickTime: "soon" is not a whole number\n`);

    const ensemble = join(dir, 'ensemble.cfg');
    writeFileSync(ensemble, 'clientPort=0\nserver.1=a:2888:3888\n');
    const e = TenureServerProcess.spawn({ args: ['--config', ensemble] });
    expect((await e.exited).code).toBe(2);
    expect(e.stderr).toMatch(/server\.1 is an ensemble setting; tenure-server is a standalone server/);

    const unknown = join(dir, 'unknown.cfg');
    writeFileSync(unknown, 'clientPort=0\nclientPortAddress=127.0.0.1\nshinyKey=1\n');
    const u = await start(['--config', unknown]);
    expect(u.logs.find((l) => l.level === 40)).toMatchObject({ msg: `${unknown}:3: unknown key shinyKey; ignored` });
  });

  test('a clientPortAddress that does not resolve exits 1 naming the address', async () => {
    const p = TenureServerProcess.spawn({ args: ['--host', 'no-such-host.invalid'] });
    expect((await p.exited).code).toBe(1);
    const fatal = p.logs.find((l) => l.level === 60);
    expect(JSON.stringify(fatal)).toContain('no-such-host.invalid');
  });

  test("ZooKeeper's process defaults: 60 connections per address, srvr the only four-letter word", async () => {
    const p = await start([]);
    const transport = zookeeper(p.connectString);
    const many = await Promise.all(Array.from({ length: 60 }, () => open(transport)));
    sessions.push(...many);
    await expect(tryOpen(transport)).rejects.toMatchObject({ name: 'ConnectionLossError' });
    await p.logged((l) => l.msg === 'Too many connections from /127.0.0.1 - max is 60' && l.level === 40);
    expect(await word(p.port, 'srvr')).toMatch(/^Zookeeper version: .*\nLatency min\/avg\/max/);
    expect(await word(p.port, 'mntr')).toBe('mntr is not executed because it is not in the whitelist.\n');
  });

  test('jute.maxbuffer from zoo.cfg: a larger request closes its connection, the session lives on', async () => {
    const cfg = join(dir, 'jute.cfg');
    writeFileSync(cfg, 'clientPort=0\nclientPortAddress=127.0.0.1\njute.maxbuffer=2048\n');
    const p = await start(['--config', cfg]);
    const transport = zookeeper(p.connectString);
    const s = await open(transport);
    await expect(s.conn.send(create('/big', Buffer.alloc(4096)))).rejects.toMatchObject({ name: 'ConnectionLossError' });
    const again = await open(transport, { sessionId: s.conn.sessionId, passwd: s.conn.passwd });
    sessions.push(again);
    expect(again.conn.sessionId).toBe(s.conn.sessionId);
  });

  test('metrics: Prometheus text at /metrics under ZooKeeper names, with sane values', async () => {
    const p = await start(['--metrics-port', '0', '--metrics-host', '127.0.0.1']);
    expect(p.metricsPort).toBeGreaterThan(0);
    const s = await open(zookeeper(p.connectString));
    sessions.push(s);
    expect((await s.conn.send(create('/m'))).err).toBe(0);
    expect((await s.conn.send(create('/m/e', Buffer.from('12345'), 1))).err).toBe(0);
    for (let i = 0; i < 20; i++) await s.conn.send({ type: OpCode.getData, path: '/m/e', watch: i === 0 });
    await s.conn.send({ type: OpCode.getChildren, path: '/m', watch: true });
    await s.conn.send({ type: OpCode.setData, path: '/m', data: Buffer.from('x'), version: -1 });

    const res = await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const value = (name: string): number => {
      const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
      if (m === null) throw new Error(`${name} is not in the scrape:\n${text.slice(0, 2000)}`);
      return Number(m[1]);
    };
    // As ZooKeeper's PrometheusMetricsProvider: help text = name, gauge and summary types.
    expect(text).toContain('# HELP znode_count znode_count\n# TYPE znode_count gauge\n');
    expect(text).toContain('# TYPE readlatency summary\n');
    // /, /zookeeper, /zookeeper/quota, /zookeeper/config, /m, /m/e
    expect(value('znode_count')).toBe(6);
    expect(value('ephemerals_count')).toBe(1);
    expect(value('watch_count')).toBe(2);
    expect(value('num_alive_connections')).toBe(1);
    expect(value('global_sessions')).toBe(1);
    expect(value('outstanding_requests')).toBe(0);
    expect(value('packets_received')).toBeGreaterThanOrEqual(24);
    expect(value('packets_sent')).toBeGreaterThanOrEqual(24);
    expect(value('approximate_data_size')).toBeGreaterThan(0);
    expect(value('uptime')).toBeGreaterThan(0);
    expect(value('open_file_descriptor_count')).toBeGreaterThan(0);
    expect(value('readlatency_count')).toBeGreaterThanOrEqual(21);
    expect(value('updatelatency_count')).toBe(3);
    expect(text).toMatch(/^readlatency\{quantile="0\.5"\} [\d.e-]+$/m);
    expect(text).toMatch(/^readlatency\{quantile="0\.99"\} [\d.e-]+$/m);
    expect(text).toMatch(/^updatelatency\{quantile="0\.9"\} [\d.e-]+$/m);
    expect(value('max_latency')).toBeGreaterThanOrEqual(value('min_latency'));
    expect(value('avg_latency')).toBeLessThan(1000);
    expect(value('fsynctime_count')).toBe(0); // in memory: nothing is synced
    expect(value('connection_rejected')).toBe(0);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    expect((await fetch(`http://127.0.0.1:${p.metricsPort}/nope`)).status).toBe(404);
  });
});
