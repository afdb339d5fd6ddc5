/**
 * Recipe inspection: who holds which lock, who waits, who leads, who is a member, what the
 * discovery registry and the queues hold, and which sessions own what, read from the node layouts
 * of Curator 5.4 and Tenure (recipe-layouts.ts) with one bounded walk.
 *
 * ```ts
 * import { inspectRecipes, inspectSessions } from '@tenure/cli';
 * const report = await inspectRecipes(client, { path: '/locks', limit: 5_000 });
 * for (const lock of report.locks) console.log(lock.path, lock.holder?.data.value, lock.waiters.length);
 * const sessions = await inspectSessions({ connectString: 'zk1:2181,zk2:2181' }, { report });
 * ```
 *
 * Everything returned is plain JSON-ready data (see report.ts): `JSON.stringify(report)` is the
 * CLI's `--json` output, and the page renders the same objects.
 */
import type { Client } from '@tenure/client';
import { classifyNodes } from './classify.js';
import { sessionHex } from './node-data.js';
import type { RecipeReport, SessionInfo, SessionsReport } from './report.js';
import { readSessions, serversOf, sessionsFromTree, type FourLetterWordOptions } from './session-words.js';
import { walkTree, type WalkOptions, type WalkResult } from './tree-walk.js';

export type * from './report.js';
export { decodeData, sessionHex, dataText } from './node-data.js';
export {
  walkTree,
  isQueueItem,
  sequenceOf,
  childPath,
  DEFAULT_WALK_LIMIT,
  type WalkOptions,
  type WalkResult,
  type WalkedNode,
} from './tree-walk.js';
export { classifyNodes } from './classify.js';
export { frameItems } from './queue-frame.js';
export { roleOf, parseServiceInstance, type NodeRole, type ServiceInstanceJson } from './recipe-layouts.js';
export { inspectObservers, parseWchp, type InspectObserversOptions } from './election-observers.js';
export type * from './observer-report.js';
export {
  readSessions,
  fourLetterWord,
  serversOf,
  parseCons,
  parseDump,
  sessionsFromTree,
  type FourLetterWordOptions,
  type ConsEntry,
} from './session-words.js';

export interface InspectOptions extends WalkOptions {
  /** Where to look: the walk starts here. Default '/'. */
  path?: string;
  /** The time held-for and ages are measured at (ms since the epoch). Default now. */
  now?: number;
}

/** A report and the walk it came from (for callers that also want the raw nodes, e.g. sessions from the tree). */
export interface InspectResult {
  readonly report: RecipeReport;
  readonly walk: WalkResult;
}

/**
 * Walks the tree under `options.path` (default '/') with one bounded walk (`limit`, default
 * 10,000 nodes; `report.walk.truncated` says when it was cut short) and returns every lock,
 * election, group, service and queue found there. Rejects with NoNodeError when the path does not
 * exist, and on connection errors, abort or ClosedError; nodes that vanish meanwhile are left out
 * and unreadable ones (NOAUTH) are listed in `report.walk.errors`.
 */
export async function inspectRecipes(client: Client, options: InspectOptions = {}): Promise<RecipeReport> {
  return (await inspectWithWalk(client, options)).report;
}

/** inspectRecipes, also returning the walked nodes. */
export async function inspectWithWalk(client: Client, options: InspectOptions = {}): Promise<InspectResult> {
  const walk = await walkTree(client, options.path ?? '/', options);
  return { report: classifyNodes(walk, options.now ?? Date.now()), walk };
}

/** Where inspectSessions asks. */
export interface SessionSource {
  /** The ZooKeeper connect string (`h1:2181,h2:2181/chroot`): its servers are asked `cons` and `dump`. Absent for a transport without TCP servers (the in-process embedded server). */
  connectString?: string;
}

export interface InspectSessionsOptions extends FourLetterWordOptions {
  /** A walk already made (inspectWithWalk's `walk`): its ephemeral nodes name sessions when the words are refused. */
  walk?: WalkResult;
}

/**
 * Each session with its client address, timeout and ephemerals, from `cons` and `dump` where the
 * servers allow them. Otherwise `source` is `tree`, `problems` says why, and the sessions are the
 * owners of the ephemeral nodes of `options.walk` (none without a walk). Never rejects for a
 * refused word or an unreachable server.
 */
export async function inspectSessions(source: SessionSource, options: InspectSessionsOptions = {}): Promise<SessionsReport> {
  const servers = source.connectString ? serversOf(source.connectString) : [];
  const fromWords: SessionsReport =
    servers.length > 0
      ? await readSessions(servers, options)
      : { source: 'tree', sessions: [], problems: [{ server: '(in-process)', reason: 'no TCP server to ask cons and dump of' }] };
  if (fromWords.source === 'four-letter-words' || options.walk === undefined) return fromWords;
  return { ...fromWords, sessions: sessionsOfWalk(options.walk) };
}

/** The sessions that own the ephemeral nodes a walk read, each with those nodes (no address, no timeout). */
export function sessionsOfWalk(walk: WalkResult): SessionInfo[] {
  return sessionsFromTree(
    walk.nodes.filter((n) => n.stat.ephemeralOwner !== 0n).map((n) => [n.path, sessionHex(n.stat.ephemeralOwner)] as const),
  );
}
