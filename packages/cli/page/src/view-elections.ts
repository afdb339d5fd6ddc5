/**
 * Elections: the leader and the participants in election order.
 * DOM contract: `[data-election="<path>"]` holds one `[data-leader]` and `[data-participant]`s (the
 * leader is the first participant and carries both); their text includes the participant id, or
 * the node's name when it has none. Its observers (sessions watching the path without a node:
 * LeaderObservers, from the servers' `wchp`) are `[data-observer="<session>"]`s; when `wchp` was
 * refused, `[data-observers-unavailable]` says so.
 */
import type { ElectionInfo, ObservedElection, ObserversReport, Participant, RecipeReport } from './api.js';
import { h } from './dom.js';
import { shortName } from './format.js';
import { heldFor, heldForLabel, type FirstSince, type HeldFor } from './view-locks.js';

function participant(p: Participant, position: number, leading: HeldFor | null): HTMLElement {
  const attrs: Record<string, string> = { 'data-participant': p.name, title: p.path };
  if (p.isLeader) attrs['data-leader'] = p.name;
  return h(
    p.isLeader ? 'li.participant.leader' : 'li.participant',
    attrs,
    h('span.rank', null, p.isLeader ? '★' : `#${position}`),
    h('span.id', null, p.id || p.name),
    h('span.meta', null, `session ${p.sessionId} · token ${p.fencingToken}`),
    p.isLeader && leading ? h('span.meta', null, 'leading ', heldForLabel(leading)) : h('span.meta', null, shortName(p.name)),
  );
}

function observersOf(e: ElectionInfo, observers: ObserversReport | null): HTMLElement | null {
  if (observers === null) return null;
  if (observers.source === 'unavailable') {
    const why = observers.problems.map((p) => `${p.server}: ${p.reason}`).join('; ');
    return h('p.muted.note', { 'data-observers-unavailable': '', title: why }, 'Observers unknown: the server does not answer wchp.');
  }
  const found: ObservedElection | undefined = observers.elections.find((o) => o.path === e.path && o.kind === e.kind);
  if (!found || found.observers.length === 0) return null;
  return h(
    'ul.observers',
    null,
    found.observers.map((o) =>
      h('li.observer', { 'data-observer': o.sessionId, title: `watching through ${o.server}` }, `observer · session ${o.sessionId}`),
    ),
  );
}

/** `alsoLock`: the path is listed as a lock too (a LeaderSelector and a Mutex share one layout). */
export function electionCard(
  e: ElectionInfo,
  alsoLock = false,
  observers: ObserversReport | null = null,
  at = Date.now(),
  firstSince?: FirstSince,
): HTMLElement {
  // A LeaderSelector's path is a lock's lane in the timeline: the page saw its changes there.
  const leading = e.leader
    ? heldFor(alsoLock ? 'lock' : 'election', e.path, e.leader, e.leaderForMs, e.leaderForExact, at, firstSince)
    : null;
  return h(
    alsoLock ? 'section.card.election.also-lock' : 'section.card.election',
    { 'data-election': e.path },
    h(
      'header',
      null,
      h('code.path', null, e.path),
      h('span.badge', null, e.kind),
      h('span.count', null, e.leader ? `led by ${e.leader.id || e.leader.name}` : 'no leader'),
    ),
    alsoLock
      ? h('p.muted.note', null, 'The nodes of the lock of the same path: a LeaderSelector or a Mutex, which share one layout.')
      : null,
    h(
      'ol.participants',
      null,
      e.participants.map((p, i) => participant(p, i, leading)),
    ),
    observersOf(e, observers),
  );
}

export function electionsSection(report: RecipeReport, observers: ObserversReport | null = null, firstSince?: FirstSince): HTMLElement {
  return h(
    'section.group-of-cards',
    { id: 'elections' },
    h('h2', null, 'Elections ', h('span.count', null, String(report.elections.length))),
    report.elections.length
      ? report.elections.map((e) =>
          electionCard(e, e.kind === 'leader-selector' && report.locks.some((l) => l.path === e.path), observers, report.at, firstSince),
        )
      : h('p.muted', null, 'No elections found.'),
  );
}
