/**
 * Groups and services: who is a member, which instances are registered.
 * DOM contract: `[data-group="<path>"]` with `[data-member]`s; `[data-service="<name>"]` with
 * `[data-instance]`s.
 */
import type { GroupInfo, RecipeReport, ServiceInfo } from './api.js';
import { h } from './dom.js';
import { dataLabel } from './format.js';
import { since } from './ticker.js';

export function groupCard(g: GroupInfo, at: number): HTMLElement {
  return h(
    'section.card.group',
    { 'data-group': g.path },
    h('header', null, h('code.path', null, g.path), h('span.count', null, `${g.members.length} members`)),
    h(
      'ul.members',
      null,
      g.members.map((m) =>
        h(
          'li.member',
          { 'data-member': m.id, title: m.path },
          h('span.id', null, m.id),
          m.data.bytes ? h('span.data', null, dataLabel(m.data, m.id)) : null,
          h('span.meta', null, `session ${m.sessionId} · for `, since(at - m.ctime)),
        ),
      ),
    ),
  );
}

export function serviceCard(s: ServiceInfo): HTMLElement {
  return h(
    'section.card.service',
    { 'data-service': s.name },
    h('header', null, h('strong', null, s.name), h('code.path', null, s.path), h('span.count', null, `${s.instances.length} instances`)),
    h(
      'ul.members',
      null,
      s.instances.map((i) =>
        h(
          i.enabled ? 'li.member' : 'li.member.disabled',
          { 'data-instance': i.id, title: i.path },
          h('span.id', null, i.id),
          h(
            'span.data',
            null,
            `${i.address ?? '?'}${i.port !== null ? `:${i.port}` : ''}${i.sslPort !== null ? ` (ssl ${i.sslPort})` : ''}`,
          ),
          h('span.meta', null, `${i.serviceType}${i.enabled ? '' : ' · disabled'} · session ${i.sessionId}`),
        ),
      ),
    ),
  );
}

export function groupsSection(report: RecipeReport): HTMLElement {
  return h(
    'section.group-of-cards',
    { id: 'groups' },
    h('h2', null, 'Groups ', h('span.count', null, String(report.groups.length))),
    report.groups.length ? report.groups.map((g) => groupCard(g, report.at)) : h('p.muted', null, 'No groups found.'),
  );
}

export function servicesSection(report: RecipeReport): HTMLElement {
  return h(
    'section.group-of-cards',
    { id: 'services' },
    h('h2', null, 'Services ', h('span.count', null, String(report.services.length))),
    report.services.length ? report.services.map(serviceCard) : h('p.muted', null, 'No discovery registry found.'),
  );
}
