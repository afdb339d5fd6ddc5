/**
 * The file of `tenure dump --json` and `tenure import`: every node under a root, parents before
 * children, with its data (base64, the raw bytes), its ACL and its mode.
 *
 * Modes: ZooKeeper's Stat tells an ephemeral node (ephemeralOwner) from a persistent one, but shows
 * containers and TTL nodes as persistent (DataNode.copyStat hides their owner), so a dump records
 * `persistent` for them. `import` honours `container` and `ttl` (with `ttlMs`) in a file written
 * or edited by hand. Sequential nodes keep their names.
 */
import type { ACL } from '@tenure/client';
import { parseAcl, permsText } from './acl-text.js';
import { UsageError } from './usage-error.js';

export const DUMP_FORMAT = 'tenure-dump';
export const DUMP_VERSION = 1;

export type DumpMode = 'persistent' | 'ephemeral' | 'container' | 'ttl';

export interface DumpAcl {
  scheme: string;
  id: string;
  /** Letters of `cdrwa`. */
  perms: string;
}

export interface DumpNode {
  path: string;
  /** The data, base64. */
  data: string;
  acl: DumpAcl[];
  mode: DumpMode;
  /** For `ttl`. */
  ttlMs?: number;
  /** For `ephemeral`: the session that owned it when dumped (hex). */
  ephemeralOwner?: string;
}

export interface DumpFile {
  format: typeof DUMP_FORMAT;
  version: typeof DUMP_VERSION;
  /** The path that was dumped. */
  root: string;
  /** When (ISO 8601). */
  dumpedAt: string;
  /** True when the dump's --limit left nodes out. */
  truncated: boolean;
  nodes: DumpNode[];
}

export function dumpAcl(acl: readonly ACL[]): DumpAcl[] {
  return acl.map((a) => ({ scheme: a.id.scheme, id: a.id.id, perms: permsText(a.perms) }));
}

export function aclOf(node: DumpNode): ACL[] {
  return parseAcl(node.acl.map((a) => `${a.scheme}:${a.id}:${a.perms}`).join(','));
}

const MODES: ReadonlySet<string> = new Set(['persistent', 'ephemeral', 'container', 'ttl']);

/** Checks a parsed dump file; names the first problem. */
export function checkDumpFile(value: unknown, source: string): DumpFile {
  const bad = (what: string): never => {
    throw new UsageError(`${source}: not a tenure dump: ${what}`);
  };
  if (value === null || typeof value !== 'object') bad('expected a JSON object');
  const f = value as Partial<DumpFile>;
  if (f.format !== DUMP_FORMAT) bad(`"format" is not "${DUMP_FORMAT}"`);
  if (f.version !== DUMP_VERSION) bad(`version ${String(f.version)} (this tenure reads ${DUMP_VERSION})`);
  if (typeof f.root !== 'string' || !f.root.startsWith('/')) bad('"root" must be an absolute path');
  if (!Array.isArray(f.nodes)) bad('"nodes" must be an array');
  f.nodes!.forEach((n, i) => {
    const at = `nodes[${i}]`;
    if (n === null || typeof n !== 'object') bad(`${at} is not an object`);
    if (typeof n.path !== 'string' || !(n.path === f.root || n.path.startsWith(f.root === '/' ? '/' : `${f.root}/`)))
      bad(`${at}.path is not under the root`);
    if (typeof n.data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(n.data)) bad(`${at}.data is not base64`);
    if (
      !Array.isArray(n.acl) ||
      n.acl.some((a) => typeof a?.scheme !== 'string' || typeof a.id !== 'string' || typeof a.perms !== 'string')
    )
      bad(`${at}.acl`);
    if (!MODES.has(n.mode)) bad(`${at}.mode ${JSON.stringify(n.mode)}`);
    if (n.mode === 'ttl' && !(typeof n.ttlMs === 'number' && n.ttlMs > 0)) bad(`${at}: a ttl node needs ttlMs`);
  });
  return f as DumpFile;
}
