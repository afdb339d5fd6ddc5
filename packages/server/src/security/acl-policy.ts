/**
 * ACL rules as ZooKeeper enforces them (docs/zookeeper-wire-protocol.md §8): the `world`, `auth`, `digest`, `ip`,
 * `sasl` and `x509` schemes, the fix-up of ACL lists on create/setACL, permission checks and auth
 * packets.
 *
 * `x509` is ZooKeeper's X509AuthenticationProvider: a TLS connection with a verified client
 * certificate is `x509:<subject>` (RFC 2253, as Java's X500Principal.getName() writes it) from
 * the start; an ACL id matches that subject exactly.
 */
import type { ACL, ClientInfo, Id } from '@tenure/protocol';
import { digestFromAuth, ErrorCode, errorCodeName, TenureError } from '@tenure/protocol';

/** Java's String.split: trailing empty strings are dropped. */
function javaSplit(s: string, sep: string): string[] {
  const parts = s.split(sep);
  while (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 1 && parts[0] === '' && s.length > 0) return [];
  return parts;
}

function ipv4Bytes(addr: string): number[] | undefined {
  const parts = addr.split('.');
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^[+-]?\d+$/.test(p)) return undefined;
    const v = Number(p);
    if (v < 0 || v > 255) return undefined;
    out.push(v);
  }
  return out;
}

function maskBytes(b: number[], bits: number): void {
  for (let i = 0; i < b.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    b[i] = b[i]! & ((0xff << (8 - keep)) & 0xff);
  }
}

/** `a.b.c.d` or `a.b.c.d/bits`; ZooKeeper's ip provider knows IPv4 only. */
function ipExpr(expr: string): { addr: number[]; bits: number } | undefined {
  const slash = expr.indexOf('/');
  const addr = ipv4Bytes(slash < 0 ? expr : expr.slice(0, slash));
  if (addr === undefined) return undefined;
  let bits = 32;
  if (slash >= 0) {
    const b = expr.slice(slash + 1);
    if (!/^[+-]?\d+$/.test(b)) return undefined;
    bits = Number(b);
    if (bits < 0 || bits > 32) return undefined;
  }
  return { addr, bits };
}

function ipMatches(clientAddr: string, expr: string): boolean {
  const acl = ipExpr(expr);
  const remote = ipv4Bytes(clientAddr);
  if (acl === undefined || remote === undefined) return false;
  maskBytes(acl.addr, acl.bits);
  maskBytes(remote, acl.bits);
  return acl.addr.every((v, i) => v === remote[i]);
}

interface Provider {
  /** Counts as an authenticated identity for the `auth` scheme. */
  authenticated: boolean;
  valid(id: string): boolean;
  matches(callerId: string, aclId: string): boolean;
  userName(id: string): string;
}

const providers: Record<string, Provider> = {
  // ZooKeeper's SASLAuthenticationProvider: the id is the authenticated user (a Kerberos-style
  // name; one with '@' must be user[/host]@REALM); an ACL matches it exactly.
  sasl: {
    authenticated: true,
    valid: (id) => !id.includes('@') || /^[^/@]*(\/[^/@]*)?@[^/@]*$/.test(id),
    matches: (a, b) => a === b,
    userName: (id) => id,
  },
  digest: {
    authenticated: true,
    valid: (id) => javaSplit(id, ':').length === 2,
    matches: (a, b) => a === b,
    userName: (id) => id.split(':')[0] ?? id,
  },
  x509: {
    authenticated: true,
    // ZooKeeper accepts what X500Principal parses; at least one `type=value`.
    valid: (id) => /^[^=,+]+=/.test(id),
    matches: (a, b) => a === b,
    userName: (id) => id,
  },
  ip: {
    authenticated: false,
    valid: (id) => ipExpr(id) !== undefined,
    matches: ipMatches,
    userName: (id) => id,
  },
};

/** Thrown by the rules below with a ZooKeeper error code. */
/**
 * A ZooKeeper error code raised inside the semantics and turned into a reply; it never leaves the
 * server. One instance per code, made once, so a throw on the request path costs no allocation
 * and no stack trace.
 */
export class KeeperCode extends TenureError {
  override name = 'KeeperCode';
  private static readonly byCode = new Map<number, KeeperCode>();

  private constructor(readonly keeperCode: number) {
    super(errorCodeName(keeperCode), `ZooKeeper error ${errorCodeName(keeperCode)} (${keeperCode})`);
  }

  static of(keeperCode: number): KeeperCode {
    let k = KeeperCode.byCode.get(keeperCode);
    if (k === undefined) KeeperCode.byCode.set(keeperCode, (k = new KeeperCode(keeperCode)));
    return k;
  }
}

function sameAcl(a: ACL, b: ACL): boolean {
  return a.perms === b.perms && a.id.scheme === b.id.scheme && a.id.id === b.id.id;
}

/**
 * Nodes share their ACL lists, as ZooKeeper's ACL cache does: most trees use a handful of lists,
 * and a shared frozen list costs nothing per node. The table stops growing at a bound.
 */
const internedAcls = new Map<string, readonly ACL[]>();
const MAX_INTERNED_ACLS = 10_000;

/**
 * The shared, frozen copy of an ACL list (also used when a snapshot or a txn log is loaded): the
 * caller's list and its objects are never kept, so a decoder's arrays can be handed in as they are.
 */
export function intern(acl: readonly ACL[]): readonly ACL[] {
  let key = '';
  for (const a of acl) key += `${a.perms}\u0000${a.id.scheme}\u0000${a.id.id}\u0001`;
  const found = internedAcls.get(key);
  if (found !== undefined) return found;
  const frozen = Object.freeze(acl.map((a) => Object.freeze({ perms: a.perms, id: Object.freeze({ ...a.id }) })));
  if (internedAcls.size < MAX_INTERNED_ACLS) internedAcls.set(key, frozen);
  return frozen;
}

/**
 * Validates an ACL list for create/setACL and expands `auth` entries into the caller's
 * authenticated ids (ZooKeeper's fixupACL). Throws KeeperCode(INVALIDACL). The list returned is
 * shared and frozen.
 */
export function fixupAcl(acls: readonly ACL[] | null, authIds: readonly Id[]): readonly ACL[] {
  const unique: ACL[] = [];
  for (const a of acls ?? []) if (!unique.some((u) => sameAcl(u, a))) unique.push(a);
  if (unique.length === 0) throw KeeperCode.of(ErrorCode.INVALIDACL);
  const out: ACL[] = [];
  for (const a of unique) {
    const { scheme, id } = a.id;
    if (scheme === 'world' && id === 'anyone') {
      out.push({ perms: a.perms, id: { scheme, id } });
    } else if (scheme === 'auth') {
      let any = false;
      for (const caller of authIds) {
        if (providers[caller.scheme]?.authenticated) {
          any = true;
          out.push({ perms: a.perms, id: { scheme: caller.scheme, id: caller.id } });
        }
      }
      if (!any) throw KeeperCode.of(ErrorCode.INVALIDACL);
    } else {
      const p = providers[scheme];
      if (p === undefined || !p.valid(id)) throw KeeperCode.of(ErrorCode.INVALIDACL);
      out.push({ perms: a.perms, id: { scheme, id } });
    }
  }
  return intern(out);
}

/** True when the caller's ids grant `perm` on a node with `acl` (ZooKeeper's checkACL). */
export function permits(acl: readonly ACL[], perm: number, authIds: readonly Id[]): boolean {
  if (acl.length === 0) return true;
  for (let i = 0; i < authIds.length; i++) if (authIds[i]!.scheme === 'super') return true;
  for (let i = 0; i < acl.length; i++) {
    const a = acl[i]!;
    if ((a.perms & perm) === 0) continue;
    const { scheme, id } = a.id;
    if (scheme === 'world' && id === 'anyone') return true;
    const p = providers[scheme];
    if (p === undefined) continue;
    for (const caller of authIds) if (caller.scheme === scheme && p.matches(caller.id, id)) return true;
  }
  return false;
}

/** Throws KeeperCode(NOAUTH) unless permitted. */
export function checkAcl(acl: readonly ACL[], perm: number, authIds: readonly Id[]): void {
  if (!permits(acl, perm, authIds)) throw KeeperCode.of(ErrorCode.NOAUTH);
}

/** getACL without ADMIN shows digest ids as `user:x`. */
export function maskDigests(acl: readonly ACL[]): ACL[] {
  return acl.map((a) =>
    a.id.scheme === 'digest'
      ? { perms: a.perms, id: { scheme: 'digest', id: a.id.id.replace(/:.*/s, ':x') } }
      : { perms: a.perms, id: { ...a.id } },
  );
}

/**
 * The identities an auth packet adds, or undefined for AUTHFAILED (unknown scheme).
 * A wrong digest password is not a failure: it yields an identity that matches nothing.
 */
export function authenticate(
  scheme: string,
  auth: Buffer | null,
  clientAddr: string,
  superDigest: string | undefined,
  current: readonly Id[] = [],
): Id[] | undefined {
  if (scheme === 'digest') {
    if (auth === null) return undefined;
    const digest = digestFromAuth(auth.toString('utf8'));
    const ids: Id[] = [];
    if (superDigest !== undefined && digest === superDigest) ids.push({ scheme: 'super', id: '' });
    ids.push({ scheme: 'digest', id: digest });
    return ids;
  }
  if (scheme === 'ip') return [{ scheme: 'ip', id: clientAddr }];
  // The certificate is the credential: an x509 auth packet succeeds only on a connection that has one.
  if (scheme === 'x509') {
    const x509 = current.filter((id) => id.scheme === 'x509');
    return x509.length > 0 ? x509 : undefined;
  }
  return undefined;
}

/** whoAmI's view of a connection's identities. */
export function clientInfos(authIds: readonly Id[]): ClientInfo[] {
  return authIds.map((id) => ({ authScheme: id.scheme, user: providers[id.scheme]?.userName(id.id) ?? id.id }));
}
