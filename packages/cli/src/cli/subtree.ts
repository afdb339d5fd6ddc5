/**
 * Reads a subtree for ls -R, tree, find and dump: level by level, every node of a level in
 * flight at once (in batches), each node's Stat, and on request its data and ACL. Bounded by a
 * node limit; the result is in depth-first order with children sorted by name.
 */
import { NoNodeError, type ACL, type Client, type Stat } from '@tenure/client';
import { childPath } from '../inspect/index.js';

export interface SubtreeNode {
  readonly path: string;
  readonly depth: number;
  readonly stat: Stat;
  /** Sorted. */
  readonly children: readonly string[];
  /** With `data: true`. */
  readonly data?: Buffer;
  /** With `acl: true`. */
  readonly acl?: readonly ACL[];
}

export interface SubtreeOptions {
  limit: number;
  data?: boolean;
  acl?: boolean;
  /** Leave `/zookeeper` (quotas, config) out when reading from `/`. */
  skipSystem?: boolean;
}

export interface Subtree {
  /** Depth-first, children in name order. */
  readonly nodes: readonly SubtreeNode[];
  /** True when the limit left nodes unread. */
  readonly truncated: boolean;
}

const BATCH = 64;

async function readOne(client: Client, path: string, depth: number, o: SubtreeOptions): Promise<SubtreeNode | null> {
  try {
    const [dataAndStat, acl] = await Promise.all([
      o.data ? client.getData(path) : client.exists(path).then((stat) => (stat === null ? null : { stat, data: undefined })),
      o.acl ? client.getACL(path).then((r) => r.acl) : undefined,
    ]);
    if (dataAndStat === null) {
      if (depth === 0) throw new NoNodeError(path);
      return null;
    }
    const { stat } = dataAndStat;
    const children = stat.numChildren > 0 ? (await client.getChildren(path)).children.sort() : [];
    return { path, depth, stat, children, ...(o.data ? { data: dataAndStat.data } : {}), ...(acl ? { acl } : {}) };
  } catch (err) {
    if (err instanceof NoNodeError && depth > 0) return null; // gone meanwhile
    throw err;
  }
}

/** Reads `root` and what is under it. NoNode on `root` rejects; nodes that vanish meanwhile are left out. */
export async function readSubtree(client: Client, root: string, o: SubtreeOptions): Promise<Subtree> {
  const byPath = new Map<string, SubtreeNode>();
  let level: string[] = [root];
  let depth = 0;
  let truncated = false;
  while (level.length > 0) {
    const next: string[] = [];
    for (let i = 0; i < level.length; i += BATCH) {
      const room = o.limit - byPath.size;
      if (room <= 0) {
        truncated = true;
        break;
      }
      const batch = level.slice(i, i + Math.min(BATCH, room));
      const read = await Promise.all(batch.map((p) => readOne(client, p, depth, o)));
      for (const n of read) {
        if (n === null) continue;
        byPath.set(n.path, n);
        for (const c of n.children) if (!(o.skipSystem && n.path === '/' && c === 'zookeeper')) next.push(childPath(n.path, c));
      }
      if (batch.length < Math.min(BATCH, level.length - i)) {
        truncated = true;
        break;
      }
    }
    if (truncated) break;
    level = next;
    depth++;
  }
  const nodes: SubtreeNode[] = [];
  const visit = (path: string): void => {
    const n = byPath.get(path);
    if (n === undefined) return;
    nodes.push(n);
    for (const c of n.children) visit(childPath(path, c));
  };
  visit(root);
  return { nodes, truncated };
}
