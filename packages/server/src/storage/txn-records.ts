/**
 * The transactions of ZooKeeper's txn log (zookeeper.jute, module org.apache.zookeeper.txn):
 * a TxnHeader followed by the record its type names, optionally followed by a TxnDigest (ZooKeeper
 * 3.6+ appends one when zookeeper.digest.enabled; we read it and write none, which 3.8 accepts).
 */
import type { ACL } from '@tenure/protocol';
import { JuteReader, JuteWriter, OpCode, ProtocolError } from '@tenure/protocol';

export interface TxnHeader {
  clientId: bigint;
  cxid: number;
  zxid: bigint;
  time: number;
  type: number;
}

/**
 * One transaction body; `type` is the header's (or the multi entry's) op code. A decoded body's
 * `data` is a view of the record's bytes (replay copies what the tree keeps): copy it to hold it.
 */
export type TxnBody =
  | {
      type: typeof OpCode.create | typeof OpCode.create2;
      path: string;
      data: Buffer | null;
      acl: readonly ACL[];
      ephemeral: boolean;
      parentCVersion: number;
    }
  | { type: typeof OpCode.createContainer; path: string; data: Buffer | null; acl: readonly ACL[]; parentCVersion: number }
  | { type: typeof OpCode.createTTL; path: string; data: Buffer | null; acl: readonly ACL[]; parentCVersion: number; ttl: bigint }
  | { type: typeof OpCode.delete | typeof OpCode.deleteContainer; path: string }
  | { type: typeof OpCode.setData; path: string; data: Buffer | null; version: number }
  | { type: typeof OpCode.setACL; path: string; acl: readonly ACL[]; version: number }
  | { type: typeof OpCode.check; path: string; version: number }
  | { type: typeof OpCode.createSession; timeOut: number }
  | { type: typeof OpCode.closeSession; paths2Delete: string[] | null }
  | { type: typeof OpCode.error; err: number }
  | { type: typeof OpCode.multi; txns: TxnBody[] };

export interface Txn {
  header: TxnHeader;
  body: TxnBody;
  /** ZooKeeper's TxnDigest, when the record carried one (read, never written). */
  digest?: { version: number; treeDigest: bigint };
}

type BodyWriter<K extends TxnBody['type']> = (w: JuteWriter, b: TxnBody & { type: K }) => void;

const writeCreate: BodyWriter<typeof OpCode.create | typeof OpCode.create2> = (w, b) =>
  void w.ustring(b.path).buffer(b.data).acls(b.acl).bool(b.ephemeral).int(b.parentCVersion);
const writeDelete: BodyWriter<typeof OpCode.delete | typeof OpCode.deleteContainer> = (w, b) => void w.ustring(b.path);

/** How each txn record is laid out (zookeeper.jute), by type. */
const bodyWriters: { [K in TxnBody['type']]: BodyWriter<K> } = {
  [OpCode.create]: writeCreate,
  [OpCode.create2]: writeCreate,
  [OpCode.createContainer]: (w, b) => void w.ustring(b.path).buffer(b.data).acls(b.acl).int(b.parentCVersion),
  [OpCode.createTTL]: (w, b) => void w.ustring(b.path).buffer(b.data).acls(b.acl).int(b.parentCVersion).long(b.ttl),
  [OpCode.delete]: writeDelete,
  [OpCode.deleteContainer]: writeDelete,
  [OpCode.setData]: (w, b) => void w.ustring(b.path).buffer(b.data).int(b.version),
  [OpCode.setACL]: (w, b) => void w.ustring(b.path).acls(b.acl).int(b.version),
  [OpCode.check]: (w, b) => void w.ustring(b.path).int(b.version),
  [OpCode.createSession]: (w, b) => void w.int(b.timeOut),
  [OpCode.closeSession]: (w, b) => void w.strings(b.paths2Delete),
  [OpCode.error]: (w, b) => void w.int(b.err),
  // MultiTxn: vector<Txn{int type; buffer data}>, each data the serialized sub-record.
  [OpCode.multi]: (w, b) => {
    w.int(b.txns.length);
    for (const t of b.txns) {
      const sub = new JuteWriter(64);
      writeBody(sub, t);
      w.int(t.type).buffer(sub.toBuffer());
    }
  },
};

function writeBody(w: JuteWriter, b: TxnBody): void {
  (bodyWriters[b.type] as (w: JuteWriter, b: TxnBody) => void)(w, b);
}

/** The bytes of one log entry (what FileTxnLog checksums): header, then the body. */
export function encodeTxn(header: TxnHeader, body: TxnBody, w = new JuteWriter(256)): Buffer {
  w.reset();
  w.long(header.clientId).int(header.cxid).long(header.zxid).long(BigInt(header.time)).int(header.type);
  writeBody(w, body);
  return w.toBufferCopy();
}

function nonNullPath(r: JuteReader): string {
  const p = r.ustring('path');
  if (p === null) throw new ProtocolError('null path in txn');
  return p;
}

/**
 * The last ACL list read, with its bytes: a log's creates nearly all carry the same list, so the
 * next equal bytes give the same (frozen, shared) array without decoding it again.
 */
let lastAclBytes: Buffer = Buffer.alloc(0);
let lastAcl: readonly ACL[] = [];

function acls(r: JuteReader): readonly ACL[] {
  if (lastAclBytes.length > 0 && r.skipIfNext(lastAclBytes)) return lastAcl;
  const start = r.offset;
  const list = r.acls() ?? [];
  lastAclBytes = r.copyFrom(start);
  lastAcl = Object.freeze(list);
  return lastAcl;
}

function readBody(r: JuteReader, type: number): TxnBody {
  switch (type) {
    case OpCode.create:
    case OpCode.create2:
      return { type, path: nonNullPath(r), data: r.bufferView('data'), acl: acls(r), ephemeral: r.bool(), parentCVersion: r.int() };
    case OpCode.createContainer:
      return { type, path: nonNullPath(r), data: r.bufferView('data'), acl: acls(r), parentCVersion: r.int() };
    case OpCode.createTTL:
      return { type, path: nonNullPath(r), data: r.bufferView('data'), acl: acls(r), parentCVersion: r.int(), ttl: r.long() };
    case OpCode.delete:
    case OpCode.deleteContainer:
      return { type, path: nonNullPath(r) };
    case OpCode.reconfig:
    case OpCode.setData:
      return { type: OpCode.setData, path: nonNullPath(r), data: r.bufferView('data'), version: r.int() };
    case OpCode.setACL:
      return { type, path: nonNullPath(r), acl: acls(r), version: r.int() };
    case OpCode.check:
      return { type, path: nonNullPath(r), version: r.int() };
    case OpCode.createSession:
      return { type, timeOut: r.int('timeOut') };
    case OpCode.closeSession:
      // Logs older than 3.6 have no CloseSessionTxn: the session's ephemerals all go.
      return { type, paths2Delete: r.remaining === 0 ? null : r.strings('paths2Delete') };
    case OpCode.error:
      return { type, err: r.int('err') };
    case OpCode.multi: {
      const n = r.int('txns');
      if (n < 0 || n * 8 > r.remaining) throw new ProtocolError(`bad multi txn count ${n}`);
      const txns: TxnBody[] = [];
      for (let i = 0; i < n; i++) {
        const subType = r.int('type');
        const data = r.bufferView('data') ?? Buffer.alloc(0);
        const sub = new JuteReader(data);
        txns.push(readBody(sub, subType));
      }
      return { type, txns };
    }
    default:
      throw new ProtocolError(`unsupported txn type ${type}`);
  }
}

/** Decodes one log entry. Throws ProtocolError on anything malformed. */
export function decodeTxn(bytes: Buffer): Txn {
  const r = new JuteReader(bytes);
  const header: TxnHeader = { clientId: r.long(), cxid: r.int(), zxid: r.long(), time: Number(r.long()), type: r.int() };
  const body = readBody(r, header.type);
  if (r.remaining >= 12) return { header, body, digest: { version: r.int(), treeDigest: r.long() } };
  return { header, body };
}
