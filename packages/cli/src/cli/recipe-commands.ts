/**
 * The recipe-aware commands: locks, leaders, groups, services, queues, sessions. Each runs one
 * bounded walk (inspect/) under PATH (default /), `--limit` nodes at most.
 */
import { dataText, DEFAULT_WALK_LIMIT, inspectSessions, inspectWithWalk, sessionsOfWalk, type InspectResult, type RecipeReport } from '../inspect/index.js';
import type { CommandContext, CommandInput, CommandSpec } from './command-spec.js';
import { formatDuration } from './output.js';
import { limitFlag } from './zk-commands.js';

const LIMIT = { limit: { type: 'string' } } as const;

async function walk(ctx: CommandContext, input: CommandInput): Promise<InspectResult> {
  const r = await inspectWithWalk(ctx.client, { path: input.args[0] ?? '/', limit: limitFlag(input.flags, DEFAULT_WALK_LIMIT), signal: ctx.signal });
  const w = r.report.walk;
  if (w.truncated) ctx.out.warn(`tenure: the walk stopped at --limit ${w.limit} nodes under ${w.root}: some recipes may be missing`);
  for (const e of w.errors) ctx.out.warn(`tenure: could not read ${e.path}: ${e.error}`);
  return r;
}

/** A recipe command over one list of the report. */
function recipeCommand<K extends 'locks' | 'elections' | 'groups' | 'services' | 'queues'>(
  name: string,
  key: K,
  summary: string,
  example: string,
  table: (items: RecipeReport[K]) => { header: string[]; rows: string[][] },
  empty: string,
): CommandSpec {
  return {
    name,
    synopsis: `${name} [--limit N] [PATH]`,
    summary,
    example,
    options: LIMIT,
    args: { min: 0, max: 1 },
    async run(ctx, input) {
      const { report } = await walk(ctx, input);
      const items = report[key];
      if (ctx.out.json) {
        ctx.out.document({ walk: report.walk, at: report.at, [key]: items });
        return;
      }
      if (items.length === 0) {
        ctx.out.line(empty);
        return;
      }
      const t = table(items);
      ctx.out.table(t.header, t.rows);
    },
  };
}

const locks = recipeCommand(
  'locks',
  'locks',
  'each lock (Mutex, ReadWriteLock, Semaphore; Curator or Tenure) with its holder and waiters in queue order',
  'tenure locks /locks',
  (items) => ({
    header: ['LOCK', 'KIND', 'ROLE', 'SESSION', 'TOKEN', 'HELD FOR', 'DATA', 'NODE'],
    rows: items.flatMap((l) => [
      ...l.holders.map((h, i) => [l.path, l.kind, 'holder', h.sessionId, h.fencingToken, i === 0 ? formatDuration(l.heldForMs) : formatDuration(l.heldForMs === null ? null : Math.max(0, l.heldForMs - (h.ctime - l.holder!.ctime))), dataText(h.data), h.name]),
      ...l.waiters.map((w, i) => [l.path, l.kind, `waiter ${i + 1}`, w.sessionId, w.fencingToken, '-', dataText(w.data), w.name]),
    ]),
  }),
  'no locks found',
);

const leaders = recipeCommand(
  'leaders',
  'elections',
  'each election (LeaderLatch; LeaderSelector, whose nodes are a mutex’s) with its leader and participants',
  'tenure leaders /election',
  (items) => ({
    header: ['ELECTION', 'KIND', 'ROLE', 'ID', 'SESSION', 'TOKEN', 'FOR', 'NODE'],
    rows: items.flatMap((e) =>
      e.participants.map((p, i) => [e.path, e.kind, p.isLeader ? 'leader' : `participant ${i}`, dataText(p.data), p.sessionId, p.fencingToken, p.isLeader ? formatDuration(e.leaderForMs) : '-', p.name]),
    ),
  }),
  'no elections found',
);

const groups = recipeCommand(
  'groups',
  'groups',
  'each group (GroupMember: ephemeral children of a path) with its members',
  'tenure groups /groups',
  (items) => ({
    header: ['GROUP', 'MEMBER', 'SESSION', 'DATA'],
    rows: items.flatMap((g) => g.members.map((m) => [g.path, m.id, m.sessionId, dataText(m.data)])),
  }),
  'no groups found',
);

const services = recipeCommand(
  'services',
  'services',
  'the service discovery registry (curator-x-discovery: <base>/<name>/<id> with JSON)',
  'tenure services',
  (items) => ({
    header: ['SERVICE', 'INSTANCE', 'ADDRESS', 'PORT', 'TYPE', 'ENABLED', 'SESSION', 'PATH'],
    rows: items.flatMap((s) =>
      s.instances.map((i) => [s.name, i.id, i.address ?? '-', i.port === null ? (i.sslPort === null ? '-' : `ssl ${i.sslPort}`) : String(i.port), i.serviceType, i.enabled ? 'yes' : 'no', i.sessionId, i.path]),
    ),
  }),
  'no services found',
);

const queues = recipeCommand(
  'queues',
  'queues',
  'each queue (DistributedQueue family, SimpleDistributedQueue) with its depth and oldest item',
  'tenure queues /queues',
  (items) => ({
    header: ['QUEUE', 'KIND', 'DEPTH', 'OLDEST', 'AGE', 'DATA'],
    rows: items.map((q) => [q.path, q.kind, String(q.depth), q.oldest?.name ?? '-', formatDuration(q.oldestAgeMs), q.oldest ? dataText(q.oldest.data) : '-']),
  }),
  'no queues found',
);

const sessions: CommandSpec = {
  name: 'sessions',
  synopsis: 'sessions [--limit N]',
  summary: 'each session with its client address, timeout and ephemerals (four-letter words cons and dump, where the server allows them)',
  example: 'tenure sessions',
  options: LIMIT,
  args: { min: 0, max: 0 },
  async run(ctx, input) {
    let words = await inspectSessions({ connectString: ctx.options.server }, { signal: ctx.signal });
    if (words.source === 'tree') {
      for (const p of words.problems) ctx.out.warn(`tenure: cannot read sessions from ${p.server}: ${p.reason}`);
      ctx.out.warn('tenure: showing the owners of the ephemeral nodes found in the tree instead (no address, no timeout)');
      const { walk: w } = await walk(ctx, { args: [], flags: input.flags });
      words = { ...words, sessions: sessionsOfWalk(w) };
    }
    if (ctx.out.json) {
      ctx.out.document(words);
      return;
    }
    if (words.sessions.length === 0) {
      ctx.out.line('no sessions found');
      return;
    }
    ctx.out.table(
      ['SESSION', 'CLIENT', 'TIMEOUT', 'SERVER', 'LAST OP', 'EPHEMERALS'],
      words.sessions.map((s) => [s.sessionId, s.clientAddress ?? '-', s.timeoutMs === null ? '-' : `${s.timeoutMs} ms`, s.server ?? '-', s.lastOperation ?? '-', s.ephemerals.length === 0 ? '-' : s.ephemerals.join(' ')]),
    );
  },
};

export const RECIPE_COMMANDS: readonly CommandSpec[] = [locks, leaders, groups, services, queues, sessions];
