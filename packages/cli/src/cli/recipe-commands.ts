/**
 * The recipe-aware commands: locks, leaders, groups, services, queues, sessions. Each runs one
 * bounded walk (inspect/) under PATH (default /), `--limit` nodes at most.
 */
import {
  dataText,
  DEFAULT_WALK_LIMIT,
  inspectSessions,
  inspectWithWalk,
  sessionHex,
  sessionsOfWalk,
  type InspectResult,
  type QueueItemInfo,
  type RecipeReport,
} from '../inspect/index.js';
import { about } from './command-about.js';
import { tlsOptionsOf } from './connection.js';
import type { CommandContext, CommandInput, CommandSpec } from './command-spec.js';
import { formatDuration } from './output.js';
import { limitFlag } from './zk-commands.js';
import { leadersCommand as leaders } from './leaders-command.js';

const LIMIT = { limit: { type: 'string' } } as const;

async function walk(ctx: CommandContext, input: CommandInput): Promise<InspectResult> {
  const r = await inspectWithWalk(ctx.client, {
    path: input.args[0] ?? '/',
    limit: limitFlag(input.flags, DEFAULT_WALK_LIMIT),
    signal: ctx.signal,
  });
  const w = r.report.walk;
  if (w.truncated) ctx.out.warn(`tenure: the walk stopped at --limit ${w.limit} nodes under ${w.root}: some recipes may be missing`);
  for (const e of w.errors) ctx.out.warn(`tenure: could not read ${e.path}: ${e.error}`);
  return r;
}

/** A recipe command over one list of the report. */
export function recipeCommand<K extends 'locks' | 'elections' | 'groups' | 'services' | 'queues' | 'partitions' | 'timedLeases'>(
  name: string,
  key: K,
  empty: string,
  header: string[],
  rows: (items: RecipeReport[K]) => string[][],
): CommandSpec {
  return {
    ...about(name),
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
      ctx.out.table(header, rows(items));
    },
  };
}

const locks = recipeCommand(
  'locks',
  'locks',
  'no locks found',
  ['LOCK', 'KIND', 'ROLE', 'SESSION', 'TOKEN', 'HELD FOR', 'DATA', 'NODE'],
  (items) =>
    items.flatMap((l) => [
      ...l.holders.map((h, i) => [
        l.path,
        l.kind,
        'holder',
        h.sessionId,
        h.fencingToken,
        i === 0
          ? formatDuration(l.heldForMs)
          : formatDuration(l.heldForMs === null ? null : Math.max(0, l.heldForMs - (h.ctime - l.holder!.ctime))),
        dataText(h.data),
        h.name,
      ]),
      ...l.waiters.map((w, i) => [l.path, l.kind, `waiter ${i + 1}`, w.sessionId, w.fencingToken, '-', dataText(w.data), w.name]),
    ]),
);

// `leaders` shows observers too (leaders-command.ts).

const groups = recipeCommand('groups', 'groups', 'no groups found', ['GROUP', 'MEMBER', 'SESSION', 'DATA'], (items) =>
  items.flatMap((g) => g.members.map((m) => [g.path, m.id, m.sessionId, dataText(m.data)])),
);

const services = recipeCommand(
  'services',
  'services',
  'no services found',
  ['SERVICE', 'INSTANCE', 'ADDRESS', 'PORT', 'TYPE', 'ENABLED', 'SESSION', 'PATH'],
  (items) =>
    items.flatMap((s) =>
      s.instances.map((i) => [
        s.name,
        i.id,
        i.address ?? '-',
        i.port === null ? (i.sslPort === null ? '-' : `ssl ${i.sslPort}`) : String(i.port),
        i.serviceType,
        i.enabled ? 'yes' : 'no',
        i.sessionId,
        i.path,
      ]),
    ),
);

const queues = recipeCommand('queues', 'queues', 'no queues found', ['QUEUE', 'KIND', 'DEPTH', 'OLDEST', 'AGE', 'DATA'], (items) =>
  items.map((q) => [q.path, q.kind, String(q.depth), q.oldest?.name ?? '-', formatDuration(q.oldestAgeMs), oldestText(q.oldest)]),
);

/** The oldest item for people: the items of its frame when it has one (`a | b` for a putMulti), else its bytes. */
function oldestText(item: QueueItemInfo | null): string {
  if (item === null) return '-';
  if (item.items === null) return dataText(item.data);
  return item.items.length === 1 ? dataText(item.items[0]!) : item.items.map((i) => dataText(i, 20)).join(' | ');
}

const sessions: CommandSpec = {
  ...about('sessions'),
  options: LIMIT,
  args: { min: 0, max: 0 },
  async run(ctx, input) {
    let words = await inspectSessions({ connectString: ctx.options.server }, { signal: ctx.signal, tls: tlsOptionsOf(ctx.options) });
    if (words.source === 'tree') {
      for (const p of words.problems) ctx.out.warn(`tenure: cannot read sessions from ${p.server}: ${p.reason}`);
      ctx.out.warn('tenure: showing the owners of the ephemeral nodes found in the tree instead (no address, no timeout)');
      const { walk: w } = await walk(ctx, { args: [], flags: input.flags });
      words = { ...words, sessions: sessionsOfWalk(w) };
    }
    // This command's own session is no one's business.
    const own = sessionHex(ctx.client.sessionId);
    words = { ...words, sessions: words.sessions.filter((s) => s.sessionId !== own) };
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
      words.sessions.map((s) => [
        s.sessionId,
        s.clientAddress ?? '-',
        s.timeoutMs === null ? '-' : `${s.timeoutMs} ms`,
        s.server ?? '-',
        s.lastOperation ?? '-',
        s.ephemerals.length === 0 ? '-' : s.ephemerals.join(' '),
      ]),
    );
  },
};

export const RECIPE_COMMANDS: readonly CommandSpec[] = [locks, leaders, groups, services, queues, sessions];
