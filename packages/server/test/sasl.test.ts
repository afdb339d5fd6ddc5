/**
 * The server's SASL (OpCode.sasl, DIGEST-MD5 against `sasl.users`) packet by packet, over the
 * in-process transport and over TCP; the `sasl` ACL scheme; and the re-attach rule: a session that
 * re-attaches on a new connection has its old connection closed (the old TCP socket sees the close).
 */
import { afterEach, describe, expect, test } from 'vitest';
import { connect as netConnect } from 'node:net';
import { DigestMd5Client, ErrorCode, OpCode, Perms, type ACL, type Connection, type Transport } from '@tenure/protocol';
import { zookeeper } from '@tenure/zookeeper';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { open } from './harness.js';

let server: EmbeddedServer;
afterEach(async () => {
  await server?.close();
});

const USERS = { bob: 'secret', alice: 'alicesecret' };
const bobOnly: ACL[] = [{ perms: Perms.ALL, id: { scheme: 'sasl', id: 'bob' } }];

async function sasl(conn: Connection, username: string, password: string): Promise<number> {
  const c = new DigestMd5Client({ username, password });
  const first = await conn.send({ type: OpCode.sasl, token: Buffer.alloc(0) });
  if (first.err !== 0) return first.err;
  const second = await conn.send({ type: OpCode.sasl, token: Buffer.from(c.evaluateChallenge(first.response!.token!)!) });
  if (second.err !== 0) return second.err;
  expect(c.evaluateChallenge(second.response!.token!)).toBeNull();
  expect(c.complete).toBe(true);
  return 0;
}

async function whoAmI(conn: Connection): Promise<string[]> {
  const r = await conn.send({ type: OpCode.whoAmI });
  return r.response!.clientInfo.map((c) => `${c.authScheme}:${c.user}`);
}

describe.each<['in-process' | 'tcp']>([['in-process'], ['tcp']])('SASL DIGEST-MD5 (%s)', (kind) => {
  async function transport(options: Parameters<typeof createEmbeddedServer>[0] = { sasl: { users: USERS } }): Promise<Transport> {
    server = createEmbeddedServer({ tickMs: 200, ...options });
    if (kind === 'in-process') return server.transport();
    return zookeeper((await server.listen({ port: 0 })).connectString);
  }

  test('bob authenticates as sasl:bob; a sasl:bob ACL admits bob only', async () => {
    const t = await transport();
    const bob = await open(t);
    expect(await sasl(bob.conn, 'bob', 'secret')).toBe(0);
    expect(await whoAmI(bob.conn)).toEqual(['ip:127.0.0.1', 'sasl:bob']);
    const made = await bob.conn.send({ type: OpCode.create, path: '/bob', data: Buffer.from('x'), acl: bobOnly, flags: 0 });
    expect(made.err).toBe(0);
    expect((await bob.conn.send({ type: OpCode.getData, path: '/bob', watch: false })).response?.data).toEqual(Buffer.from('x'));
    // 'auth' expands to the SASL identity, as ZooKeeper's fixupACL does.
    await bob.conn.send({
      type: OpCode.create,
      path: '/auth',
      data: null,
      acl: [{ perms: Perms.READ, id: { scheme: 'auth', id: '' } }],
      flags: 0,
    });
    expect((await bob.conn.send({ type: OpCode.getACL, path: '/auth' })).response?.acl).toEqual([
      { perms: Perms.READ, id: { scheme: 'sasl', id: 'bob' } },
    ]);

    const alice = await open(t);
    expect(await sasl(alice.conn, 'alice', 'alicesecret')).toBe(0);
    const nobody = await open(t);
    for (const c of [alice.conn, nobody.conn]) {
      expect((await c.send({ type: OpCode.getData, path: '/bob', watch: false })).err).toBe(ErrorCode.NOAUTH);
      expect((await c.send({ type: OpCode.setData, path: '/bob', data: null, version: -1 })).err).toBe(ErrorCode.NOAUTH);
      expect((await c.send({ type: OpCode.getData, path: '/auth', watch: false })).err).toBe(ErrorCode.NOAUTH);
    }
  });

  test('a wrong password and an unknown user are answered AUTHFAILED, then the connection closes', async () => {
    const t = await transport();
    for (const [u, p] of [
      ['bob', 'wrong'],
      ['mallory', 'secret'],
    ] as const) {
      const s = await open(t);
      expect(await sasl(s.conn, u, p)).toBe(ErrorCode.AUTHFAILED);
      expect((await s.closed).kind).toBe('server');
    }
    // The server goes on serving.
    const ok = await open(t);
    expect(await sasl(ok.conn, 'bob', 'secret')).toBe(0);
  });

  test('garbage tokens and a server without users are refused without harm', async () => {
    const t = await transport();
    const a = await open(t);
    expect((await a.conn.send({ type: OpCode.sasl, token: Buffer.from('not empty') })).err).toBe(ErrorCode.AUTHFAILED);
    const b = await open(t);
    await b.conn.send({ type: OpCode.sasl, token: Buffer.alloc(0) });
    expect((await b.conn.send({ type: OpCode.sasl, token: Buffer.from([0xff, 0x00, 0x22]) })).err).toBe(ErrorCode.AUTHFAILED);
    const c = await open(t);
    await c.conn.send({ type: OpCode.sasl, token: Buffer.alloc(0) });
    expect((await c.conn.send({ type: OpCode.sasl, token: null })).err).toBe(ErrorCode.AUTHFAILED);
    await server.close();

    const t2 = await transport({});
    const d = await open(t2);
    expect((await d.conn.send({ type: OpCode.sasl, token: Buffer.alloc(0) })).err).toBe(ErrorCode.AUTHFAILED);
    expect((await d.closed).kind).toBe('server');
  });

  test('a sasl ACL id is validated as ZooKeeper does (user, user/host@REALM)', async () => {
    const t = await transport();
    const s = await open(t);
    const mk = (path: string, id: string) =>
      s.conn.send({ type: OpCode.create, path, data: null, acl: [{ perms: Perms.ALL, id: { scheme: 'sasl', id } }], flags: 0 });
    expect((await mk('/a', 'svc/host@EXAMPLE.COM')).err).toBe(0);
    expect((await mk('/b', 'a@b@c')).err).toBe(ErrorCode.INVALIDACL);
  });
});

describe('re-attach', () => {
  test("over TCP, a re-attach closes the session's old connection first: its socket sees the close", async () => {
    server = createEmbeddedServer({ tickMs: 200 });
    const { port, connectString } = await server.listen({ port: 0 });
    const t = zookeeper(connectString);
    const a = await open(t);
    // A raw socket bound to the same session, to watch the server's FIN itself.
    const raw = netConnect({ port, host: '127.0.0.1' });
    const rawClosed = new Promise<string>((resolve) => {
      raw.on('end', () => resolve('end'));
      raw.on('close', () => resolve('close'));
      raw.on('error', () => {});
    });
    const { encodeConnectRequest, frame } = await import('@tenure/protocol');
    const hello = (sessionId: bigint, passwd: Buffer) =>
      frame(encodeConnectRequest({ protocolVersion: 0, lastZxidSeen: 0n, timeOut: 4000, sessionId, passwd, readOnly: false }));
    let rawBytes = 0;
    raw.on('data', (c: Buffer) => (rawBytes += c.length));
    raw.write(hello(a.conn.sessionId, a.conn.passwd));
    // The raw re-attach takes the session over: the transport's connection is closed by the server.
    expect((await a.closed).kind).toBe('server');
    await expect.poll(() => rawBytes).toBeGreaterThan(0);
    // A wrong password is refused and leaves the raw connection alone.
    const wrong = Buffer.from(a.conn.passwd);
    wrong[0] = wrong[0]! ^ 1;
    const refused = await t.connect(
      t.hosts[0]!,
      { sessionId: a.conn.sessionId, passwd: wrong, lastZxidSeen: 0n, timeoutMs: 4000, readOnly: false },
      { onEvent() {}, onClose() {} },
    );
    expect(refused.kind).toBe('expired');
    expect(raw.readableEnded).toBe(false);
    // The right password, on a third connection: the raw socket sees the server close it.
    const b = await open(t, { sessionId: a.conn.sessionId, passwd: a.conn.passwd });
    expect(await rawClosed).toMatch(/end|close/);
    expect(b.conn.sessionId).toBe(a.conn.sessionId);
    await expect.poll(() => server.connectionCount).toBe(1);
    expect((await b.conn.send({ type: OpCode.exists, path: '/', watch: false })).err).toBe(0);
    raw.destroy();
  });
});
