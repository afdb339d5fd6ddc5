/**
 * The real-ZooKeeper harness: TestingServer lifecycle, dump(), expireSession, FaultProxy, and the
 * guarantee that no JVM outlives the test process.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  ConnectionLossError,
  CreateMode,
  OPEN_ACL_UNSAFE,
  OpCode,
  type ACL,
  type CloseReason,
  type Connection,
  type ConnectParams,
} from '@tenure/protocol';
import { zookeeper } from '@tenure/zookeeper';
import { ConnectionState, createClient } from '@tenure/client';
import { FaultProxy, TestingServer, eventually, expireSession, fourLetterWord, realZooKeeper, type ServerDump } from '@tenure/testing';

const zk = realZooKeeper();
const acl = OPEN_ACL_UNSAFE as ACL[];
const NEW: ConnectParams = { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 4000, readOnly: false };

async function connect(connectString: string, params: Partial<ConnectParams> = {}) {
  const closes: CloseReason[] = [];
  let onClosed!: (r: CloseReason) => void;
  const closed = new Promise<CloseReason>((r) => (onClosed = r));
  const t = zookeeper(connectString);
  const result = await t.connect(
    t.hosts[0]!,
    { ...NEW, ...params },
    {
      onEvent() {},
      onClose(r) {
        closes.push(r);
        onClosed(r);
      },
    },
  );
  if (result.kind !== 'connected') throw new Error('expired');
  return { connection: result.connection, closed, closes };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!zk.available)('TestingServer', () => {
  let server: TestingServer;
  beforeAll(async () => {
    server = await TestingServer.start({ maxSessionTimeout: 30_000 });
  });
  afterAll(async () => {
    await server?.close();
  });

  test('serves on a free loopback port with the test settings', async () => {
    expect(server.connectString).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(await fourLetterWord('127.0.0.1', server.port, 'ruok')).toBe('imok');
    const conf = await server.fourLetterWord('conf');
    expect(conf).toMatch(/tickTime=200/);
    expect(conf).toMatch(/maxClientCnxns=0/);
    expect(await server.fourLetterWord('srvr')).toMatch(/Mode: standalone/);
    if (existsSync('/dev/shm')) expect(server.directory.startsWith('/dev/shm/')).toBe(true);
    // Extended types (TTL nodes) are on.
    const { connection } = await connect(server.connectString);
    const ttl = await connection.send({
      type: OpCode.createTTL,
      path: '/ttl-check',
      data: null,
      acl,
      flags: CreateMode.PERSISTENT_WITH_TTL,
      ttl: 10_000n,
    });
    expect(ttl.err).toBe(0);
    connection.close();
  });

  test('dump() lists sessions with their ephemerals and watch counts', async () => {
    const a = await connect(server.connectString, { timeoutMs: 30_000 });
    const b = await connect(server.connectString, { timeoutMs: 30_000 });
    await a.connection.send({ type: OpCode.create, path: '/d', data: null, acl, flags: 0 });
    await a.connection.send({ type: OpCode.create, path: '/d/e1', data: null, acl, flags: CreateMode.EPHEMERAL });
    await a.connection.send({ type: OpCode.create, path: '/d/e2', data: null, acl, flags: CreateMode.EPHEMERAL });
    await b.connection.send({ type: OpCode.getData, path: '/d', watch: true });
    await b.connection.send({ type: OpCode.getChildren, path: '/d', watch: true });
    await b.connection.send({ type: OpCode.addWatch, path: '/elsewhere', mode: 1 });
    const dump = await server.dump();
    const sa = dump.sessions.find((s) => s.sessionId === a.connection.sessionId);
    const sb = dump.sessions.find((s) => s.sessionId === b.connection.sessionId);
    expect(sa).toMatchObject({ ephemerals: ['/d/e1', '/d/e2'], watches: 0 });
    expect(sb).toMatchObject({ ephemerals: [], watchedPaths: ['/d', '/elsewhere'], watches: 2 });
    expect(dump.totalWatches).toBeGreaterThanOrEqual(2);
    await a.connection.send({ type: OpCode.closeSession });
    await b.connection.send({ type: OpCode.closeSession });
    // The dump is read on another server thread, with no event to await: it may lag the close by a moment.
    const closed = (d: ServerDump): boolean =>
      !d.sessions.some((s) => s.sessionId === a.connection.sessionId || s.sessionId === b.connection.sessionId);
    await eventually(async () => closed(await server.dump()), 5000, 'closed sessions gone from dump');
  });

  test('expireSession closes the connection, deletes ephemerals, and later re-attach is expired', async () => {
    const a = await connect(server.connectString, { timeoutMs: 30_000 });
    await a.connection.send({ type: OpCode.create, path: '/gone', data: null, acl, flags: CreateMode.EPHEMERAL });
    await expireSession({ sessionId: a.connection.sessionId, sessionPassword: a.connection.passwd }, server);
    expect((await a.closed).kind).toBe('server');
    const watcher = await connect(server.connectString);
    expect((await watcher.connection.send({ type: OpCode.exists, path: '/gone', watch: false })).err).toBe(-101);
    const t = zookeeper(server.connectString);
    const again = await t.connect(
      t.hosts[0]!,
      { ...NEW, sessionId: a.connection.sessionId, passwd: a.connection.passwd },
      { onEvent() {}, onClose() {} },
    );
    expect(again.kind).toBe('expired');
    // Expiring an expired session is a no-op.
    await expireSession({ sessionId: a.connection.sessionId, passwd: a.connection.passwd }, server.connectString);
    watcher.connection.close();
  });

  test('expireSession(client) needs no target: it uses the servers the client connects to', async () => {
    const client = createClient({ connectString: `${server.connectString}/chrooted`, sessionTimeoutMs: 4000 });
    try {
      await client.start();
      const lost = client.waitForState(ConnectionState.LOST, { timeoutMs: 10_000 });
      const oldId = client.sessionId;
      await expireSession(client);
      await lost;
      await client.waitForState(ConnectionState.CONNECTED, { timeoutMs: 10_000 });
      expect(client.sessionId).not.toBe(oldId);
    } finally {
      await client.close();
    }
    await expect(expireSession({ sessionId: 1n, passwd: Buffer.alloc(16), hosts: ['embedded'] })).rejects.toThrow(/give a target/);
  });

  test('stop() and restart() keep the data and sessions; the port stays the same', async () => {
    const s = await TestingServer.start();
    try {
      const a = await connect(s.connectString, { timeoutMs: 4000 });
      await a.connection.send({ type: OpCode.create, path: '/kept', data: Buffer.from('x'), acl, flags: 0 });
      await s.stop();
      expect(s.running).toBe(false);
      expect(['server', 'network']).toContain((await a.closed).kind);
      await expect(connect(s.connectString)).rejects.toBeInstanceOf(ConnectionLossError);
      await s.restart();
      const b = await connect(s.connectString, { sessionId: a.connection.sessionId, passwd: a.connection.passwd });
      expect(b.connection.sessionId).toBe(a.connection.sessionId);
      expect((await b.connection.send({ type: OpCode.getData, path: '/kept', watch: false })).response!.data!.toString()).toBe('x');
      b.connection.close();
    } finally {
      await s.close();
    }
    expect(existsSync(s.directory)).toBe(false);
    await s.close();
  });

  test('a JVM never outlives its test process, even one killed with SIGKILL', async () => {
    const script = fileURLToPath(new URL('./fixtures/start-server.ts', import.meta.url));
    const tsconfig = fileURLToPath(new URL('./fixtures/tsconfig.json', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
    });
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /port=(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.on('exit', (code) => reject(new Error(`fixture exited with ${code}`)));
    });
    expect(await fourLetterWord('127.0.0.1', port, 'ruok')).toBe('imok');
    child.kill('SIGKILL');
    let alive = true;
    for (let i = 0; i < 100 && alive; i++) {
      await sleep(100);
      alive = await fourLetterWord('127.0.0.1', port, 'ruok', 500).then(
        () => true,
        () => false,
      );
    }
    expect(alive).toBe(false);
  });
});

describe.skipIf(!zk.available)('FaultProxy in front of a real server', () => {
  let server: TestingServer;
  let proxy: FaultProxy;
  const conns: Connection[] = [];
  beforeAll(async () => {
    server = await TestingServer.start({ maxSessionTimeout: 30_000 });
  });
  afterAll(async () => {
    for (const c of conns) c.close();
    await proxy?.close();
    await server?.close();
  });

  test('passes traffic; blackhole silences both ways until heal, losing nothing', async () => {
    proxy = await FaultProxy.start(server.connectString);
    const a = await connect(proxy.address, { timeoutMs: 10_000 });
    conns.push(a.connection);
    expect(proxy.connections.length).toBe(1);
    expect((await a.connection.send({ type: OpCode.exists, path: '/', watch: false })).err).toBe(0);
    proxy.blackhole();
    let answered = false;
    const pending = a.connection.send({ type: OpCode.exists, path: '/', watch: false }).then((r) => ((answered = true), r));
    await sleep(300);
    expect(answered).toBe(false);
    // A new connection during the blackhole gets no handshake answer either.
    const ac = new AbortController();
    const t = zookeeper(proxy.address);
    const attempt = t.connect(t.hosts[0]!, { ...NEW, signal: ac.signal }, { onEvent() {}, onClose() {} });
    await sleep(200);
    ac.abort();
    await expect(attempt).rejects.toMatchObject({ name: 'AbortError' });
    proxy.heal();
    expect((await pending).err).toBe(0);
    expect(a.connection.closed).toBe(false);
  });

  test('reset sends RST: the client sees a network close; new connections still work', async () => {
    const a = await connect(proxy.address, { timeoutMs: 10_000 });
    const pending = a.connection.send({ type: OpCode.sync, path: '/' });
    proxy.blackhole();
    void pending.catch(() => {});
    proxy.reset();
    proxy.heal();
    expect((await a.closed).kind).toBe('network');
    await expect(pending).rejects.toBeInstanceOf(ConnectionLossError);
    const b = await connect(proxy.address, { timeoutMs: 10_000 });
    conns.push(b.connection);
    expect((await b.connection.send({ type: OpCode.exists, path: '/', watch: false })).err).toBe(0);
  });

  test('delay holds each direction back; faults apply per connection', async () => {
    const a = await connect(proxy.address, { timeoutMs: 10_000 });
    const b = await connect(proxy.address, { timeoutMs: 10_000 });
    conns.push(a.connection, b.connection);
    const [pa, pb] = proxy.connections.slice(-2);
    pa!.delay(150);
    pb!.blackhole();
    const started = Date.now();
    expect((await a.connection.send({ type: OpCode.exists, path: '/', watch: false })).err).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    let bAnswered = false;
    const bp = b.connection.send({ type: OpCode.exists, path: '/', watch: false }).then(() => (bAnswered = true));
    await sleep(200);
    expect(bAnswered).toBe(false);
    pb!.heal();
    await bp;
    expect(bAnswered).toBe(true);
  });
});
