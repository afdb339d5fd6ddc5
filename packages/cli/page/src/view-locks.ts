/**
 * Locks, each drawn as its queue: the holder at the head, the waiters behind it in queue order.
 * DOM contract: `[data-lock="<path>"]` holds one `[data-holder]` and its `[data-waiter]`s in order;
 * their text includes the node's data (UTF-8) or, when empty, the node's name.
 */
import type { LockInfo, LockNode, RecipeReport } from './api.js';
import { h } from './dom.js';
import { dataLabel, shortName } from './format.js';
import { since } from './ticker.js';

function slot(
  node: LockNode,
  role: 'holder' | 'co-holder' | 'waiter',
  position: number,
  heldForMs: number | null,
  at: number,
): HTMLElement {
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
      h('dd', null, since(role === 'holder' ? heldForMs : waited)),
      h('dt', null, 'node'),
      h('dd.node', null, shortName(node.name)),
    ),
  );
}

export function lockCard(lock: LockInfo, at: number): HTMLElement {
  const [first, ...others] = lock.holders;
  const items: HTMLElement[] = [];
  if (first) items.push(slot(first, 'holder', 0, lock.heldForMs, at));
  else items.push(h('li.slot.free', null, h('div.role', null, 'free'), h('div.data', null, 'nobody holds it')));
  for (const other of others) items.push(slot(other, 'co-holder', 0, at - other.ctime, at));
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

export function locksSection(report: RecipeReport): HTMLElement {
  return h(
    'section.group-of-cards',
    { id: 'locks' },
    h('h2', null, 'Locks ', h('span.count', null, String(report.locks.length))),
    report.locks.length ? report.locks.map((l) => lockCard(l, report.at)) : h('p.muted', null, 'No locks found.'),
  );
}
