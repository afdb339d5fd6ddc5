/** zkCli's everyday commands: ls, get, set, create, delete (deleteall), stat, getAcl, setAcl. */
import { CreateMode, NoNodeError, type Client } from '@tenure/client';
import { decodeData } from '../inspect/index.js';
import { aclText, parseAcl, statJson, statLines } from './acl-text.js';
import { about } from './command-about.js';
import type { CommandSpec, FlagValues } from './command-spec.js';
import { readSubtree } from './subtree.js';
import { UsageError } from './usage-error.js';

/** The default node limit of recursive listings. */
export const DEFAULT_LIST_LIMIT = 100_000;

export function intFlag(flags: FlagValues, name: string, fallback: number | undefined): number | undefined {
  const v = flags[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (typeof v !== 'string' || !/^-?\d+$/.test(v) || !Number.isSafeInteger(n))
    throw new UsageError(`--${name}: expected an integer, got ${JSON.stringify(v)}`);
  return n;
}

export function limitFlag(flags: FlagValues, fallback: number): number {
  const n = intFlag(flags, 'limit', fallback)!;
  if (n < 1) throw new UsageError('--limit: expected a positive integer');
  return n;
}

/** The data argument: text as UTF-8, or with --base64 the decoded bytes. */
function dataArg(text: string | undefined, flags: FlagValues): Buffer {
  if (text === undefined) return Buffer.alloc(0);
  if (flags.base64 !== true) return Buffer.from(text, 'utf8');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new UsageError('--base64: the data is not base64');
  return Buffer.from(text, 'base64');
}

const VERSION = { type: 'string', short: 'v' } as const;
const BASE64 = { type: 'boolean' } as const;

const ls: CommandSpec = {
  ...about('ls'),
  options: { recursive: { type: 'boolean', short: 'R' }, stat: { type: 'boolean', short: 's' }, limit: { type: 'string' } },
  args: { min: 1, max: 1 },
  async run({ client, out }, { args, flags }) {
    const path = args[0]!;
    if (flags.recursive) {
      const tree = await readSubtree(client, path, { limit: limitFlag(flags, DEFAULT_LIST_LIMIT) });
      const paths = tree.nodes.map((n) => n.path);
      if (tree.truncated) out.warn(`tenure: stopped after ${paths.length} nodes (--limit)`);
      if (out.json) out.document({ path, paths, truncated: tree.truncated });
      else for (const p of paths) out.line(p);
      return;
    }
    const { children, stat } = await client.getChildren(path);
    children.sort();
    if (out.json) out.document({ path, children, ...(flags.stat ? { stat: statJson(stat) } : {}) });
    else {
      for (const c of children) out.line(c);
      if (flags.stat) for (const l of statLines(stat)) out.line(l);
    }
  },
};

const get: CommandSpec = {
  ...about('get'),
  options: { stat: { type: 'boolean', short: 's' } },
  args: { min: 1, max: 1 },
  async run({ client, out }, { args, flags }) {
    const { data, stat } = await client.getData(args[0]!);
    const view = decodeData(data);
    if (out.json) out.document({ path: args[0], data: view, ...(flags.stat ? { stat: statJson(stat) } : {}) });
    else {
      out.line(view.encoding === 'utf8' ? view.value : `base64:${view.value}`);
      if (flags.stat) for (const l of statLines(stat)) out.line(l);
    }
  },
};

const set: CommandSpec = {
  ...about('set'),
  options: { stat: { type: 'boolean', short: 's' }, version: VERSION, base64: BASE64 },
  args: { min: 2, max: 2 },
  validate: ({ args, flags }) => void dataArg(args[1], flags),
  async run({ client, out }, { args, flags }) {
    const stat = await client.setData(args[0]!, dataArg(args[1], flags), { version: intFlag(flags, 'version', -1) });
    if (out.json) out.document({ path: args[0], stat: statJson(stat) });
    else if (flags.stat) for (const l of statLines(stat)) out.line(l);
  },
};

function createMode(flags: FlagValues): { mode: CreateMode; ttlMs?: number } {
  const ttl = intFlag(flags, 'ttl', undefined);
  const e = flags.ephemeral === true;
  const s = flags.sequential === true;
  const c = flags.container === true;
  if (c && (e || s || ttl !== undefined)) throw new UsageError('-c (container) goes with none of -e, -s, -t');
  if (ttl !== undefined) {
    if (e) throw new UsageError('-t (TTL) nodes are persistent: not with -e');
    if (ttl <= 0) throw new UsageError('-t: the TTL must be a positive number of ms');
    return { mode: s ? CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL : CreateMode.PERSISTENT_WITH_TTL, ttlMs: ttl };
  }
  if (c) return { mode: CreateMode.CONTAINER };
  if (e) return { mode: s ? CreateMode.EPHEMERAL_SEQUENTIAL : CreateMode.EPHEMERAL };
  return { mode: s ? CreateMode.PERSISTENT_SEQUENTIAL : CreateMode.PERSISTENT };
}

const create: CommandSpec = {
  ...about('create'),
  options: {
    ephemeral: { type: 'boolean', short: 'e' },
    sequential: { type: 'boolean', short: 's' },
    container: { type: 'boolean', short: 'c' },
    ttl: { type: 'string', short: 't' },
    parents: { type: 'boolean', short: 'p' },
    acl: { type: 'string' },
    base64: BASE64,
  },
  args: { min: 1, max: 2 },
  validate({ args, flags }) {
    createMode(flags);
    if (typeof flags.acl === 'string') parseAcl(flags.acl);
    dataArg(args[1], flags);
  },
  async run({ client, out, interactive }, { args, flags }) {
    const { mode, ttlMs } = createMode(flags);
    const acl = typeof flags.acl === 'string' ? parseAcl(flags.acl) : undefined;
    const created = await client.create(args[0]!, dataArg(args[1], flags), { mode, ttlMs, acl, createParents: flags.parents === true });
    if (out.json) out.document({ path: created.path, stat: statJson(created.stat) });
    else out.line(`Created ${created.path}`);
    if (!interactive && (mode === CreateMode.EPHEMERAL || mode === CreateMode.EPHEMERAL_SEQUENTIAL)) {
      out.warn('tenure: note: an ephemeral node goes with this session, i.e. when this command exits (use the shell to keep it)');
    }
  },
};

async function deleteNode(client: Client, path: string, flags: FlagValues, recursive: boolean): Promise<void> {
  await client.delete(path, { version: intFlag(flags, 'version', -1), deletingChildren: recursive });
}

const del: CommandSpec = {
  ...about('delete'),
  options: { version: VERSION, recursive: { type: 'boolean', short: 'r' } },
  args: { min: 1, max: 1 },
  async run({ client, out }, { args, flags }) {
    await deleteNode(client, args[0]!, flags, flags.recursive === true);
    if (out.json) out.document({ path: args[0], deleted: true });
  },
};

const deleteall: CommandSpec = {
  ...about('deleteall'),
  args: { min: 1, max: 1 },
  async run({ client, out }, { args }) {
    await deleteNode(client, args[0]!, {}, true);
    if (out.json) out.document({ path: args[0], deleted: true });
  },
};

const stat: CommandSpec = {
  ...about('stat'),
  args: { min: 1, max: 1 },
  async run({ client, out }, { args }) {
    const s = await client.exists(args[0]!);
    if (s === null) throw new NoNodeError(args[0]);
    if (out.json) out.document({ path: args[0], stat: statJson(s) });
    else for (const l of statLines(s)) out.line(l);
  },
};

const getAcl: CommandSpec = {
  ...about('getAcl'),
  args: { min: 1, max: 1 },
  async run({ client, out }, { args }) {
    const { acl, stat } = await client.getACL(args[0]!);
    if (out.json)
      out.document({
        path: args[0],
        acl: acl.map((a) => ({ scheme: a.id.scheme, id: a.id.id, perms: permsOf(a.perms) })),
        aclVersion: stat.aversion,
      });
    else for (const a of acl) out.line(aclText(a));
  },
};

function permsOf(perms: number): string {
  return aclText({ perms, id: { scheme: '', id: '' } }).slice(2);
}

const setAcl: CommandSpec = {
  ...about('setAcl'),
  options: { version: VERSION },
  args: { min: 2, max: 2 },
  validate: ({ args }) => void parseAcl(args[1]!),
  async run({ client, out }, { args, flags }) {
    const stat = await client.setACL(args[0]!, parseAcl(args[1]!), { version: intFlag(flags, 'version', -1) });
    if (out.json) out.document({ path: args[0], stat: statJson(stat) });
  },
};

export const ZK_COMMANDS: readonly CommandSpec[] = [ls, get, set, create, del, deleteall, stat, getAcl, setAcl];
