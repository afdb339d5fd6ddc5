/**
 * The record that follows a ReplyHeader with err 0, for every op except multi/multiRead
 * (wire doc §4.4). Ops answered by the header alone have no body here.
 */
import { OpCode } from './constants.js';
import { ProtocolError } from './errors.js';
import type { JuteReader } from './jute-reader.js';
import type { JuteWriter } from './jute-writer.js';
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

/** How the reply to each op is laid out after the header. */
const enum Shape {
  None,
  Path,
  PathStat,
  Stat,
  DataStat,
  AclStat,
  Children,
  ChildrenStat,
  Paths,
  Count,
  Err,
  ClientInfo,
  Token,
  Multi,
}

const shapes = new Map<number, Shape>([
  [OpCode.create, Shape.Path],
  [OpCode.delete, Shape.None],
  [OpCode.exists, Shape.Stat],
  [OpCode.getData, Shape.DataStat],
  [OpCode.setData, Shape.Stat],
  [OpCode.getACL, Shape.AclStat],
  [OpCode.setACL, Shape.Stat],
  [OpCode.getChildren, Shape.Children],
  [OpCode.sync, Shape.Path],
  [OpCode.ping, Shape.None],
  [OpCode.getChildren2, Shape.ChildrenStat],
  [OpCode.check, Shape.None],
  [OpCode.multi, Shape.Multi],
  [OpCode.create2, Shape.PathStat],
  [OpCode.reconfig, Shape.DataStat],
  [OpCode.checkWatches, Shape.None],
  [OpCode.removeWatches, Shape.None],
  [OpCode.createContainer, Shape.PathStat],
  [OpCode.createTTL, Shape.PathStat],
  [OpCode.multiRead, Shape.Multi],
  [OpCode.auth, Shape.None],
  [OpCode.setWatches, Shape.None],
  [OpCode.sasl, Shape.Token],
  [OpCode.getEphemerals, Shape.Paths],
  [OpCode.getAllChildrenNumber, Shape.Count],
  [OpCode.setWatches2, Shape.None],
  [OpCode.addWatch, Shape.Err],
  [OpCode.whoAmI, Shape.ClientInfo],
  [OpCode.closeSession, Shape.None],
]);

/** True when a reply to this op can be encoded or decoded. */
export function isKnownReplyOp(opType: number): boolean {
  return shapes.has(opType);
}

/** True when a successful reply to this op is a multi response. */
export function isMultiOp(opType: number): boolean {
  return opType === OpCode.multi || opType === OpCode.multiRead;
}

/** True when a successful reply to this op carries no record. */
export function hasEmptyResponse(opType: number): boolean {
  return shapes.get(opType) === Shape.None;
}

function missing(opType: number): never {
  throw new ProtocolError(`a successful reply to op ${opType} needs a response record`);
}

/** Writes the response record of a single (non-multi) op. Throws ProtocolError for an unknown op. */
export function writeResponseBody(w: JuteWriter, opType: number, res: Response | undefined): void {
  const shape = shapes.get(opType);
  if (shape === undefined) throw new ProtocolError(`cannot encode a reply to unknown op ${opType}`);
  if (shape === Shape.None) return;
  if (res === undefined) missing(opType);
  switch (shape) {
    case Shape.Path:
      w.ustring((res as CreateResponse).path);
      return;
    case Shape.PathStat: {
      const r = res as Create2Response;
      w.ustring(r.path).stat(r.stat);
      return;
    }
    case Shape.Stat:
      w.stat((res as StatResponse).stat);
      return;
    case Shape.DataStat: {
      const r = res as GetDataResponse;
      w.buffer(r.data).stat(r.stat);
      return;
    }
    case Shape.AclStat: {
      const r = res as GetACLResponse;
      w.acls(r.acl).stat(r.stat);
      return;
    }
    case Shape.Children:
      w.strings((res as GetChildrenResponse).children);
      return;
    case Shape.ChildrenStat: {
      const r = res as GetChildren2Response;
      w.strings(r.children).stat(r.stat);
      return;
    }
    case Shape.Paths:
      w.strings((res as GetEphemeralsResponse).ephemerals);
      return;
    case Shape.Count:
      w.int((res as GetAllChildrenNumberResponse).totalNumber);
      return;
    case Shape.Err:
      w.int((res as ErrorResponse).err);
      return;
    case Shape.ClientInfo:
      w.vector((res as WhoAmIResponse).clientInfo, (w2, c) => w2.ustring(c.authScheme).ustring(c.user));
      return;
    case Shape.Token:
      w.buffer((res as SaslResponse).token);
      return;
    case Shape.Multi:
      throw new ProtocolError('multi responses are written by the multi codec');
  }
}

function readClientInfo(r: JuteReader): ClientInfo {
  return { authScheme: r.string('auth scheme'), user: r.string('user') };
}

/** Reads the response record of a single (non-multi) op. Throws ProtocolError for an unknown op. */
export function readResponseBody(opType: number, r: JuteReader): Response | undefined {
  const shape = shapes.get(opType);
  if (shape === undefined) throw new ProtocolError(`cannot decode a reply to unknown op ${opType}`);
  switch (shape) {
    case Shape.None:
      return undefined;
    case Shape.Path:
      return { path: r.string('path') };
    case Shape.PathStat:
      return { path: r.string('path'), stat: r.stat() };
    case Shape.Stat:
      return { stat: r.stat() };
    case Shape.DataStat:
      return { data: r.buffer('data'), stat: r.stat() };
    case Shape.AclStat:
      return { acl: r.acls() ?? [], stat: r.stat() };
    case Shape.Children:
      return { children: r.strings('children') ?? [] };
    case Shape.ChildrenStat:
      return { children: r.strings('children') ?? [], stat: r.stat() };
    case Shape.Paths:
      return { ephemerals: r.strings('ephemerals') ?? [] };
    case Shape.Count:
      return { totalNumber: r.int('totalNumber') };
    case Shape.Err:
      return { err: r.int('err') };
    case Shape.ClientInfo:
      return { clientInfo: r.vector(readClientInfo, 'clientInfo', 8) ?? [] };
    case Shape.Token:
      return { token: r.buffer('token') };
    case Shape.Multi:
      throw new ProtocolError('multi responses are read by the multi codec');
  }
}
