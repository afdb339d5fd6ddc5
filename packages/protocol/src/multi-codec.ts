/**
 * multi (14) and multiRead (22) bodies (docs/zookeeper-wire-protocol.md §4.5): entries of MultiHeader {type, done, err} plus
 * the op's record, ended by the header {-1, true, -1}. There is no count, so reading stops at the
 * terminator; every entry takes at least 9 bytes, so a hostile body cannot loop past the frame.
 */
import { OpCode } from './constants.js';
import { ProtocolError } from './errors.js';
import type { JuteReader } from './jute-reader.js';
import type { JuteWriter } from './jute-writer.js';
import { isMultiOpType } from './op-table.js';
import type { MultiOp, MultiResult, Stat } from './records.js';
import { readRequestBody, writeRequestBody } from './request-bodies.js';

function writeTerminator(w: JuteWriter): void {
  w.int(-1).bool(true).int(-1);
}

export function writeMultiOps(w: JuteWriter, ops: readonly MultiOp[]): void {
  for (const op of ops) {
    if (!isMultiOpType(op.type)) throw new ProtocolError(`op ${op.type} is not allowed inside multi`);
    w.int(op.type).bool(false).int(-1);
    writeRequestBody(w, op);
  }
  writeTerminator(w);
}

export function readMultiOps(r: JuteReader): MultiOp[] {
  const ops: MultiOp[] = [];
  for (;;) {
    const type = r.int('multi header type');
    const done = r.bool('multi header done');
    r.int('multi header err');
    if (done) return ops;
    if (!isMultiOpType(type)) throw new ProtocolError(`op ${type} is not allowed inside multi`);
    ops.push(readRequestBody(type, r) as MultiOp);
  }
}

export function writeMultiResults(w: JuteWriter, results: readonly MultiResult[]): void {
  for (const res of results) {
    w.int(res.type)
      .bool(false)
      .int(res.type === OpCode.error ? res.err : 0);
    switch (res.type) {
      case OpCode.create:
        w.ustring(res.path);
        break;
      case OpCode.create2:
        w.ustring(res.path).stat(res.stat);
        break;
      case OpCode.delete:
      case OpCode.check:
        break;
      case OpCode.setData:
        w.stat(res.stat);
        break;
      case OpCode.getData:
        w.buffer(res.data).stat(res.stat);
        break;
      case OpCode.getChildren:
        w.strings(res.children);
        break;
      case OpCode.error:
        w.int(res.err);
        break;
      default:
        throw new ProtocolError(`unknown multi result type ${String((res as { type: unknown }).type)}`);
    }
  }
  writeTerminator(w);
}

export function readMultiResults(r: JuteReader): MultiResult[] {
  const results: MultiResult[] = [];
  for (;;) {
    const type = r.int('multi header type');
    const done = r.bool('multi header done');
    r.int('multi header err');
    if (done) return results;
    switch (type) {
      case OpCode.create:
        results.push({ type, path: r.string('path') });
        break;
      case OpCode.create2:
        results.push({ type, path: r.string('path'), stat: r.stat() });
        break;
      case OpCode.delete:
      case OpCode.check:
        results.push({ type });
        break;
      case OpCode.setData:
        results.push({ type, stat: r.stat() });
        break;
      case OpCode.getData: {
        const data = r.buffer('data');
        const stat: Stat = r.stat();
        results.push({ type, data, stat });
        break;
      }
      case OpCode.getChildren:
        results.push({ type, children: r.strings('children') ?? [] });
        break;
      case OpCode.error:
        // ErrorResponse repeats the header's err; the record is what Java reads.
        results.push({ type, err: r.int('err') });
        break;
      default:
        throw new ProtocolError(`unknown multi result type ${type}`);
    }
  }
}
