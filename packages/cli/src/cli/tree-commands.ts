/** Beyond zkCli: tree (with data sizes), find PATTERN, watch PATH (a persistent recursive watch). */
import type { PersistentWatchEvent } from '@tenure/client';
import { sessionHex } from '../inspect/index.js';
import { about } from './command-about.js';
import type { CommandSpec } from './command-spec.js';
import { formatBytes, jsonText } from './output.js';
import { readSubtree, type SubtreeNode } from './subtree.js';
import { DEFAULT_LIST_LIMIT, limitFlag } from './zk-commands.js';

interface TreeJson {
  path: string;
  name: string;
  bytes: number;
  ephemeralOwner?: string;
  children: TreeJson[];
}

const tree: CommandSpec = {
  ...about('tree'),
  options: { limit: { type: 'string' } },
  args: { min: 0, max: 1 },
  async run({ client, out }, { args, flags }) {
    const root = args[0] ?? '/';
    const t = await readSubtree(client, root, { limit: limitFlag(flags, DEFAULT_LIST_LIMIT) });
    if (t.truncated) out.warn(`tenure: stopped after ${t.nodes.length} nodes (--limit)`);
    if (out.json) {
      const byPath = new Map<string, TreeJson>();
      let top: TreeJson | undefined;
      for (const n of t.nodes) {
        const j: TreeJson = {
          path: n.path,
          name: n.path === '/' ? '/' : n.path.slice(n.path.lastIndexOf('/') + 1),
          bytes: n.stat.dataLength,
          children: [],
        };
        if (n.stat.ephemeralOwner !== 0n) j.ephemeralOwner = sessionHex(n.stat.ephemeralOwner);
        byPath.set(n.path, j);
        const parent = byPath.get(n.path.slice(0, Math.max(1, n.path.lastIndexOf('/'))));
        if (top === undefined) top = j;
        else parent?.children.push(j);
      }
      out.document({ tree: top, truncated: t.truncated });
      return;
    }
    for (const line of drawTree(t.nodes)) out.line(line);
  },
};

/** `├── name (12 B)` lines, with the guides of open ancestors. */
export function drawTree(nodes: readonly SubtreeNode[]): string[] {
  const parentOf = (path: string): string => path.slice(0, Math.max(1, path.lastIndexOf('/')));
  // Nodes come depth first with siblings in order, so the last one seen per parent is its last child.
  const lastChild = new Map<string, string>();
  for (const n of nodes) if (n.depth > 0) lastChild.set(parentOf(n.path), n.path);
  const lines: string[] = [];
  /** Per depth: whether a later sibling is still to come (draw the guide). */
  const open: boolean[] = [];
  for (const n of nodes) {
    const label = `(${formatBytes(n.stat.dataLength)})${n.stat.ephemeralOwner !== 0n ? ' [ephemeral]' : ''}`;
    if (n.depth === 0) {
      lines.push(`${n.path} ${label}`);
      continue;
    }
    const isLast = lastChild.get(parentOf(n.path)) === n.path;
    open[n.depth] = !isLast;
    let prefix = '';
    for (let d = 1; d < n.depth; d++) prefix += open[d] ? '│   ' : '    ';
    lines.push(`${prefix}${isLast ? '└── ' : '├── '}${n.path.slice(n.path.lastIndexOf('/') + 1)} ${label}`);
  }
  return lines;
}

/** A glob as a RegExp: `*` any run within one segment, `**` anything, `?` one character of a segment. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

const find: CommandSpec = {
  ...about('find'),
  options: { limit: { type: 'string' } },
  args: { min: 1, max: 2 },
  pathArgs: [1],
  async run({ client, out }, { args, flags }) {
    const pattern = args[0]!;
    const root = args[1] ?? '/';
    const re = globToRegExp(pattern);
    const whole = pattern.includes('/');
    const t = await readSubtree(client, root, { limit: limitFlag(flags, DEFAULT_LIST_LIMIT) });
    if (t.truncated) out.warn(`tenure: stopped after ${t.nodes.length} nodes (--limit)`);
    const matches = t.nodes.map((n) => n.path).filter((p) => re.test(whole ? p : p.slice(p.lastIndexOf('/') + 1)));
    if (out.json) out.document({ pattern, root, matches, truncated: t.truncated });
    else for (const m of matches) out.line(m);
  },
};

function eventJson(e: PersistentWatchEvent, at: number): Record<string, unknown> {
  const base: Record<string, unknown> = { at, type: e.type, path: e.path };
  if (e.type === 'reset') base.reason = e.reason;
  else if (e.zxid !== undefined) base.zxid = e.zxid.toString();
  return base;
}

const watch: CommandSpec = {
  ...about('watch'),
  args: { min: 1, max: 1 },
  async run({ client, out, signal }, { args }) {
    const path = args[0]!;
    const w = await client.addWatch(path, { recursive: true });
    out.warn(`tenure: watching ${path} (Ctrl-C to stop)`);
    let first = true;
    if (out.json) out.raw('[');
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- never rejects: removing it on the server logs its own failures
    const stop = (): void => void w.close();
    signal.addEventListener('abort', stop, { once: true });
    try {
      for await (const e of w) {
        const at = Date.now();
        if (out.json) {
          out.raw(`${first ? '\n' : ',\n'}${jsonText(eventJson(e, at), 0)}`);
          first = false;
        } else {
          const what = e.type === 'reset' ? `reset (${e.reason}: events may have been missed)` : e.type;
          out.line(`${new Date(at).toISOString()}  ${what}  ${e.path}`);
        }
      }
    } finally {
      signal.removeEventListener('abort', stop);
      await w.close();
      if (out.json) out.raw(`${first ? '' : '\n'}]\n`);
    }
  },
};

export const TREE_COMMANDS: readonly CommandSpec[] = [tree, find, watch];
