/**
 * `tenure leaders [PATH]`: each election with its leader and participants in order, then its
 * observers (sessions watching the election's path without a node in it: LeaderObservers), read
 * from the servers' `wchp`. When no server answers `wchp`, the table says nothing of observers and
 * a warning says why.
 */
import { dataText, DEFAULT_WALK_LIMIT, inspectObservers, inspectWithWalk, sessionHex, type ObserversReport } from '../inspect/index.js';
import { about } from './command-about.js';
import { tlsOptionsOf } from './connection.js';
import type { CommandSpec } from './command-spec.js';
import { formatDuration } from './output.js';
import { limitFlag } from './zk-commands.js';

export const leadersCommand: CommandSpec = {
  ...about('leaders'),
  options: { limit: { type: 'string' } },
  args: { min: 0, max: 1 },
  async run(ctx, input) {
    const { report } = await inspectWithWalk(ctx.client, {
      path: input.args[0] ?? '/',
      limit: limitFlag(input.flags, DEFAULT_WALK_LIMIT),
      signal: ctx.signal,
    });
    const w = report.walk;
    if (w.truncated) ctx.out.warn(`tenure: the walk stopped at --limit ${w.limit} nodes under ${w.root}: some recipes may be missing`);
    for (const e of w.errors) ctx.out.warn(`tenure: could not read ${e.path}: ${e.error}`);
    const observers: ObserversReport =
      report.elections.length === 0
        ? { source: 'four-letter-words', elections: [], problems: [] }
        : await inspectObservers(ctx.options.server, report, {
            signal: ctx.signal,
            tls: tlsOptionsOf(ctx.options),
            exclude: [sessionHex(ctx.client.sessionId)],
          });
    if (ctx.out.json) {
      ctx.out.document({ walk: report.walk, at: report.at, elections: report.elections, observers });
      return;
    }
    if (report.elections.length === 0) {
      ctx.out.line('no elections found');
      return;
    }
    if (observers.source === 'unavailable') {
      for (const p of observers.problems) ctx.out.warn(`tenure: observers not shown: ${p.server}: ${p.reason}`);
    }
    const watching = new Map(observers.elections.map((e) => [`${e.kind} ${e.path}`, e.observers]));
    ctx.out.table(
      ['ELECTION', 'KIND', 'ROLE', 'ID', 'SESSION', 'TOKEN', 'FOR', 'NODE'],
      report.elections.flatMap((e) => [
        ...e.participants.map((p, i) => [
          e.path,
          e.kind,
          p.isLeader ? 'leader' : `participant ${i}`,
          dataText(p.data),
          p.sessionId,
          p.fencingToken,
          p.isLeader ? formatDuration(e.leaderForMs) : '-',
          p.name,
        ]),
        ...(watching.get(`${e.kind} ${e.path}`) ?? []).map((o) => [e.path, e.kind, 'observer', '-', o.sessionId, '-', '-', '-']),
      ]),
    );
  },
};
