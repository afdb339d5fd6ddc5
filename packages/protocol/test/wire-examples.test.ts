/** Byte-exact checks against the examples of docs/zookeeper-wire-protocol.md (§2.2, §2.3, §4.6, §7). */
import { describe, expect, it } from 'vitest';
import {
  CreateMode,
  EventType,
  KeeperState,
  OPEN_ACL_UNSAFE,
  OpCode,
  Xid,
  decodeConnectRequest,
  decodeConnectResponse,
  decodeReply,
  decodeReplyHeader,
  decodeRequest,
  decodeWatcherEvent,
  encodeConnectRequest,
  encodeConnectResponse,
  encodeNotification,
  encodeNotificationFrame,
  encodeReply,
  encodeRequest,
  encodeRequestFrame,
  frame,
  FrameReader,
  type Request,
} from '@tenure/protocol';
import { hex, toHex } from './hex.js';

/** Checks both framing routes and that the frame decodes back to the request. */
function expectRequestFrame(xid: number, req: Request, expected: string): void {
  const want = hex(expected);
  expect(toHex(frame(encodeRequest(xid, req)))).toBe(toHex(want));
  expect(toHex(encodeRequestFrame(xid, req))).toBe(toHex(want));
  const [payload] = new FrameReader().push(want);
  expect(decodeRequest(payload!)).toEqual({ header: { xid, type: req.type }, request: req });
}

describe('docs/zookeeper-wire-protocol.md §7 examples', () => {
  it('ping request and reply', () => {
    expectRequestFrame(Xid.ping, { type: OpCode.ping }, '00 00 00 08 ff ff ff fe 00 00 00 0b');
    const reply = frame(encodeReply({ xid: Xid.ping, zxid: 0x1234n, err: 0 }, OpCode.ping));
    expect(toHex(reply)).toBe(toHex(hex('00 00 00 10 ff ff ff fe 00 00 00 00 00 00 12 34 00 00 00 00')));
    expect(decodeReply(reply.subarray(4), OpCode.ping)).toEqual({
      header: { xid: -2, zxid: 0x1234n, err: 0 },
      response: undefined,
    });
  });

  it('getData("/foo", watch) xid 1', () => {
    expectRequestFrame(
      1,
      { type: OpCode.getData, path: '/foo', watch: true },
      '00 00 00 11 00 00 00 01 00 00 00 04 00 00 00 04 2f 66 6f 6f 01',
    );
  });

  it('create("/app", "hi", world:anyone ALL, PERSISTENT) xid 2', () => {
    expectRequestFrame(
      2,
      {
        type: OpCode.create,
        path: '/app',
        data: Buffer.from('hi'),
        acl: [...OPEN_ACL_UNSAFE],
        flags: CreateMode.PERSISTENT,
      },
      `00 00 00 35 00 00 00 02 00 00 00 01 | 00 00 00 04 2f 61 70 70 | 00 00 00 02 68 69 | 00 00 00 01 |
       00 00 00 1f | 00 00 00 05 77 6f 72 6c 64 | 00 00 00 06 61 6e 79 6f 6e 65 | 00 00 00 00`,
    );
  });

  it('auth digest "bob:secret"', () => {
    expectRequestFrame(
      Xid.auth,
      { type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from('bob:secret') },
      `00 00 00 24 ff ff ff fc 00 00 00 64 | 00 00 00 00 | 00 00 00 06 64 69 67 65 73 74 |
       00 00 00 0a 62 6f 62 3a 73 65 63 72 65 74`,
    );
  });

  it('multi [check("/a",3), delete("/a",3)] xid 3', () => {
    expectRequestFrame(
      3,
      {
        type: OpCode.multi,
        ops: [
          { type: OpCode.check, path: '/a', version: 3 },
          { type: OpCode.delete, path: '/a', version: 3 },
        ],
      },
      `00 00 00 37 00 00 00 03 00 00 00 0e | 00 00 00 0d 00 ff ff ff ff 00 00 00 02 2f 61 00 00 00 03 |
       00 00 00 02 00 ff ff ff ff 00 00 00 02 2f 61 00 00 00 03 | ff ff ff ff 01 ff ff ff ff`,
    );
  });

  it('closeSession xid 4', () => {
    expectRequestFrame(4, { type: OpCode.closeSession }, '00 00 00 08 00 00 00 04 ff ff ff f5');
  });

  it('notification NodeDataChanged on /foo (3.8: zxid -1)', () => {
    const want = hex(
      '00 00 00 20 | ff ff ff ff | ff ff ff ff ff ff ff ff | 00 00 00 00 | 00 00 00 03 | 00 00 00 03 | 00 00 00 04 2f 66 6f 6f',
    );
    const event = { type: EventType.NodeDataChanged, state: KeeperState.SyncConnected, path: '/foo' };
    expect(toHex(frame(encodeNotification(-1n, event)))).toBe(toHex(want));
    expect(toHex(encodeNotificationFrame(-1n, event))).toBe(toHex(want));
    const payload = want.subarray(4);
    expect(decodeReplyHeader(payload)).toEqual({ xid: -1, zxid: -1n, err: 0 });
    expect(decodeWatcherEvent(payload, 16)).toEqual(event);
  });

  it('empty multi reply is just the terminator (9 bytes after the header)', () => {
    const reply = encodeReply({ xid: 7, zxid: 5n, err: 0 }, OpCode.multi, { results: [] });
    expect(reply.length).toBe(16 + 9);
    expect(toHex(reply.subarray(16))).toBe(toHex(hex('ff ff ff ff 01 ff ff ff ff')));
  });
});

describe('handshake sizes (§2.2, §2.3)', () => {
  const request = {
    protocolVersion: 0,
    lastZxidSeen: 0n,
    timeOut: 30000,
    sessionId: 0n,
    passwd: Buffer.alloc(16),
    readOnly: false,
  };

  it('ConnectRequest is 45 bytes (frame 49) and matches the §2.2 example', () => {
    const payload = encodeConnectRequest(request);
    expect(payload.length).toBe(45);
    expect(frame(payload).length).toBe(49);
    expect(toHex(frame(payload))).toBe(
      toHex(
        hex(`00 00 00 2d | 00 00 00 00 | 00 00 00 00 00 00 00 00 | 00 00 75 30 | 00 00 00 00 00 00 00 00 |
             00 00 00 10 | 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 | 00`),
      ),
    );
    expect(decodeConnectRequest(payload)).toEqual(request);
  });

  it('a 44-byte ConnectRequest (no readOnly byte) decodes with readOnly false', () => {
    const payload = encodeConnectRequest({ ...request, readOnly: true }, false);
    expect(payload.length).toBe(44);
    expect(decodeConnectRequest(payload)).toEqual({ ...request, readOnly: false });
  });

  const response = {
    protocolVersion: 0,
    timeOut: 4000,
    sessionId: 0x0100_0000_0000_0001n,
    passwd: Buffer.from('0123456789abcdef'),
    readOnly: true,
  };

  it('ConnectResponse is 37 bytes (frame 41)', () => {
    const payload = encodeConnectResponse(response);
    expect(payload.length).toBe(37);
    expect(frame(payload).length).toBe(41);
    expect(decodeConnectResponse(payload)).toEqual(response);
  });

  it('a 36-byte ConnectResponse decodes with readOnly false', () => {
    const payload = encodeConnectResponse(response, false);
    expect(payload.length).toBe(36);
    expect(decodeConnectResponse(payload)).toEqual({ ...response, readOnly: false });
  });

  it('the expired-session answer: timeout 0, id 0, 16 zero bytes', () => {
    const expired = { protocolVersion: 0, timeOut: 0, sessionId: 0n, passwd: Buffer.alloc(16), readOnly: false };
    expect(toHex(encodeConnectResponse(expired))).toBe(
      toHex(Buffer.concat([hex('00000000 00000000 0000000000000000 00000010'), Buffer.alloc(17)])),
    );
  });
});
