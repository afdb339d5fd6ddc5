/**
 * The key layout under the prefix P (README.md "Key layout"):
 *
 *   P/meta            {"layout":1,"secret":"…"}: the layout version and the secret session passwords derive from
 *   P/n<path>         one znode: a JSON header line, "\n", then the data. create_revision = czxid,
 *                     mod_revision = mzxid (unless the header's mz says otherwise), lease = the ephemeral's session
 *   P/c<path>         the znode's children counter (child creates, decimal); mod_revision = pzxid
 *   P/s/<id hex>      one session {"t":timeoutMs}, on the session's lease (id = lease id)
 *   P/f/<front id>    one front end's marker: written with each of its commits and barriers
 *   P/compactor       the elected compactor's front id, on its lease (only with the compactor on)
 *
 * Paths are stored as they are (UTF-8), so `etcdctl get --prefix P/n/locks` reads a subtree.
 */
import type { ACL } from '@tenure/protocol';
import { CONTAINER_EPHEMERAL_OWNER, ttlFromEphemeralOwner } from '@tenure/protocol';
import type { NodeRecord } from '@tenure/server';

export const LAYOUT_VERSION = 1;

export class KeyLayout {
  readonly meta: string;
  readonly start: Buffer;
  readonly end: Buffer;
  constructor(readonly prefix: string) {
    const p = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
    this.meta = `${p}/meta`;
    this.start = Buffer.from(`${p}/`);
    // The range [P/, P0): '0' is the byte after '/'.
    this.end = Buffer.from(`${p}0`);
    this.base = p;
  }
  private readonly base: string;
  node(path: string): string {
    return `${this.base}/n${path}`;
  }
  children(path: string): string {
    return `${this.base}/c${path}`;
  }
  session(id: bigint): string {
    return `${this.base}/s/${BigInt.asUintN(64, id).toString(16).padStart(16, '0')}`;
  }
  front(id: string): string {
    return `${this.base}/f/${id}`;
  }
  /** The compactor's election key (on the elected engine's lease). */
  get compactor(): string {
    return `${this.base}/compactor`;
  }

  /** What a key is: a node, a children counter, a session, a front end's marker or the meta key. */
  parse(
    key: string,
  ): { kind: 'n' | 'c'; path: string } | { kind: 's'; id: bigint } | { kind: 'f'; id: string } | { kind: 'meta' | 'other' } {
    const rest = key.startsWith(this.base + '/') ? key.slice(this.base.length + 1) : undefined;
    if (rest === undefined) return { kind: 'other' };
    if (rest === 'meta') return { kind: 'meta' };
    const kind = rest[0];
    if ((kind === 'n' || kind === 'c') && rest[1] === '/') return { kind, path: rest.slice(1) };
    if (rest.startsWith('s/')) return { kind: 's', id: BigInt.asIntN(64, BigInt('0x' + rest.slice(2))) };
    if (rest.startsWith('f/')) return { kind: 'f', id: rest.slice(2) };
    return { kind: 'other' };
  }
}

/** Whether an ephemeralOwner is a session (so the node lives on its lease). */
export function isSessionOwner(owner: bigint): boolean {
  return owner !== 0n && owner !== CONTAINER_EPHEMERAL_OWNER && ttlFromEphemeralOwner(owner) === undefined;
}

interface Header {
  v: number;
  av: number;
  ct: number;
  mt: number;
  acl: Array<[number, string, string]>;
  o?: string;
  /** czxid when it is not the key's create_revision; "-1": this write's mod_revision. */
  cz?: string;
  /** mzxid when it is not the key's mod_revision (setACL keeps it). */
  mz?: string;
  /** The data is null (not empty). */
  nul?: 1;
}

/**
 * A node's value. `placeholder` is the zxid the evaluation used for this write; `createRevision`
 * the key's create_revision when it exists already.
 */
export function encodeNode(rec: NodeRecord, placeholder: bigint, createRevision: bigint | undefined): Buffer {
  const h: Header = {
    v: rec.version,
    av: rec.aversion,
    ct: rec.ctime,
    mt: rec.mtime,
    acl: rec.acl.map((a) => [a.perms, a.id.scheme, a.id.id]),
  };
  if (rec.ephemeralOwner !== 0n) h.o = rec.ephemeralOwner.toString();
  if (rec.czxid === placeholder) {
    if (createRevision !== undefined) h.cz = '-1';
  } else if (createRevision === undefined || createRevision !== rec.czxid) h.cz = rec.czxid.toString();
  if (rec.mzxid !== placeholder) h.mz = rec.mzxid.toString();
  if (rec.data === null) h.nul = 1;
  return Buffer.concat([Buffer.from(JSON.stringify(h) + '\n'), rec.data ?? Buffer.alloc(0)]);
}

export function decodeNode(value: Buffer, createRevision: bigint, modRevision: bigint): NodeRecord {
  const nl = value.indexOf(0x0a);
  const h = JSON.parse(value.subarray(0, nl).toString('utf8')) as Header;
  const acl: ACL[] = h.acl.map(([perms, scheme, id]) => ({ perms, id: { scheme, id } }));
  return {
    data: h.nul === 1 ? null : Buffer.from(value.subarray(nl + 1)),
    acl,
    version: h.v,
    aversion: h.av,
    ctime: h.ct,
    mtime: h.mt,
    ephemeralOwner: h.o === undefined ? 0n : BigInt(h.o),
    czxid: h.cz === undefined ? createRevision : h.cz === '-1' ? modRevision : BigInt(h.cz),
    mzxid: h.mz === undefined ? modRevision : BigInt(h.mz),
  };
}

/** The root's first value: ZooKeeper's root (world:anyone, all permissions, czxid and mzxid 0). */
export function rootValue(): Buffer {
  const h: Header = { v: 0, av: 0, ct: 0, mt: 0, acl: [[31, 'world', 'anyone']], cz: '0', mz: '0' };
  return Buffer.from(JSON.stringify(h) + '\n');
}
