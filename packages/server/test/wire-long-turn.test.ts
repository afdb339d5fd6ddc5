/**
 * A turn longer than one early flush (wire-session.ts writes every 48 frames of a turn without
 * waiting for its end): 500 requests sent at once, on TCP and on WebSocket, come back whole, in
 * order, each with its own answer, across the several writes that turn makes.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { ErrorCode, OpCode, decodeReply, encodeRequestFrame, type Request } from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { create } from './harness.js';
import { LINKS, session, type WirePeer } from './wire-peer.js';

const N = 500;

describe.each(LINKS)('a long turn over $name', (link) => {
  let server: EmbeddedServer;
  let peer: WirePeer | undefined;
  afterEach(async () => {
    peer?.close();
    await server.close();
  });

  test(`${N} pipelined requests sent at once: every reply, in xid order, with its own answer`, async () => {
    server = createEmbeddedServer();
    peer = await session(await link.listen(server));
    // Creates of N/2 nodes, then a getData of each and of a node that does not exist, interleaved.
    const requests: Request[] = [];
    for (let i = 0; i < N / 2; i++) requests.push(create(`/n${i}`, Buffer.from(`data-${i}`)));
    for (let i = 0; i < N / 4; i++) {
      requests.push({ type: OpCode.getData, path: `/n${i}`, watch: false });
      requests.push({ type: OpCode.getData, path: `/missing-${i}`, watch: false });
    }
    const frames = requests.map((r, i) => encodeRequestFrame(i + 1, r));
    // TCP: one write of every frame; WebSocket: a message per frame (the design's rule), sent in one go.
    if (link.name === 'TCP') peer.send(Buffer.concat(frames));
    else for (const f of frames) peer.send(f);

    for (let i = 0; i < requests.length; i++) {
      const req = requests[i]!;
      const { header, response } = decodeReply((await peer.next()).subarray(4), req.type);
      expect(header.xid).toBe(i + 1);
      if (req.type === OpCode.create) {
        expect(header.err).toBe(ErrorCode.OK);
        expect(response).toMatchObject({ path: req.path });
      } else if (req.path.startsWith('/missing-')) {
        expect(header.err).toBe(ErrorCode.NONODE);
      } else {
        expect(header.err).toBe(ErrorCode.OK);
        expect((response as { data: Buffer }).data.toString()).toBe(`data-${req.path.slice(2)}`);
      }
    }
    expect(peer.messages).toHaveLength(1 + requests.length); // the handshake's answer, then one reply each
  });
});
