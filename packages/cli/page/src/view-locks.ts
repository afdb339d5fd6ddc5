/**
 * Locks, each drawn as its queue: the holder at the head, the waiters behind it in queue order.
 * DOM contract: `[data-lock="<path>"]` holds one `[data-holder]` and its `[data-waiter]`s in order;
 * their text includes the node's data (UTF-8) or, when empty, the node's name. The holder's "held
 * for" (`[data-held-for]`, whose value says how it is known) is the time since it took the lock:
 * - `exact`: a report proves it took the lock as its node was created (`heldForExact`), now or in
 *   an earlier overview while it already held;
 * - `seen`: the page saw it become the holder (the overview that first showed it);
 * - `at-most`: it took the lock after a node ahead of it left, before the page opened, and
 *   ZooKeeper does not record when: the node's age, shown as an upper bound ("≤").
 */
import type { LockInfo, LockNode, RecipeReport } from './api.js';
import { h } from './dom.js';
import { dataLabel, shortName } from './format.js';
import { since } from './ticker.js';
import type { FirstKnown } from './timeline.js';

/** Since when the page knows a node is first at a path (Timeline.firstSince), or null. */
export type FirstSince = (kind: 'election' | 'lock', path: string, node: string) => FirstKnown | null;

export type HeldFor = { ms: number | null; known: 'exact' | 'seen' | 'at-most' };

/** How long `node` has been first at `path`, and how that is known (see the module's comment). */
export function heldFor(
  kind: 'election' | 'lock',
  path: string,
  node: { readonly name: string },
  reported: number | null,
  exact: boolean,
  at: number,
  firstSince?: FirstSince,
): HeldFor {
  if (exact) return { ms: reported, known: 'exact' };
  const first = firstSince?.(kind, path, node.name) ?? null;
  if (first !== null) return { ms: Math.max(0, at - first.at), known: first.how };
  return { ms: reported, known: 'at-most' };
}

const HELD_FOR_TITLES: Record<HeldFor['known'], string> = {
  exact: 'since its node was created: nothing was ahead of it',
  seen: 'since this page saw it take over',
  'at-most': 'at most: it took over after a node ahead of it left, before this page opened (ZooKeeper does not record when)',
};

/** A "held for" / "leading" duration, counting on, marked with how it is known. */
export function heldForLabel(held: HeldFor): HTMLElement {
  return h(
    'span.held-for',
    { 'data-held-for': held.known, title: HELD_FOR_TITLES[held.known] },
    held.known === 'at-most' ? '≤ ' : '',
    since(held.ms),
  );
}

function slot(node: LockNode, role: 'holder' | 'co-holder' | 'waiter', position: number, held: HeldFor | null, at: number): HTMLElement {
  const attrs: Record<string, string> = { [`data-${role}`]: node.name, title: node.path };
  const waited = at - node.ctime;
  return h(
    `li.slot.${role}` as 'li',
    attrs,
    h('div.role', null, role === 'waiter' ? `#${position} waiting` : 'holds'),
    h('div.data', null, dataLabel(node.data, node.name)),
    h(
      'dl.facts',
      null,
      h('dt', null, 'session'),
      h('dd', null, node.sessionId),
      h('dt', null, 'token'),
      h('dd', null, node.fencingToken),
      h('dt', null, role === 'waiter' ? 'waiting' : 'held for'),
      h('dd', null, held ? heldForLabel(held) : since(waited)),
      h('dt', null, 'node'),
      h('dd.node', null, shortName(node.name)),
    ),
  );
}

export function lockCard(lock: LockInfo, at: number, firstSince?: FirstSince): HTMLElement {
  const [first, ...others] = lock.holders;
  const items: HTMLElement[] = [];
  if (first) items.push(slot(first, 'holder', 0, heldFor('lock', lock.path, first, lock.heldForMs, lock.heldForExact, at, firstSince), at));
  else items.push(h('li.slot.free', null, h('div.role', null, 'free'), h('div.data', null, 'nobody holds it')));
  // A co-holder (a reader behind the first, a semaphore lease): its node's age bounds its hold.
  for (const other of others) items.push(slot(other, 'co-holder', 0, { ms: Math.max(0, at - other.ctime), known: 'at-most' }, at));
  lock.waiters.forEach((w, i) => {
    items.push(h('li.arrow', { 'aria-hidden': 'true' }, '◀'));
    items.push(slot(w, 'waiter', i + 1, null, at));
  });
  return h(
    'section.card.lock',
    { 'data-lock': lock.path },
    h(
      'header',
      null,
      h('code.path', null, lock.path),
      h('span.badge', null, lock.kind),
      h('span.count', null, `${lock.holders.length} holding · ${lock.waiters.length} waiting`),
    ),
    h('ol.queue', null, items),
  );
}

export function locksSection(report: RecipeReport, firstSince?: FirstSince): HTMLElement {
  return h(
    'section.group-of-cards',
    { id: 'locks' },
    h('h2', null, 'Locks ', h('span.count', null, String(report.locks.length))),
    report.locks.length ? report.locks.map((l) => lockCard(l, report.at, firstSince)) : h('p.muted', null, 'No locks found.'),
  );
}
