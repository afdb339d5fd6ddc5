/**
 * kazoo's recipes: partitioned sets (SetPartitioner: item → holder) and timed leases
 * (NonBlockingLease: holder, time left).
 * DOM contract: `[data-partition="<path>"]` with one `[data-item="<item>"]` per item, whose
 * `data-holder` is the holding member's id ('' when free); `[data-lease="<path>"]` with
 * `data-holder` and `data-running` ('true' | 'false').
 */
import type { PartitionInfo, RecipeReport, TimedLeaseInfo } from './api.js';
import { h } from './dom.js';
import { duration } from './format.js';
import { since } from './ticker.js';

export function partitionCard(p: PartitionInfo): HTMLElement {
  const held = p.items.filter((i) => i.holder !== null).length;
  return h(
    'section.card.group',
    { 'data-partition': p.path },
    h(
      'header',
      null,
      h('code.path', null, p.path),
      h('span.badge', null, 'partitioner'),
      h('span.count', null, `${p.members.length} members · ${held}/${p.items.length} items held`),
    ),
    h('p.muted', null, `members: ${p.members.map((m) => m.id).join(', ') || 'none'}`),
    h(
      'ul.members',
      null,
      p.items.map((i) =>
        h(
          i.holder ? 'li.member' : 'li.member.disabled',
          {
            'data-item': i.item,
            'data-holder': i.holder?.memberId ?? '',
            title: i.holder ? `${i.holder.node} · token ${i.holder.fencingToken}` : 'free',
          },
          h('span.id', null, i.item),
          h('span.data', null, i.holder ? `→ ${i.holder.memberId ?? i.holder.sessionId}` : 'free'),
          i.holder
            ? h(
                'span.meta',
                null,
                `session ${i.holder.sessionId} · for `,
                since(i.holder.heldForMs),
                i.waiting ? ` · ${i.waiting} waiting` : '',
              )
            : null,
        ),
      ),
    ),
  );
}

export function leaseCard(l: TimedLeaseInfo): HTMLElement {
  return h(
    'section.card.group',
    { 'data-lease': l.path, 'data-holder': l.holder, 'data-running': String(l.running) },
    h('header', null, h('code.path', null, l.path), h('span.badge', null, 'timed lease')),
    h(
      'ul.members',
      null,
      h(
        l.running ? 'li.member' : 'li.member.disabled',
        null,
        h('span.id', null, l.holder),
        h('span.data', null, l.endsAt === null ? 'no end' : `until ${new Date(l.endsAt).toISOString().replace('.000Z', 'Z')}`),
        h('span.meta', null, l.running ? `${duration(l.timeLeftMs)} left` : 'ended'),
      ),
    ),
  );
}

export function partitionsSection(report: RecipeReport): HTMLElement {
  return h(
    'section.group-of-cards',
    { id: 'partitions' },
    h('h2', null, 'Partitions ', h('span.count', null, String(report.partitions.length))),
    report.partitions.length ? report.partitions.map(partitionCard) : h('p.muted', null, 'No partitioned sets found.'),
  );
}

export function leasesSection(report: RecipeReport): HTMLElement {
  return h(
    'section.group-of-cards',
    { id: 'leases' },
    h('h2', null, 'Timed leases ', h('span.count', null, String(report.timedLeases.length))),
    report.timedLeases.length ? report.timedLeases.map(leaseCard) : h('p.muted', null, 'No timed leases found.'),
  );
}
