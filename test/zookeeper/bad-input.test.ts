/**
 * Bad input through the client: a fake server that speaks the handshake correctly, then answers
 * with random, truncated and oversized frames. The client must report a typed protocol error,
 * reconnect (re-attaching its session), finish the operation once the server behaves, and never crash.
 */
import { afterEach, expect, it } from 'vitest';
import { ConnectionState, type Client } from '@tenure/client';
import { OpCode, ProtocolError, encodeReplyFrame, type Stat } from '@tenure/protocol';
import { FakeServer, type FakePeer } from '../../packages/zookeeper/test/fake-server.js';
import { connect } from './harness.js';

const stat: Stat = {
  czxid: 1n,
  mzxid: 1n,
  ctime: 0,
  mtime: 0,
  version: 0,
  cversion: 0,
  aversion: 0,
  ephemeralOwner: 0n,
  dataLength: 2,
  numChildren: 0,
  pzxid: 1n,
};

const BAD: Record<string, Buffer> = {
  random: Buffer.from([0x00, 0x00, 0x00, 0x09, 0xde, 0xad, 0xbe, 0xef, 0x13, 0x37, 0x42, 0x00, 0x7f]),
  truncated: (() => {
    // A getData reply whose length prefix covers the header and only half the body.
    const f = encodeReplyFrame({ xid: 0, zxid: 1n, err: 0 }, OpCode.getData, { data: Buffer.from('ok'), stat });
    const cut = Buffer.from(f.subarray(0, 40));
    cut.writeInt32BE(cut.length - 4, 0);
    return cut;
  })(),
  oversized: Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
};

let server: FakeServer | undefined;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

it('random, truncated and oversized frames: typed protocol errors, reconnects, the operation completes, no crash', async () => {
  // Per connection, how getData is answered: each bad answer must cost only that connection.
  const plan = ['random', 'truncated', 'oversized', 'good'];
  let connections = 0;
  server = await FakeServer.start(async (peer: FakePeer) => {
    const mode = plan[Math.min(connections++, plan.length - 1)]!;
    const req = await peer.connectRequest();
    peer.accept({ sessionId: req.sessionId === 0n ? 0x4242n : req.sessionId, timeOut: req.timeOut });
    for (;;) {
      const { header, request } = await peer.nextRequest().catch(() => ({ header: undefined, request: undefined }));
      if (!header || !request) return;
      if (header.xid === -2) {
        peer.socket.write(encodeReplyFrame({ xid: -2, zxid: 1n, err: 0 }, OpCode.ping));
      } else if (header.type === OpCode.getData && mode !== 'good') {
        const bad = Buffer.from(BAD[mode]!);
        if (mode === 'truncated') bad.writeInt32BE(header.xid, 4);
        peer.socket.write(bad);
      } else if (header.type === OpCode.getData) {
        peer.socket.write(encodeReplyFrame({ xid: header.xid, zxid: 2n, err: 0 }, OpCode.getData, { data: Buffer.from('ok'), stat }));
      } else if (header.type === OpCode.closeSession) {
        peer.socket.write(encodeReplyFrame({ xid: header.xid, zxid: 3n, err: 0 }, OpCode.closeSession));
        peer.socket.end();
        return;
      } else {
        // Anything else (SetWatches, exists, ...) is answered with an empty success the op allows.
        peer.socket.write(
          encodeReplyFrame(
            { xid: header.xid, zxid: 2n, err: 0 },
            header.type === OpCode.exists ? OpCode.exists : OpCode.setWatches,
            header.type === OpCode.exists ? { stat } : undefined,
          ),
        );
      }
    }
  });

  const { client, states, logs } = await connect(server.address, { sessionTimeoutMs: 4000, connectionTimeoutMs: 5000 });
  clients.push(client);
  const { data } = await client.getData('/x');
  expect(data.toString()).toBe('ok');
  expect(connections).toBe(4);
  expect(client.sessionId).toBe(0x4242n);
  expect(states[0]).toBe(ConnectionState.CONNECTED);
  expect(states).toContain(ConnectionState.SUSPENDED);
  expect(states.at(-1)).toBe(ConnectionState.RECONNECTED);
  expect(states).not.toContain(ConnectionState.LOST);

  // Each bad frame closed its connection with a protocol error the client reported...
  const why = logs.map(([, obj]) => (obj as { why?: unknown } | undefined)?.why).filter((w): w is string => typeof w === 'string');
  expect(why.filter((w) => /shorter than a reply header|truncated|exceeds the limit/.test(w))).toHaveLength(3);
  // ...as a typed ProtocolError (the transport's CloseReason.error), not only as text.
  const reported = logs.flatMap(([, obj]) => {
    const o = obj as { err?: unknown; error?: unknown; reason?: { error?: unknown } } | undefined;
    return [o?.err, o?.error, o?.reason?.error].filter((e): e is ProtocolError => e instanceof ProtocolError);
  });
  expect(reported.length).toBe(3);
});
