/**
 * The record that follows a RequestHeader, for every op except multi/multiRead (wire doc §4.4).
 * Nullable jute fields (data, auth, token, reconfig strings) keep null apart from empty; list fields
 * typed as plain arrays read a null vector as [].
 */
import { OpCode } from './constants.js';
import { ProtocolError } from './errors.js';
import type { JuteReader } from './jute-reader.js';
import type { JuteWriter } from './jute-writer.js';
import type { Request } from './records.js';

/** Op codes whose request has no record after the header. */
export function hasEmptyRequest(type: number): boolean {
  return type === OpCode.ping || type === OpCode.closeSession || type === OpCode.whoAmI;
}

/** Writes the record of a single (non-multi) request. */
export function writeRequestBody(w: JuteWriter, req: Request): void {
  switch (req.type) {
    case OpCode.create:
    case OpCode.create2:
    case OpCode.createContainer:
      w.ustring(req.path).buffer(req.data).acls(req.acl).int(req.flags);
      return;
    case OpCode.createTTL:
      w.ustring(req.path).buffer(req.data).acls(req.acl).int(req.flags).long(req.ttl);
      return;
    case OpCode.delete:
    case OpCode.check:
      w.ustring(req.path).int(req.version);
      return;
    case OpCode.exists:
    case OpCode.getData:
    case OpCode.getChildren:
    case OpCode.getChildren2:
      w.ustring(req.path).bool(req.watch);
      return;
    case OpCode.setData:
      w.ustring(req.path).buffer(req.data).int(req.version);
      return;
    case OpCode.getACL:
    case OpCode.sync:
    case OpCode.getAllChildrenNumber:
      w.ustring(req.path);
      return;
    case OpCode.setACL:
      w.ustring(req.path).acls(req.acl).int(req.version);
      return;
    case OpCode.setWatches:
      w.long(req.relativeZxid).strings(req.dataWatches).strings(req.existWatches).strings(req.childWatches);
      return;
    case OpCode.setWatches2:
      w.long(req.relativeZxid).strings(req.dataWatches).strings(req.existWatches).strings(req.childWatches);
      w.strings(req.persistentWatches).strings(req.persistentRecursiveWatches);
      return;
    case OpCode.addWatch:
      w.ustring(req.path).int(req.mode);
      return;
    case OpCode.removeWatches:
    case OpCode.checkWatches:
      w.ustring(req.path).int(req.watcherType);
      return;
    case OpCode.getEphemerals:
      w.ustring(req.prefixPath);
      return;
    case OpCode.auth:
      w.int(req.authType).ustring(req.scheme).buffer(req.auth);
      return;
    case OpCode.reconfig:
      w.ustring(req.joiningServers).ustring(req.leavingServers).ustring(req.newMembers).long(req.curConfigId);
      return;
    case OpCode.sasl:
      w.buffer(req.token);
      return;
    case OpCode.ping:
    case OpCode.closeSession:
    case OpCode.whoAmI:
      return;
    default:
      throw new ProtocolError(`cannot encode a request of unknown op ${(req as { type: unknown }).type}`);
  }
}

/** Reads the record of a single (non-multi) request; undefined when the op code is unknown. */
export function readRequestBody(type: number, r: JuteReader): Request | undefined {
  switch (type) {
    case OpCode.create:
    case OpCode.create2:
    case OpCode.createContainer:
      return { type, path: r.string('path'), data: r.buffer('data'), acl: r.acls() ?? [], flags: r.int('flags') };
    case OpCode.createTTL:
      return {
        type,
        path: r.string('path'),
        data: r.buffer('data'),
        acl: r.acls() ?? [],
        flags: r.int('flags'),
        ttl: r.long('ttl'),
      };
    case OpCode.delete:
    case OpCode.check:
      return { type, path: r.string('path'), version: r.int('version') };
    case OpCode.exists:
    case OpCode.getData:
    case OpCode.getChildren:
    case OpCode.getChildren2:
      return { type, path: r.string('path'), watch: r.bool('watch') };
    case OpCode.setData:
      return { type, path: r.string('path'), data: r.buffer('data'), version: r.int('version') };
    case OpCode.getACL:
    case OpCode.sync:
    case OpCode.getAllChildrenNumber:
      return { type, path: r.string('path') };
    case OpCode.setACL:
      return { type, path: r.string('path'), acl: r.acls() ?? [], version: r.int('version') };
    case OpCode.setWatches:
      return {
        type,
        relativeZxid: r.long('relativeZxid'),
        dataWatches: r.strings('dataWatches') ?? [],
        existWatches: r.strings('existWatches') ?? [],
        childWatches: r.strings('childWatches') ?? [],
      };
    case OpCode.setWatches2:
      return {
        type,
        relativeZxid: r.long('relativeZxid'),
        dataWatches: r.strings('dataWatches') ?? [],
        existWatches: r.strings('existWatches') ?? [],
        childWatches: r.strings('childWatches') ?? [],
        persistentWatches: r.strings('persistentWatches') ?? [],
        persistentRecursiveWatches: r.strings('persistentRecursiveWatches') ?? [],
      };
    case OpCode.addWatch:
      return { type, path: r.string('path'), mode: r.int('mode') };
    case OpCode.removeWatches:
    case OpCode.checkWatches:
      return { type, path: r.string('path'), watcherType: r.int('watcherType') };
    case OpCode.getEphemerals:
      // null and empty both mean "every ephemeral of the session" (wire doc §4.4).
      return { type, prefixPath: r.ustring('prefixPath') ?? '' };
    case OpCode.auth:
      return { type, authType: r.int('auth type'), scheme: r.string('auth scheme'), auth: r.buffer('auth') };
    case OpCode.reconfig:
      return {
        type,
        joiningServers: r.ustring('joiningServers'),
        leavingServers: r.ustring('leavingServers'),
        newMembers: r.ustring('newMembers'),
        curConfigId: r.long('curConfigId'),
      };
    case OpCode.sasl:
      return { type, token: r.buffer('token') };
    case OpCode.ping:
    case OpCode.closeSession:
    case OpCode.whoAmI:
      return { type };
    default:
      return undefined;
  }
}
