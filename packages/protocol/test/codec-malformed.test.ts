/** Bad bytes give a typed ProtocolError: never a RangeError, never a hang, never a half-decoded record. */
import { describe, expect, it } from 'vitest';
import {
  OpCode,
  ProtocolError,
  UnknownOpError,
  decodeConnectRequest,
  decodeConnectResponse,
  decodeReply,
  decodeReplyHeader,
  decodeRequest,
  decodeResponse,
  decodeWatcherEvent,
  encodeConnectRequest,
  encodeConnectResponse,
  encodeNotification,
  encodeReply,
  encodeRequest,
  type Request,
} from '@tenure/protocol';
import { requestCases, responseCases, stat } from './fixtures.js';
import { hex } from './hex.js';

function expectProtocolError(fn: () => unknown): ProtocolError {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown, 'expected a ProtocolError').toBeInstanceOf(ProtocolError);
  return thrown as ProtocolError;
}

describe('truncated records', () => {
  it.each(requestCases)('every strict prefix of a %s request fails', (_name, req) => {
    const payload = encodeRequest(5, req);
    for (let n = 0; n < payload.length; n++) {
      const err = expectProtocolError(() => decodeRequest(payload.subarray(0, n)));
      // Once the 8-byte header is there, the error names it so a server can answer with the xid.
      if (n >= 8) expect(err.header).toEqual({ xid: 5, type: req.type });
      else expect(err.header).toBeUndefined();
    }
  });

  it.each(responseCases)('every strict prefix of a %s reply fails', (_name, opType, res) => {
    const payload = encodeReply({ xid: 5, zxid: 6n, err: 0 }, opType, res);
    // The 100 KiB case: checking every prefix would be slow, so sample.
    const step = payload.length > 4096 ? 997 : 1;
    for (let n = 0; n < payload.length; n += step) expectProtocolError(() => decodeReply(payload.subarray(0, n), opType));
  });

  it('connect records shorter than their fixed part fail; the readOnly byte is optional', () => {
    const req = encodeConnectRequest({
      protocolVersion: 0,
      lastZxidSeen: 1n,
      timeOut: 30000,
      sessionId: 2n,
      passwd: Buffer.alloc(16),
      readOnly: true,
    });
    for (let n = 0; n < 44; n++) expectProtocolError(() => decodeConnectRequest(req.subarray(0, n)));
    expect(decodeConnectRequest(req.subarray(0, 44)).readOnly).toBe(false);
    const res = encodeConnectResponse({ protocolVersion: 0, timeOut: 4000, sessionId: 2n, passwd: Buffer.alloc(16), readOnly: true });
    for (let n = 0; n < 36; n++) expectProtocolError(() => decodeConnectResponse(res.subarray(0, n)));
    expect(decodeConnectResponse(res.subarray(0, 36)).readOnly).toBe(false);
  });

  it('a truncated notification fails', () => {
    const payload = encodeNotification(-1n, { type: 3, state: 3, path: '/foo' });
    for (let n = 0; n < payload.length; n++) {
      expectProtocolError(() => {
        decodeReplyHeader(payload.subarray(0, n));
        decodeWatcherEvent(payload.subarray(0, n), 16);
      });
    }
  });

  it('a multi without its terminator fails', () => {
    const payload = encodeRequest(1, { type: OpCode.multi, ops: [{ type: OpCode.delete, path: '/a', version: 1 }] });
    expectProtocolError(() => decodeRequest(payload.subarray(0, payload.length - 9)));
    const reply = encodeReply({ xid: 1, zxid: 1n, err: 0 }, OpCode.multi, { results: [{ type: OpCode.delete }] });
    expectProtocolError(() => decodeReply(reply.subarray(0, reply.length - 9), OpCode.multi));
  });
});

describe('bad lengths', () => {
  const getData = (len: string) => hex(`00000001 00000004 ${len} 2f61 00`);
  it.each([
    ['-2', 'fffffffe'],
    ['-2147483648', '80000000'],
    ['2147483647', '7fffffff'],
    ['one past the end', '00000003'],
  ])('path length %s', (_n, len) => {
    expect(expectProtocolError(() => decodeRequest(getData(len))).header).toEqual({ xid: 1, type: 4 });
  });

  it('a null path is refused', () => {
    expectProtocolError(() => decodeRequest(hex('00000001 00000004 ffffffff 00')));
    expectProtocolError(() => decodeRequest(hex('00000001 00000002 ffffffff 00000000'))); // delete
  });

  it.each([
    ['-2', 'fffffffe'],
    ['2147483647', '7fffffff'],
    ['-2147483648', '80000000'],
  ])('data length %s in a getData reply', (_n, len) => {
    const payload = Buffer.concat([hex(`00000001 0000000000000005 00000000 ${len} 6869`), Buffer.alloc(68)]);
    expectProtocolError(() => decodeReply(payload, OpCode.getData));
  });

  it('a negative buffer length in a create request', () => {
    expectProtocolError(() => decodeRequest(hex('00000001 00000001 00000002 2f61 fffffffe 00000000 00000000')));
  });

  it('a negative path length in a notification', () => {
    expectProtocolError(() => decodeWatcherEvent(hex('00000003 00000003 fffffff0'), 0));
    expectProtocolError(() => decodeWatcherEvent(hex('00000003 00000003 ffffffff'), 0));
  });
});

describe('hostile vector counts', () => {
  const header = { xid: 1, zxid: 1n, err: 0 };
  it.each([
    ['2^31-1 children', OpCode.getChildren, '7fffffff'],
    ['2^31-1 ephemerals', OpCode.getEphemerals, '7fffffff'],
    ['2^31-1 client infos', OpCode.whoAmI, '7fffffff'],
    ['2^31-1 ACLs', OpCode.getACL, '7fffffff'],
    ['-2 children', OpCode.getChildren, 'fffffffe'],
    ['-2147483648 children', OpCode.getChildren, '80000000'],
    ['a count just past what the bytes can hold', OpCode.getChildren, '00000003'],
  ])('%s', (_n, opType, count) => {
    const payload = Buffer.concat([encodeReply({ ...header, err: 1 }, opType), hex(count), hex('00000000 00000000')]);
    payload.writeInt32BE(0, 12); // err 0: the body is read
    const t0 = Date.now();
    expectProtocolError(() => decodeReply(payload, opType));
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('a setWatches list with 2^31-1 paths', () => {
    expectProtocolError(() => decodeRequest(hex('00000001 00000065 0000000000000000 7fffffff 00000001 2f')));
  });

  it('a create with 2^31-1 ACLs', () => {
    expectProtocolError(() => decodeRequest(hex('00000001 00000001 00000002 2f61 00000000 7fffffff 00000000')));
  });

  it('100k multi entries without a terminator end at the frame end', () => {
    const N = 100_000;
    const ops = Buffer.concat(Array.from({ length: N }, () => hex('0000000d 00 ffffffff 00000000 00000000'))); // check("", 0)
    expectProtocolError(() => decodeRequest(Buffer.concat([hex('00000001 0000000e'), ops])));
    const results = Buffer.concat(Array.from({ length: N }, () => hex('00000002 00 00000000'))); // delete OK
    expectProtocolError(() => decodeReply(Buffer.concat([hex('00000001 0000000000000001 00000000'), results]), OpCode.multi));
    // With the terminator the same bytes decode.
    const terminated = Buffer.concat([hex('00000001 0000000000000001 00000000'), results, hex('ffffffff 01 ffffffff')]);
    expect((decodeReply(terminated, OpCode.multi).response as { results: unknown[] }).results).toHaveLength(N);
  });
});

describe('unknown op codes', () => {
  it.each([0, 10, 20, 23, 99, 108, -10, -1, 2147483647, -2147483648])('request op %i → UnknownOpError with the header', (type) => {
    const payload = Buffer.concat([hex('0000002a'), Buffer.alloc(4), hex('00000002 2f61')]);
    payload.writeInt32BE(type, 4);
    const err = expectProtocolError(() => decodeRequest(payload));
    expect(err).toBeInstanceOf(UnknownOpError);
    expect(err.header).toEqual({ xid: 42, type });
    expect((err as UnknownOpError).opType).toBe(type);
  });

  it('a known op with a broken body is a ProtocolError, not UnknownOpError', () => {
    const err = expectProtocolError(() => decodeRequest(hex('00000007 00000005 00000002 2f')));
    expect(err).not.toBeInstanceOf(UnknownOpError);
    expect(err.header).toEqual({ xid: 7, type: 5 });
  });

  it.each([0, 10, 20, 23, 999, -1, -10])('decodeReply / decodeResponse / encodeReply for op %i', (opType) => {
    const payload = encodeReply({ xid: 1, zxid: 1n, err: 0 }, OpCode.ping);
    expectProtocolError(() => decodeReply(payload, opType));
    expectProtocolError(() => decodeResponse(payload, opType));
    expectProtocolError(() => encodeReply({ xid: 1, zxid: 1n, err: 0 }, opType, { path: '/a' }));
  });

  it('an UNIMPLEMENTED answer to an unknown op is the header alone', () => {
    const reply = encodeReply({ xid: 42, zxid: -1n, err: -6 }, 999);
    expect(decodeReplyHeader(reply)).toEqual({ xid: 42, zxid: -1n, err: -6 });
    expect(reply.length).toBe(16);
  });

  it('encodeRequest refuses an unknown op', () => {
    expectProtocolError(() => encodeRequest(1, { type: 10 } as unknown as Request));
  });

  it.each([
    ['getChildren2', OpCode.getChildren2],
    ['ping', OpCode.ping],
    ['sync', OpCode.sync],
    ['multi', OpCode.multi],
  ])('%s is not allowed inside multi (encode and decode)', (_n, type) => {
    expectProtocolError(() => encodeRequest(1, { type: OpCode.multi, ops: [{ type, path: '/a', watch: false }] } as unknown as Request));
    const payload = hex(`00000001 0000000e ${type.toString(16).padStart(8, '0')} 00 ffffffff 00000002 2f61 00 ffffffff 01 ffffffff`);
    expectProtocolError(() => decodeRequest(payload));
  });

  it('an unknown multi result type fails', () => {
    const payload = hex('00000001 0000000000000001 00000000 00000009 00 00000000 ffffffff 01 ffffffff');
    expectProtocolError(() => decodeReply(payload, OpCode.multi));
  });

  it('a successful reply without its response record cannot be encoded', () => {
    expectProtocolError(() => encodeReply({ xid: 1, zxid: 1n, err: 0 }, OpCode.getData));
    expectProtocolError(() => encodeReply({ xid: 1, zxid: 1n, err: 0 }, OpCode.create));
  });
});

describe('offsets and headers', () => {
  it('short reply headers fail', () => {
    for (let n = 0; n < 16; n++) expectProtocolError(() => decodeReplyHeader(Buffer.alloc(n)));
  });
  it.each([-1, 1.5, 1000, Number.NaN])('decodeWatcherEvent at offset %s', (offset) => {
    expectProtocolError(() => decodeWatcherEvent(Buffer.alloc(40), offset));
  });
  it('decodeResponse at a bad offset', () => {
    const payload = encodeReply({ xid: 1, zxid: 1n, err: 0 }, OpCode.exists, { stat });
    expectProtocolError(() => decodeResponse(payload, OpCode.exists, -4));
    expectProtocolError(() => decodeResponse(payload, OpCode.exists, payload.length + 1));
  });
});
