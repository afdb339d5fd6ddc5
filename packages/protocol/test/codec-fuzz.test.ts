/**
 * Property-based fuzzing: every decoder, fed random bytes or damaged valid encodings, either returns a
 * record or throws ProtocolError. Anything else (RangeError, TypeError, a hang) fails the property.
 * Set FUZZ_RUNS to fuzz longer locally, e.g. `FUZZ_RUNS=100000 npx vitest run --project protocol codec-fuzz`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FrameReader,
  ProtocolError,
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
  frame,
  type Response,
} from '@tenure/protocol';
import { connectRequestArb, connectResponseArb, eventArb, replyOpTypes, requestArb, responseArb, xidArb, zxidArb } from './fixtures.js';

/** Runs per fuzz property; reported in the package README. */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
const opts = { numRuns: FUZZ_RUNS };

/** Calls `fn`; a ProtocolError counts as a clean refusal, any other throw escapes and fails the property. */
function refusesCleanly<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ProtocolError) return undefined;
    throw e;
  }
}

const requestOpTypes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 100, 101, 102, 103, 104, 105, 106, 107, -11];

/** Int32s that stress lengths and counts: null, negatives, huge, small, off by one. */
const nastyInt = fc.constantFrom(-1, -2, 0, 1, 2, 3, 4, 8, 16, 68, 255, 0x7fffffff, -0x80000000, 0xfffff, 0x100000);
const int32Bytes = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(v | 0);
  return b;
};
/** Bytes built from a mix of raw bytes and nasty int32s, so decoders go past the first length field. */
const bodyBytes = fc
  .array(
    fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 8 }).map((u) => Buffer.from(u)),
      nastyInt.map(int32Bytes),
    ),
    { maxLength: 24 },
  )
  .map((parts) => Buffer.concat(parts));
const randomBytes = fc.uint8Array({ maxLength: 200 }).map((u) => Buffer.from(u));

const requestPayload = fc
  .tuple(xidArb, fc.oneof(fc.constantFrom(...requestOpTypes), fc.integer()), bodyBytes)
  .map(([xid, type, body]) => Buffer.concat([int32Bytes(xid), int32Bytes(type), body]));

const replyPayload = fc.tuple(xidArb, zxidArb, fc.constantFrom(0, 0, 0, -101), bodyBytes).map(([xid, zxid, err, body]) => {
  const h = Buffer.alloc(16);
  h.writeInt32BE(xid, 0);
  h.writeBigInt64BE(zxid, 4);
  h.writeInt32BE(err, 12);
  return Buffer.concat([h, body]);
});

/** A damage applied to a valid encoding. */
type Mutation =
  | { kind: 'set'; at: number; byte: number }
  | { kind: 'int'; at: number; v: number }
  | { kind: 'cut'; at: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'drop'; at: number; n: number };
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('int' as const), at: fc.nat(), v: nastyInt }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 6 }) }),
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat(), n: fc.integer({ min: 1, max: 6 }) }),
);
const mutations = fc.array(mutationArb, { minLength: 1, maxLength: 4 });

function mutate(valid: Buffer, list: Mutation[]): Buffer {
  let b = Buffer.from(valid);
  for (const m of list) {
    const at = b.length === 0 ? 0 : m.at % (b.length + 1);
    switch (m.kind) {
      case 'set':
        if (at < b.length) b[at] = m.byte;
        break;
      case 'int':
        if (at + 4 <= b.length) b.writeInt32BE(m.v, at);
        break;
      case 'cut':
        b = b.subarray(0, at);
        break;
      case 'insert':
        b = Buffer.concat([b.subarray(0, at), m.bytes, b.subarray(at)]);
        break;
      case 'drop':
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + m.n)]);
        break;
    }
  }
  return b;
}

/** When a decoder accepts damaged bytes, what it returns must still encode (it is a well-formed record). */
function decodeRequestAndReencode(payload: Buffer): void {
  const out = refusesCleanly(() => decodeRequest(payload));
  if (out) encodeRequest(out.header.xid, out.request);
}
function decodeReplyAndReencode(payload: Buffer, opType: number): void {
  const out = refusesCleanly(() => decodeReply(payload, opType));
  if (out) encodeReply(out.header, opType, out.response);
}

describe('fuzz: random bytes', () => {
  it('decodeRequest', () => {
    fc.assert(fc.property(fc.oneof(randomBytes, requestPayload), decodeRequestAndReencode), opts);
  });

  it('decodeReply for every op type (and unknown ones)', () => {
    const opType = fc.oneof(fc.constantFrom(...replyOpTypes), fc.integer());
    fc.assert(fc.property(fc.oneof(randomBytes, replyPayload), opType, decodeReplyAndReencode), opts);
  });

  it('decodeResponse at any offset', () => {
    fc.assert(
      fc.property(replyPayload, fc.constantFrom(...replyOpTypes), fc.integer({ min: -2, max: 64 }), (payload, opType, offset) => {
        refusesCleanly(() => decodeResponse(payload, opType, offset));
      }),
      opts,
    );
  });

  it('decodeReplyHeader and decodeWatcherEvent', () => {
    fc.assert(
      fc.property(fc.oneof(randomBytes, replyPayload), fc.integer({ min: -2, max: 40 }), (payload, offset) => {
        refusesCleanly(() => decodeReplyHeader(payload));
        refusesCleanly(() => decodeWatcherEvent(payload, offset));
        refusesCleanly(() => decodeWatcherEvent(payload, 16));
      }),
      opts,
    );
  });

  it('decodeConnectRequest and decodeConnectResponse', () => {
    fc.assert(
      fc.property(fc.oneof(randomBytes, bodyBytes), (payload) => {
        refusesCleanly(() => decodeConnectRequest(payload));
        refusesCleanly(() => decodeConnectResponse(payload));
      }),
      opts,
    );
  });

  it('FrameReader with random chunking', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(randomBytes, bodyBytes), { maxLength: 6 }), fc.integer({ min: 1, max: 64 }), (chunks, max) => {
        const reader = new FrameReader(max);
        for (const chunk of chunks) {
          const frames = refusesCleanly(() => reader.push(chunk));
          if (frames === undefined) break;
          for (const f of frames) expect(f.length).toBeLessThanOrEqual(max);
        }
      }),
      opts,
    );
  });
});

describe('fuzz: damaged valid encodings', () => {
  it('requests', () => {
    fc.assert(
      fc.property(xidArb, requestArb, mutations, (xid, req, list) => decodeRequestAndReencode(mutate(encodeRequest(xid, req), list))),
      opts,
    );
  });

  it('replies', () => {
    fc.assert(
      fc.property(xidArb, zxidArb, responseArb, mutations, fc.boolean(), (xid, zxid, [opType, res], list, sameOp) => {
        const payload = mutate(encodeReply({ xid, zxid, err: 0 }, opType, res as Response | undefined), list);
        // Also decode as the wrong op: a client whose FIFO got out of step must still only see ProtocolError.
        decodeReplyAndReencode(payload, sameOp ? opType : replyOpTypes[Math.abs(xid) % replyOpTypes.length]!);
      }),
      opts,
    );
  });

  it('connect records and notifications', () => {
    fc.assert(
      fc.property(connectRequestArb, connectResponseArb, zxidArb, eventArb, mutations, (req, res, zxid, event, list) => {
        refusesCleanly(() => decodeConnectRequest(mutate(encodeConnectRequest(req), list)));
        refusesCleanly(() => decodeConnectResponse(mutate(encodeConnectResponse(res), list)));
        const n = mutate(encodeNotification(zxid, event), list);
        refusesCleanly(() => decodeReplyHeader(n));
        refusesCleanly(() => decodeWatcherEvent(n, 16));
      }),
      opts,
    );
  });

  it('framed streams', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(xidArb, requestArb), { maxLength: 4 }), mutations, (reqs, list) => {
        const stream = mutate(Buffer.concat(reqs.map(([xid, r]) => frame(encodeRequest(xid, r)))), list);
        const frames = refusesCleanly(() => new FrameReader().push(stream)) ?? [];
        for (const f of frames) decodeRequestAndReencode(f);
      }),
      opts,
    );
  });
});
