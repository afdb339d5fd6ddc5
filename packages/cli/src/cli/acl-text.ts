/** ACLs as zkCli writes them: `scheme:id:perms` with perms from `cdrwa`, several joined by commas. */
import { Perms, type ACL, type Stat } from '@tenure/client';
import { sessionHex } from '../inspect/index.js';
import { UsageError } from './usage-error.js';

const LETTERS: ReadonlyArray<[string, number]> = [
  ['c', Perms.CREATE],
  ['d', Perms.DELETE],
  ['r', Perms.READ],
  ['w', Perms.WRITE],
  ['a', Perms.ADMIN],
];

export function permsText(perms: number): string {
  return LETTERS.filter(([, bit]) => (perms & bit) !== 0)
    .map(([l]) => l)
    .join('');
}

export function aclText(acl: ACL): string {
  return `${acl.id.scheme}:${acl.id.id}:${permsText(acl.perms)}`;
}

/** Parses `world:anyone:cdrwa,digest:user:hash:r` (the id may hold colons: the perms follow the last one). */
export function parseAcl(text: string): ACL[] {
  const entries = text.split(',').filter((e) => e.length > 0);
  if (entries.length === 0) throw new UsageError('an ACL is required, e.g. world:anyone:cdrwa');
  return entries.map((entry) => {
    const first = entry.indexOf(':');
    const last = entry.lastIndexOf(':');
    if (first <= 0 || last === first)
      throw new UsageError(`ACL ${JSON.stringify(entry)}: expected scheme:id:perms (e.g. world:anyone:cdrwa)`);
    const letters = entry.slice(last + 1);
    let perms = 0;
    for (const ch of letters) {
      const bit = LETTERS.find(([l]) => l === ch);
      if (!bit) throw new UsageError(`ACL ${JSON.stringify(entry)}: unknown permission ${JSON.stringify(ch)} (use c, d, r, w, a)`);
      perms |= bit[1];
    }
    return { perms, id: { scheme: entry.slice(0, first), id: entry.slice(first + 1, last) } };
  });
}

/** A Stat as JSON: zxids decimal strings, ephemeralOwner hex, times ms. */
export function statJson(s: Stat): Record<string, string | number> {
  return {
    czxid: s.czxid.toString(),
    mzxid: s.mzxid.toString(),
    pzxid: s.pzxid.toString(),
    ctime: s.ctime,
    mtime: s.mtime,
    version: s.version,
    cversion: s.cversion,
    aversion: s.aversion,
    ephemeralOwner: sessionHex(s.ephemeralOwner),
    dataLength: s.dataLength,
    numChildren: s.numChildren,
  };
}

const hex = sessionHex;

/** A Stat as zkCli prints it. */
export function statLines(s: Stat): string[] {
  return [
    `cZxid = ${hex(s.czxid)}`,
    `ctime = ${new Date(s.ctime).toUTCString()}`,
    `mZxid = ${hex(s.mzxid)}`,
    `mtime = ${new Date(s.mtime).toUTCString()}`,
    `pZxid = ${hex(s.pzxid)}`,
    `cversion = ${s.cversion}`,
    `dataVersion = ${s.version}`,
    `aclVersion = ${s.aversion}`,
    `ephemeralOwner = ${hex(s.ephemeralOwner)}`,
    `dataLength = ${s.dataLength}`,
    `numChildren = ${s.numChildren}`,
  ];
}
