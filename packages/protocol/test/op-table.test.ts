/**
 * The op table's walks: the shape check accepts what the codec decodes and names what it would not,
 * the size bound is never below the encoded size, and the table's encoder writes the same bytes as
 * the hand-written fast paths (so the two cannot drift apart).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  JuteWriter,
  OpCode,
  decodeRequest,
  encodeRequest,
  encodedRequestSize,
  exceedsMaxBuffer,
  isKnownOp,
  requestProblem,
  requestSizeBound,
  type Request,
} from '@tenure/protocol';
import { writeMultiOps } from '../src/multi-codec.js';
import { writeRequestBody } from '../src/request-bodies.js';
import { requestArb, requestCases, xidArb } from './fixtures.js';

const rec = (r: Request): Record<string, unknown> => r as unknown as Record<string, unknown>;

/** RequestHeader + body through the table walk alone, bypassing every fast path of encodeRequest. */
function encodeByTable(xid: number, req: Request): Buffer {
  const w = new JuteWriter(16).int(xid).int(req.type);
  if (req.type === OpCode.multi || req.type === OpCode.multiRead) writeMultiOps(w, req.ops);
  else writeRequestBody(w, req);
  return w.toBufferCopy();
}

describe('op table', () => {
  it.each(requestCases)('%s: known, well formed, bounded, and encoded alike by the table and the codec', (_name, req) => {
    expect(isKnownOp(req.type)).toBe(true);
    expect(requestProblem(rec(req))).toBeUndefined();
    const size = encodedRequestSize(7, req);
    expect(requestSizeBound(req)).toBeGreaterThanOrEqual(size);
    expect(exceedsMaxBuffer(req, size)).toBe(false);
    expect(exceedsMaxBuffer(req, size - 1)).toBe(true);
    expect(encodeByTable(7, req).equals(encodeRequest(7, req))).toBe(true);
  });

  it('every decoded request passes the shape check and is bounded by its size', () => {
    fc.assert(
      fc.property(xidArb, requestArb, (xid, req) => {
        const payload = encodeRequest(xid, req);
        expect(encodeByTable(xid, req).equals(payload)).toBe(true);
        expect(requestSizeBound(req)).toBeGreaterThanOrEqual(payload.length);
        expect(requestProblem(rec(decodeRequest(payload).request))).toBeUndefined();
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 2000) },
    );
  });

  it('the shape check names the first malformed field, in wire order', () => {
    const bad = { type: OpCode.create, path: '/a', data: 'text', acl: 'none', flags: 0 };
    expect(requestProblem(bad)).toBe('field data of op 1 is malformed');
    expect(requestProblem({ type: OpCode.setData, path: '/a', data: null, version: 1.5 })).toBe('field version of op 5 is malformed');
    expect(requestProblem({ type: OpCode.createTTL, path: '/a', data: null, acl: [], flags: 5, ttl: 1 })).toBe(
      'field ttl of op 21 is malformed',
    );
    expect(requestProblem({ type: 999 })).toBe('unknown op 999');
  });

  it('keeps the in-process leniencies: a null sync path, null data and a null ACL list', () => {
    expect(requestProblem({ type: OpCode.sync, path: null })).toBeUndefined();
    expect(requestProblem({ type: OpCode.getACL, path: null })).toBe('field path of op 6 is malformed');
    expect(requestProblem({ type: OpCode.create, path: '/a', data: null, acl: null, flags: 0 })).toBeUndefined();
  });

  it('checks the ops of a multi against the ops multi may carry', () => {
    const ok = { type: OpCode.multi, ops: [{ type: OpCode.check, path: '/a', version: 0 }] };
    expect(requestProblem(ok)).toBeUndefined();
    expect(requestProblem({ type: OpCode.multi, ops: [{ type: OpCode.sync, path: '/' }] })).toBe('invalid type of op 9 in multi');
    expect(requestProblem({ type: OpCode.multiRead, ops: [null] })).toBe('multi op is not a record');
    expect(requestProblem({ type: OpCode.multi, ops: [{ type: OpCode.delete, path: '/a' }] })).toBe('field version of op 2 is malformed');
  });

  it('bounds a record of an unknown op by every field it holds, and one the encoder refuses as too large', () => {
    const big = { type: 999, path: 'x'.repeat(1000), data: Buffer.alloc(1000) } as unknown as Request;
    expect(requestSizeBound(big)).toBeGreaterThan(2000);
    expect(exceedsMaxBuffer(big, 1000)).toBe(true);
    expect(exceedsMaxBuffer(big, 1_000_000)).toBe(false);
  });
});
