/**
 * The one bounded walk behind every recipe view: breadth first from a path, a getData per node
 * (data and Stat) and a getChildren where the Stat has children, pipelined on the client's one
 * session with a bounded number of requests in flight, stopping after `limit` nodes.
 *
 * Queue items are not read one by one: a queue of 100,000 items would eat the limit. A listing
 * whose children include queue items (`queue-…<10 digits>`, `qn-<10 digits>`) keeps their names
 * (the depth is counted from them), reads only the oldest, and walks the other children as usual.
 */
import { setMaxListeners } from 'node:events';
import { KeeperError, NoAuthError, NoNodeError, type Client, type Stat, InvalidArgumentError, asError } from '@tenure/client';

/** One node the walk read. */
export interface WalkedNode {
  readonly path: string;
  /** The last path segment ('' for '/'). */
  readonly name: string;
  readonly data: Buffer;
  readonly stat: Stat;
  /** Its children's names (unsorted, as the server listed them); [] when it has none. */
  readonly children: readonly string[];
  /** The children that are queue items (not read, except the oldest: see `oldestItem`). */
  readonly queueItems: readonly string[];
  /** The oldest queue item (lowest sequence), read; null when there are no items or it vanished. */
  readonly oldestItem: WalkedNode | null;
}

export interface WalkOptions {
  /** Stop after reading this many nodes. Default 10,000. */
  limit?: number;
  /** Requests in flight at once. Default 32. */
  concurrency?: number;
  signal?: AbortSignal;
}

export interface WalkResult {
  readonly root: string;
  /** Every node read, in the order the reads completed (parents before their children). */
  readonly nodes: readonly WalkedNode[];
  readonly visited: number;
  readonly limit: number;
  /** True when nodes were left unread because of the limit. */
  readonly truncated: boolean;
  /** Nodes that could not be read (NOAUTH, ...); their subtrees are not walked. */
  readonly errors: readonly { path: string; error: string }[];
}

/** The default `limit`. */
export const DEFAULT_WALK_LIMIT = 10_000;

/** A DistributedQueue item (also its priority, delay and id variants) or a SimpleDistributedQueue item. */
const QUEUE_ITEM = /^(?:queue-.*|qn-)\d{10}$/;

/** Whether a child name is a queue item (see the module comment). */
export function isQueueItem(name: string): boolean {
  return QUEUE_ITEM.test(name);
}

/** The 10-digit sequence at the end of a name, or '' . */
export function sequenceOf(name: string): string {
  const m = /\d{10}$/.exec(name);
  return m ? m[0] : '';
}

export function childPath(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

function lastSegment(path: string): string {
  return path === '/' ? '' : path.slice(path.lastIndexOf('/') + 1);
}

function errorName(err: unknown): string {
  return err instanceof KeeperError ? err.codeName : err instanceof Error ? err.message : String(err);
}

/** A node that is not there any more, or that we may not read: left out; anything else ends the walk. */
function skippable(err: unknown): boolean {
  return err instanceof NoNodeError || err instanceof NoAuthError;
}

/**
 * Walks the tree under `root` (breadth first, `/zookeeper` left out unless `root` is inside it)
 * and resolves with what it read. Rejects with NoNodeError when `root` does not exist, and on
 * connection errors, aborts and the like; nodes below it that vanish meanwhile are left out.
 */
export async function walkTree(client: Client, root: string, options: WalkOptions = {}): Promise<WalkResult> {
  const limit = options.limit ?? DEFAULT_WALK_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new InvalidArgumentError(`limit must be a positive integer, got ${String(limit)}`);
  const concurrency = Math.max(1, options.concurrency ?? 32);
  // One listener on the caller's signal; our own signal carries it to every request in flight.
  const own = new AbortController();
  setMaxListeners(concurrency * 2 + 8, own.signal);
  const signal = own.signal;
  const forward = (): void => own.abort(options.signal?.reason);
  if (options.signal?.aborted) forward();
  options.signal?.addEventListener('abort', forward, { once: true });
  const skipSystem = !(root === '/zookeeper' || root.startsWith('/zookeeper/'));
  const nodes: WalkedNode[] = [];
  const errors: { path: string; error: string }[] = [];
  const pending: string[] = [root];
  let head = 0;
  let visited = 0;

  async function read(path: string): Promise<{ data: Buffer; stat: Stat } | null> {
    try {
      return await client.getData(path, { signal });
    } catch (err) {
      if (!skippable(err) || (path === root && err instanceof NoNodeError)) throw err;
      if (!(err instanceof NoNodeError)) errors.push({ path, error: errorName(err) });
      return null;
    }
  }

  async function visit(path: string): Promise<void> {
    const got = await read(path);
    if (got === null) return;
    let children: string[] = [];
    if (got.stat.numChildren > 0) {
      try {
        children = (await client.getChildren(path, { signal })).children;
      } catch (err) {
        if (!skippable(err)) throw err;
        if (!(err instanceof NoNodeError)) errors.push({ path, error: errorName(err) });
      }
    }
    const queueItems: string[] = [];
    let oldestName: string | null = null;
    for (const c of children) {
      if (isQueueItem(c)) {
        queueItems.push(c);
        if (oldestName === null || sequenceOf(c) < sequenceOf(oldestName)) oldestName = c;
      } else if (!(skipSystem && path === '/' && c === 'zookeeper')) {
        pending.push(childPath(path, c));
      }
    }
    let oldestItem: WalkedNode | null = null;
    if (oldestName !== null && visited < limit) {
      visited++;
      const itemPath = childPath(path, oldestName);
      const item = await read(itemPath);
      if (item !== null)
        oldestItem = { path: itemPath, name: oldestName, data: item.data, stat: item.stat, children: [], queueItems: [], oldestItem: null };
    }
    nodes.push({ path, name: lastSegment(path), data: got.data, stat: got.stat, children, queueItems, oldestItem });
  }

  let failure: Error | null = null;
  await new Promise<void>((resolve) => {
    let running = 0;
    const pump = (): void => {
      while (failure === null && running < concurrency && head < pending.length && visited < limit) {
        const path = pending[head++]!;
        visited++;
        running++;
        visit(path).then(
          () => {
            running--;
            pump();
          },
          (err: unknown) => {
            running--;
            failure ??= asError(err);
            pump();
          },
        );
      }
      if (running === 0) resolve();
    };
    pump();
  });
  options.signal?.removeEventListener('abort', forward);
  // Set by the callbacks above; TypeScript still narrows it to null here.
  const failed = failure as Error | null;
  if (failed !== null) throw failed;
  return { root, nodes, visited, limit, truncated: head < pending.length, errors };
}
