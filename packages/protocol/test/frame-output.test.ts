/**
 * FrameOutput and the in-place frame writers: the bytes are those of encodeReplyFrame /
 * encodeNotificationFrame, frames written between takes come out back to back in one view, and a
 * view once taken is never written over, whatever is written after it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FrameOutput,
  OpCode,
  encodeNotificationFrame,
  encodeReplyFrame,
  writeNotificationFrame,
  writeReplyFrame,
  type ReplyHeader,
  type Response,
} from '@tenure/protocol';
import { errArb, eventArb, responseArb, responseCases, stat, xidArb, zxidArb } from './fixtures.js';

const RUNS = 300;

function written(header: ReplyHeader, opType: number, res: Response | undefined): Buffer {
  const out = new FrameOutput();
  writeReplyFrame(out, header.xid, header.zxid, header.err, opType, res);
  expect(out.frames).toBe(1);
  return Buffer.from(out.take());
}

describe('FrameOutput', () => {
  it.each(responseCases)('%s: the bytes of encodeReplyFrame', (_name, opType, res) => {
    const h = { xid: 7, zxid: 0x1_0000_0002n, err: 0 };
    expect(written(h, opType, res).equals(encodeReplyFrame(h, opType, res))).toBe(true);
  });

  it('every reply, successful or not, and every notification: the same bytes as the allocating encoders', () => {
    fc.assert(
      fc.property(xidArb, zxidArb, fc.oneof(fc.constant(0), errArb), responseArb, (xid, zxid, err, [opType, res]) => {
        const h = { xid, zxid, err };
        expect(written(h, opType, res).equals(encodeReplyFrame(h, opType, res))).toBe(true);
      }),
      { numRuns: RUNS },
    );
    fc.assert(
      fc.property(zxidArb, eventArb, (zxid, event) => {
        const out = new FrameOutput();
        writeNotificationFrame(out, zxid, event);
        expect(out.take().equals(encodeNotificationFrame(zxid, event))).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it('takes the frames written since the last take as one buffer, and never writes over a view it gave out', () => {
    const out = new FrameOutput();
    const taken: Array<[Buffer, Buffer]> = [];
    let expected: Buffer[] = [];
    // Flushes of growing then shrinking size, across many slab replacements, with 1 MB replies among them.
    for (let flush = 0; flush < 300; flush++) {
      const n = flush < 150 ? flush + 1 : 301 - flush;
      for (let i = 0; i < n; i++) {
        const data = Buffer.alloc(flush % 97 === 5 && i === 0 ? 1 << 20 : (i * 37) % 300, flush & 0xff);
        const h = { xid: flush * 1000 + i, zxid: BigInt(i), err: 0 };
        writeReplyFrame(out, h.xid, h.zxid, h.err, OpCode.getData, { data, stat });
        expected.push(encodeReplyFrame(h, OpCode.getData, { data, stat }));
      }
      expect(out.frames).toBe(n);
      const view = out.take();
      expect(out.frames).toBe(0);
      taken.push([view, Buffer.concat(expected)]);
      expected = [];
    }
    for (const [view, want] of taken) expect(view.equals(want)).toBe(true);
  });

  it('a reply that cannot be encoded leaves nothing behind', () => {
    const out = new FrameOutput();
    writeReplyFrame(out, 1, 1n, 0, OpCode.exists, { stat });
    expect(() => writeReplyFrame(out, 2, 1n, 0, 9999, { stat })).toThrow(/unknown op/);
    expect(() => writeReplyFrame(out, 3, 1n, 0, OpCode.getChildren, undefined)).toThrow(/needs a response/);
    expect(out.frames).toBe(1);
    expect(out.take().equals(encodeReplyFrame({ xid: 1, zxid: 1n, err: 0 }, OpCode.exists, { stat }))).toBe(true);
  });

  it('reset drops the frames not taken; an empty take is an empty buffer', () => {
    const out = new FrameOutput();
    writeReplyFrame(out, 1, 1n, 0, OpCode.ping);
    out.reset();
    expect(out.frames).toBe(0);
    expect(out.take().length).toBe(0);
    writeReplyFrame(out, -2, 1n, 0, OpCode.ping);
    expect(out.take().equals(encodeReplyFrame({ xid: -2, zxid: 1n, err: 0 }, OpCode.ping))).toBe(true);
  });
});
