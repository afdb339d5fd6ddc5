/** Queues with their depth (drawn as a bar against the deepest) and oldest item; sessions with their ephemerals. */
import type { RecipeReport, SessionsReport } from './api.js';
import { h } from './dom.js';
import { dataLabel } from './format.js';
import { since } from './ticker.js';

export function queuesSection(report: RecipeReport): HTMLElement {
  const deepest = Math.max(1, ...report.queues.map((q) => q.depth));
  return h(
    'section.group-of-cards',
    { id: 'queues' },
    h('h2', null, 'Queues ', h('span.count', null, String(report.queues.length))),
    report.queues.length
      ? h(
          'table.grid',
          null,
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              h('th', null, 'path'),
              h('th', null, 'kind'),
              h('th', null, 'depth'),
              h('th', null, 'oldest item'),
              h('th', null, 'age'),
            ),
          ),
          h(
            'tbody',
            null,
            report.queues.map((q) => {
              const bar = h('span.bar');
              bar.style.width = `${(q.depth / deepest) * 100}%`;
              return h(
                'tr',
                { 'data-queue': q.path, 'data-depth': q.depth },
                h('td', null, h('code', null, q.path)),
                h('td', null, q.kind),
                h('td.depth', null, h('span.depth-bar', null, bar), h('span', null, String(q.depth))),
                h('td', null, q.oldest ? `${q.oldest.name} · ${dataLabel(q.oldest.data, '(empty)', 40)}` : '—'),
                h('td', null, since(q.oldestAgeMs)),
              );
            }),
          ),
        )
      : h('p.muted', null, 'No queues found.'),
  );
}

/** `own`: the page server's own session, marked as such. */
export function sessionsSection(sessions: SessionsReport | null, own: string): HTMLElement {
  if (!sessions)
    return h('section.group-of-cards', { id: 'sessions' }, h('h2', null, 'Sessions'), h('p.muted', null, 'Sessions could not be read.'));
  return h(
    'section.group-of-cards',
    { id: 'sessions' },
    h('h2', null, 'Sessions ', h('span.count', null, String(sessions.sessions.length))),
    h(
      'p.muted',
      null,
      sessions.source === 'four-letter-words'
        ? 'From the servers’ cons and dump four-letter words.'
        : 'The servers did not answer cons / dump, so these are the owners of the ephemeral nodes the walk saw (no address or timeout).',
    ),
    sessions.problems.length
      ? h(
          'ul.problems',
          null,
          sessions.problems.map((p) => h('li', null, h('code', null, p.server), `: ${p.reason}`)),
        )
      : null,
    h(
      'table.grid',
      null,
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', null, 'session'),
          h('th', null, 'client'),
          h('th', null, 'timeout'),
          h('th', null, 'server'),
          h('th', null, 'last op'),
          h('th', null, 'ephemerals'),
        ),
      ),
      h(
        'tbody',
        null,
        sessions.sessions.map((s) =>
          h(
            'tr',
            { 'data-session': s.sessionId },
            h('td', null, h('code', null, s.sessionId), s.sessionId === own ? h('span.badge', null, 'this page server') : null),
            h('td', null, s.clientAddress ?? '—'),
            h('td', null, s.timeoutMs !== null ? `${s.timeoutMs} ms` : '—'),
            h('td', null, s.server ?? '—'),
            h('td', null, s.lastOperation ?? '—'),
            h(
              'td',
              null,
              s.ephemerals.length
                ? h(
                    'ul.ephemerals',
                    null,
                    s.ephemerals.map((e) => h('li', { 'data-ephemeral': e }, h('code', null, e))),
                  )
                : h('span.muted', null, 'none'),
            ),
          ),
        ),
      ),
    ),
  );
}
