/** dump (a subtree to one JSON document: data base64, ACLs, modes) and import (that document back). */
import { readFile } from 'node:fs/promises';
import { CreateMode, NodeExistsError, type ACL, type Client } from '@tenure/client';
import { sessionHex } from '../inspect/index.js';
import { about } from './command-about.js';
import type { CommandSpec } from './command-spec.js';
import { aclOf, checkDumpFile, DUMP_FORMAT, DUMP_VERSION, dumpAcl, type DumpFile, type DumpNode } from './dump-format.js';
import { readSubtree } from './subtree.js';
import { UsageError } from './usage-error.js';
import { limitFlag } from './zk-commands.js';

export const DEFAULT_DUMP_LIMIT = 1_000_000;

/** The dump of `root`: every node under it (`/zookeeper` left out when `root` is `/`). */
export async function dumpTree(client: Client, root: string, limit: number): Promise<DumpFile> {
  const t = await readSubtree(client, root, { limit, data: true, acl: true, skipSystem: true });
  const nodes = t.nodes.map((n): DumpNode => {
    const owner = n.stat.ephemeralOwner;
    return {
      path: n.path,
      data: (n.data ?? Buffer.alloc(0)).toString('base64'),
      acl: dumpAcl(n.acl ?? []),
      mode: owner !== 0n ? 'ephemeral' : 'persistent',
      ...(owner !== 0n ? { ephemeralOwner: sessionHex(owner) } : {}),
    };
  });
  return { format: DUMP_FORMAT, version: DUMP_VERSION, root, dumpedAt: new Date().toISOString(), truncated: t.truncated, nodes };
}

const dump: CommandSpec = {
  ...about('dump'),
  options: { limit: { type: 'string' } },
  args: { min: 0, max: 1 },
  async run({ client, out }, { args, flags }) {
    const file = await dumpTree(client, args[0] ?? '/', limitFlag(flags, DEFAULT_DUMP_LIMIT));
    if (file.truncated) out.warn(`tenure: the dump stopped after ${file.nodes.length} nodes (--limit): it is incomplete`);
    // The dump's format is JSON, with or without --json.
    out.document(file);
  },
};

export interface ImportOptions {
  /** Where the dump's root goes; default the dump's own root. */
  target?: string;
  /** Existing nodes get the file's data and ACL instead of failing with NodeExists. */
  overwrite?: boolean;
  /** Ephemeral nodes: left out (default; their sessions are gone), or created as persistent nodes. */
  ephemerals?: 'skip' | 'persistent';
}

export interface ImportResult {
  created: number;
  /** Existing nodes whose data or ACL was changed (--overwrite). */
  updated: number;
  /** Existing nodes that already had the file's data and ACL (--overwrite). */
  unchanged: number;
  skipped: number;
}

/** Gives an existing node the file's data and ACL, writing only what differs (a read-only node that already matches is fine). */
async function overwrite(client: Client, path: string, data: Buffer, acl: readonly ACL[], result: ImportResult): Promise<void> {
  const [current, currentAcl] = await Promise.all([client.getData(path), client.getACL(path)]);
  const sameAcl = aclKey(currentAcl.acl) === aclKey(acl);
  const sameData = current.data.equals(data);
  if (!sameData) await client.setData(path, data);
  if (!sameAcl) await client.setACL(path, acl);
  if (sameData && sameAcl) result.unchanged++;
  else result.updated++;
}

function aclKey(acl: readonly ACL[]): string {
  return acl
    .map((a) => `${a.id.scheme}:${a.id.id}:${a.perms}`)
    .sort()
    .join(',');
}

const BATCH = 64;

function modeOf(n: DumpNode, ephemerals: 'skip' | 'persistent'): { mode: CreateMode; ttlMs?: number } | null {
  switch (n.mode) {
    case 'container':
      return { mode: CreateMode.CONTAINER };
    case 'ttl':
      return { mode: CreateMode.PERSISTENT_WITH_TTL, ttlMs: n.ttlMs };
    case 'ephemeral':
      return ephemerals === 'skip' ? null : { mode: CreateMode.PERSISTENT };
    default:
      return { mode: CreateMode.PERSISTENT };
  }
}

/** Creates the dump's nodes, level by level (a level's creates pipelined), parents first. */
export async function importTree(client: Client, file: DumpFile, o: ImportOptions = {}): Promise<ImportResult> {
  const target = o.target ?? file.root;
  const move = (p: string): string => {
    const relative = p === file.root ? '' : p.slice(file.root === '/' ? 0 : file.root.length);
    return target === '/' ? relative || '/' : `${target}${relative}`;
  };
  const result: ImportResult = { created: 0, updated: 0, unchanged: 0, skipped: 0 };
  const skippedPrefixes: string[] = [];
  const byDepth = new Map<number, DumpNode[]>();
  for (const n of file.nodes) {
    const path = move(n.path);
    const depth = path === '/' ? 0 : path.split('/').length - 1;
    (byDepth.get(depth) ?? byDepth.set(depth, []).get(depth)!).push({ ...n, path });
  }
  // The target's missing ancestors, as plain persistent nodes.
  const parent = target.slice(0, Math.max(1, target.lastIndexOf('/')));
  if (parent !== '/' && (await client.exists(parent)) === null) {
    await client.create(parent, null, { createParents: true }).catch((e: unknown) => {
      if (!(e instanceof NodeExistsError)) throw e;
    });
  }
  for (const depth of [...byDepth.keys()].sort((a, b) => a - b)) {
    const level = byDepth.get(depth)!;
    for (let i = 0; i < level.length; i += BATCH) {
      await Promise.all(
        level.slice(i, i + BATCH).map(async (n) => {
          if (skippedPrefixes.some((p) => n.path.startsWith(`${p}/`))) {
            result.skipped++;
            return;
          }
          const how = modeOf(n, o.ephemerals ?? 'skip');
          if (how === null) {
            skippedPrefixes.push(n.path);
            result.skipped++;
            return;
          }
          const data = Buffer.from(n.data, 'base64');
          const acl = aclOf(n);
          if (n.path === '/') {
            if (o.overwrite) await overwrite(client, '/', data, acl, result);
            else result.skipped++;
            return;
          }
          try {
            await client.create(n.path, data, { ...how, acl });
            result.created++;
          } catch (err) {
            if (!(err instanceof NodeExistsError) || !o.overwrite) throw err;
            await overwrite(client, n.path, data, acl, result);
          }
        }),
      );
    }
  }
  return result;
}

async function readDumpFile(source: string): Promise<DumpFile> {
  let text: string;
  try {
    text = source === '-' ? await readStdin() : await readFile(source, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${source}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${source}: not JSON: ${(err as Error).message}`);
  }
  return checkDumpFile(value, source);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const importCommand: CommandSpec = {
  ...about('import'),
  options: { overwrite: { type: 'boolean' }, ephemerals: { type: 'string' } },
  args: { min: 1, max: 2 },
  pathArgs: [1],
  validate({ flags }) {
    if (flags.ephemerals !== undefined && flags.ephemerals !== 'skip' && flags.ephemerals !== 'persistent')
      throw new UsageError('import: --ephemerals: expected skip or persistent');
  },
  async run({ client, out }, { args, flags }) {
    const eph = flags.ephemerals === 'persistent' ? 'persistent' : 'skip';
    const file = await readDumpFile(args[0]!);
    const r = await importTree(client, file, { target: args[1], overwrite: flags.overwrite === true, ephemerals: eph });
    if (out.json) out.document({ source: args[0], root: args[1] ?? file.root, ...r });
    else
      out.line(
        `Imported ${r.created} nodes${r.updated ? `, updated ${r.updated}` : ''}${r.unchanged ? `, ${r.unchanged} unchanged` : ''}${r.skipped ? `, skipped ${r.skipped} (ephemeral nodes and what is under them, or /)` : ''}`,
      );
  },
};

export const DUMP_COMMANDS: readonly CommandSpec[] = [dump, importCommand];
