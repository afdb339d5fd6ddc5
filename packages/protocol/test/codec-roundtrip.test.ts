/** Round trips of every record: the named fixtures, then properties over generated records. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EventType,
  KeeperState,
  OpCode,
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
  encodeNotificationFrame,
  encodeReply,
  encodeReplyFrame,
  encodeRequest,
  encodeRequestFrame,
  encodedRequestSize,
  frame,
  type ReplyHeader,
  type Request,
  type Response,
} from '@tenure/protocol';
import {
  connectRequestArb,
  connectResponseArb,
  errArb,
  eventArb,
  requestArb,
  requestCases,
  responseArb,
  responseCases,
  stat,
  xidArb,
  zxidArb,
} from './fixtures.js';
import { hex, toHex } from './hex.js';

/** Round-trip runs per property; reported in the package README. */
export const ROUND_TRIP_RUNS = 500;

function roundTripRequest(xid: number, req: Request): void {
  const payload = encodeRequest(xid, req);
  expect(decodeRequest(payload)).toEqual({ header: { xid, type: req.type }, request: req });
  expect(encodedRequestSize(xid, req)).toBe(payload.length);
  expect(encodeRequestFrame(xid, req).equals(frame(payload))).toBe(true);
  // Re-encoding the decoded record gives the same bytes.
  expect(encodeRequest(xid, decodeRequest(payload).request).equals(payload)).toBe(true);
}

function roundTripReply(header: ReplyHeader, opType: number, res: Response | undefined): void {
  const payload = encodeReply(header, opType, res);
  expect(decodeReply(payload, opType)).toEqual({ header, response: res });
  expect(decodeReplyHeader(payload)).toEqual(header);
  expect(decodeResponse(payload, opType)).toEqual(res);
  expect(encodeReplyFrame(header, opType, res).equals(frame(payload))).toBe(true);
}

describe('request records round-trip', () => {
  it.each(requestCases)('%s', (_name, req) => roundTripRequest(17, req));

  it('covers every op a client sends', () => {
    const covered = new Set(requestCases.map(([, r]) => r.type));
    const sent = Object.entries(OpCode)
      .filter(([name]) => !['notification', 'createSession', 'deleteContainer', 'error'].includes(name))
      .map(([, code]) => code);
    expect(sent.filter((c) => !covered.has(c as Request['type']))).toEqual([]);
  });

  it('special xids survive (ping -2, auth -4, setWatches -8, max int)', () => {
    for (const xid of [-2, -4, -8, 2147483647, 1]) roundTripRequest(xid, { type: OpCode.sync, path: '/x' });
  });

  it('keeps null and empty data apart on the wire', () => {
    const base = { type: OpCode.setData, path: '/a', version: 0 } as const;
    const nul = encodeRequest(1, { ...base, data: null });
    const emp = encodeRequest(1, { ...base, data: Buffer.alloc(0) });
    expect(toHex(nul.subarray(14, 18))).toBe('ff ff ff ff');
    expect(toHex(emp.subarray(14, 18))).toBe('00 00 00 00');
    expect(decodeRequest(nul).request).toMatchObject({ data: null });
    expect(decodeRequest(emp).request).toMatchObject({ data: Buffer.alloc(0) });
  });

  it('keeps null and empty reconfig strings apart', () => {
    const nul = decodeRequest(encodeRequest(1, requestCases.find(([n]) => n === 'reconfig nulls')![1])).request;
    const emp = decodeRequest(encodeRequest(1, requestCases.find(([n]) => n === 'reconfig empties')![1])).request;
    expect(nul).toMatchObject({ joiningServers: null, leavingServers: null, newMembers: null });
    expect(emp).toMatchObject({ joiningServers: '', leavingServers: '', newMembers: '' });
  });

  it('an empty vector is count 0; a null vector on the wire reads as an empty list', () => {
    const req: Request = { type: OpCode.setWatches, relativeZxid: 1n, dataWatches: [], existWatches: [], childWatches: [] };
    const bytes = encodeRequest(1, req);
    expect(toHex(bytes.subarray(16))).toBe('00 00 00 00 00 00 00 00 00 00 00 00');
    const nulls = Buffer.concat([bytes.subarray(0, 16), hex('ffffffff ffffffff ffffffff')]);
    expect(decodeRequest(nulls).request).toEqual(req);
  });

  it('a null getEphemerals prefix reads as "" (both mean every ephemeral)', () => {
    const payload = hex('00000001 00000067 ffffffff');
    expect(decodeRequest(payload).request).toEqual({ type: OpCode.getEphemerals, prefixPath: '' });
  });

  it('ignores bytes after the record, as ZooKeeper does', () => {
    const payload = Buffer.concat([encodeRequest(3, { type: OpCode.delete, path: '/a', version: 1 }), hex('deadbeef')]);
    expect(decodeRequest(payload).request).toEqual({ type: OpCode.delete, path: '/a', version: 1 });
  });
});

describe('response records round-trip', () => {
  const header = { xid: 17, zxid: 0x1_0000_0010n, err: 0 };
  it.each(responseCases)('%s', (_name, opType, res) => roundTripReply(header, opType, res));

  it('covers every op a reply can answer', () => {
    const covered = new Set(responseCases.map(([, op]) => op));
    for (const [, req] of requestCases) expect(covered.has(req.type), `op ${req.type}`).toBe(true);
  });

  // sasl is the exception: a refusal keeps its (null) token, as ZooKeeper sends it (sasl-digest-md5.test.ts).
  it.each(responseCases.filter(([, opType]) => opType !== OpCode.sasl))('error reply to %s is the header alone', (_name, opType, res) => {
    const h = { xid: 9, zxid: 77n, err: -101 };
    const payload = encodeReply(h, opType, res);
    expect(payload.length).toBe(16);
    expect(decodeReply(payload, opType)).toEqual({ header: h, response: undefined });
  });

  it('ignores bytes after the header when err != 0', () => {
    const payload = Buffer.concat([encodeReply({ xid: 1, zxid: 2n, err: -110 }, OpCode.create), hex('00 00 00 ff 01')]);
    expect(decodeReply(payload, OpCode.create)).toEqual({ header: { xid: 1, zxid: 2n, err: -110 }, response: undefined });
  });

  it('addWatch answers a 4-byte ErrorResponse', () => {
    const payload = encodeReply({ xid: 5, zxid: 3n, err: 0 }, OpCode.addWatch, { err: 0 });
    expect(payload.length).toBe(20);
  });

  it('createContainer answers path + Stat (93-byte payload for a 5-byte path, as observed on 3.8)', () => {
    const payload = encodeReply({ xid: 5, zxid: 3n, err: 0 }, OpCode.createContainer, { path: '/c123', stat });
    expect(payload.length).toBe(93);
  });

  it('keeps null and empty getData data apart', () => {
    const h = { xid: 1, zxid: 1n, err: 0 };
    const get = (name: string) => responseCases.find(([n]) => n === name)![2];
    const nul = encodeReply(h, OpCode.getData, get('getData null'));
    const emp = encodeReply(h, OpCode.getData, get('getData empty'));
    expect(toHex(nul.subarray(16, 20))).toBe('ff ff ff ff');
    expect(toHex(emp.subarray(16, 20))).toBe('00 00 00 00');
    expect(decodeResponse(nul, OpCode.getData)).toMatchObject({ data: null });
    expect(decodeResponse(emp, OpCode.getData)).toMatchObject({ data: Buffer.alloc(0) });
  });

  it('decoded data is a copy: changing the frame afterwards does not change it', () => {
    const payload = encodeReply({ xid: 1, zxid: 1n, err: 0 }, OpCode.getData, { data: Buffer.from('abc'), stat });
    const res = decodeResponse(payload, OpCode.getData) as { data: Buffer };
    payload.fill(0);
    expect(res.data.toString()).toBe('abc');
  });

  it('a failed multi keeps every error entry with the header err 0', () => {
    const failed = responseCases.find(([n]) => n.startsWith('multi failed'))!;
    const payload = encodeReply({ xid: 3, zxid: 8n, err: 0 }, OpCode.multi, failed[2]);
    expect(toHex(payload.subarray(16, 25))).toBe('ff ff ff ff 00 00 00 00 00'); // type -1, done false, err 0
    expect(decodeReply(payload, OpCode.multi).response).toEqual({
      results: [
        { type: -1, err: 0 },
        { type: -1, err: -103 },
        { type: -1, err: -2 },
      ],
    });
  });
});

describe('notifications', () => {
  it.each([
    ['3.8 (zxid -1)', -1n],
    ['3.9 (the firing zxid)', 0x2_0000_0005n],
  ])('round-trip %s', (_n, zxid) => {
    const event = { type: EventType.NodeChildrenChanged, state: KeeperState.SyncConnected, path: '/a/b' };
    const payload = encodeNotification(zxid, event);
    expect(decodeReplyHeader(payload)).toEqual({ xid: -1, zxid, err: 0 });
    expect(decodeWatcherEvent(payload, 16)).toEqual(event);
    expect(encodeNotificationFrame(zxid, event).equals(frame(payload))).toBe(true);
  });
});

describe('round-trip properties', () => {
  const opts = { numRuns: ROUND_TRIP_RUNS };

  it('every request', () => {
    fc.assert(
      fc.property(xidArb, requestArb, (xid, req) => roundTripRequest(xid, req)),
      opts,
    );
  });

  it('every successful reply', () => {
    fc.assert(
      fc.property(xidArb, zxidArb, responseArb, (xid, zxid, [opType, res]) => roundTripReply({ xid, zxid, err: 0 }, opType, res)),
      opts,
    );
  });

  it('every error reply', () => {
    fc.assert(
      fc.property(
        xidArb,
        zxidArb,
        errArb.filter((e) => e !== 0),
        responseArb,
        (xid, zxid, err, [opType, res]) => {
          expect(decodeReply(encodeReply({ xid, zxid, err }, opType, res), opType)).toEqual({
            header: { xid, zxid, err },
            response: undefined,
          });
        },
      ),
      opts,
    );
  });

  it('connect request and response, with and without readOnly', () => {
    fc.assert(
      fc.property(connectRequestArb, connectResponseArb, fc.boolean(), (req, res, withRo) => {
        expect(decodeConnectRequest(encodeConnectRequest(req, withRo))).toEqual(withRo ? req : { ...req, readOnly: false });
        expect(decodeConnectResponse(encodeConnectResponse(res, withRo))).toEqual(withRo ? res : { ...res, readOnly: false });
      }),
      opts,
    );
  });

  it('notifications', () => {
    fc.assert(
      fc.property(zxidArb, eventArb, (zxid, event) => {
        const payload = encodeNotification(zxid, event);
        expect(decodeReplyHeader(payload)).toEqual({ xid: -1, zxid, err: 0 });
        expect(decodeWatcherEvent(payload, 16)).toEqual(event);
      }),
      opts,
    );
  });
});
