/**
 * The record that follows a ReplyHeader with err 0, for every op except multi/multiRead
 * (docs/zookeeper-wire-protocol.md §4.4), by the reply shape the op table gives each op. Ops answered by the header alone
 * have no body here.
 */
import { OpCode } from './constants.js';
import { ProtocolError } from './errors.js';
import type { JuteReader } from './jute-reader.js';
import type { JuteWriter } from './jute-writer.js';
import { opSpec } from './op-table.js';
import type {
  ClientInfo,
  Create2Response,
  CreateResponse,
  ErrorResponse,
  GetACLResponse,
  GetAllChildrenNumberResponse,
  GetChildren2Response,
  GetChildrenResponse,
  GetDataResponse,
  GetEphemeralsResponse,
  Response,
  SaslResponse,
  StatResponse,
  WhoAmIResponse,
} from './records.js';

/** True when a reply to this op can be encoded or decoded. */
export function isKnownReplyOp(opType: number): boolean {
  return opSpec(opType) !== undefined;
}

/** True when a successful reply to this op is a multi response. */
export function isMultiOp(opType: number): boolean {
  return opType === OpCode.multi || opType === OpCode.multiRead;
}

/** True when a successful reply to this op carries no record. */
export function hasEmptyResponse(opType: number): boolean {
  return opSpec(opType)?.reply === 'none';
}

function missing(opType: number): never {
  throw new ProtocolError(`a successful reply to op ${opType} needs a response record`);
}

/** Writes the response record of a single (non-multi) op. Throws ProtocolError for an unknown op. */
export function writeResponseBody(w: JuteWriter, opType: number, res: Response | undefined): void {
  const shape = opSpec(opType)?.reply;
  if (shape === undefined) throw new ProtocolError(`cannot encode a reply to unknown op ${opType}`);
  if (shape === 'none') return;
  if (res === undefined) missing(opType);
  switch (shape) {
    case 'path':
      w.ustring((res as CreateResponse).path);
      return;
    case 'pathStat': {
      const r = res as Create2Response;
      w.ustring(r.path).stat(r.stat);
      return;
    }
    case 'stat':
      w.stat((res as StatResponse).stat);
      return;
    case 'dataStat': {
      const r = res as GetDataResponse;
      w.buffer(r.data).stat(r.stat);
      return;
    }
    case 'aclStat': {
      const r = res as GetACLResponse;
      w.acls(r.acl).stat(r.stat);
      return;
    }
    case 'children':
      w.strings((res as GetChildrenResponse).children);
      return;
    case 'childrenStat': {
      const r = res as GetChildren2Response;
      w.strings(r.children).stat(r.stat);
      return;
    }
    case 'paths':
      w.strings((res as GetEphemeralsResponse).ephemerals);
      return;
    case 'count':
      w.int((res as GetAllChildrenNumberResponse).totalNumber);
      return;
    case 'err':
      w.int((res as ErrorResponse).err);
      return;
    case 'clientInfo':
      w.vector((res as WhoAmIResponse).clientInfo, (w2, c) => w2.ustring(c.authScheme).ustring(c.user));
      return;
    case 'token':
      w.buffer((res as SaslResponse).token);
      return;
    case 'multi':
      throw new ProtocolError('multi responses are written by the multi codec');
  }
}

function readClientInfo(r: JuteReader): ClientInfo {
  return { authScheme: r.string('auth scheme'), user: r.string('user') };
}

/** Reads the response record of a single (non-multi) op. Throws ProtocolError for an unknown op. */
export function readResponseBody(opType: number, r: JuteReader): Response | undefined {
  const shape = opSpec(opType)?.reply;
  if (shape === undefined) throw new ProtocolError(`cannot decode a reply to unknown op ${opType}`);
  switch (shape) {
    case 'none':
      return undefined;
    case 'path':
      return { path: r.string('path') };
    case 'pathStat':
      return { path: r.string('path'), stat: r.stat() };
    case 'stat':
      return { stat: r.stat() };
    case 'dataStat':
      return { data: r.buffer('data'), stat: r.stat() };
    case 'aclStat':
      return { acl: r.acls() ?? [], stat: r.stat() };
    case 'children':
      return { children: r.strings('children') ?? [] };
    case 'childrenStat':
      return { children: r.strings('children') ?? [], stat: r.stat() };
    case 'paths':
      return { ephemerals: r.strings('ephemerals') ?? [] };
    case 'count':
      return { totalNumber: r.int('totalNumber') };
    case 'err':
      return { err: r.int('err') };
    case 'clientInfo':
      return { clientInfo: r.vector(readClientInfo, 'clientInfo', 8) ?? [] };
    case 'token':
      return { token: r.buffer('token') };
    case 'multi':
      throw new ProtocolError('multi responses are read by the multi codec');
  }
}
