/** The ensemble above the sessions: the dynamic config's members and which of them the page server's client uses. */
import type { EnsembleMemberView, EnsembleView } from './api.js';
import { h } from './dom.js';

function clientAddress(m: EnsembleMemberView): string | null {
  if (m.clientPort === undefined) return null;
  const host = m.clientHost === undefined || m.clientHost === '0.0.0.0' || m.clientHost === '::' ? m.host : m.clientHost;
  return `${host.includes(':') ? `[${host}]` : host}:${m.clientPort}`;
}

export function ensembleSection(ensemble: EnsembleView | null | undefined): HTMLElement {
  if (!ensemble)
    return h(
      'section.group-of-cards',
      { id: 'ensemble' },
      h('h2', null, 'Ensemble'),
      h('p.muted', null, 'The ensemble config could not be read.'),
    );
  const hosts = h(
    'p.muted',
    null,
    'The page server connects to ',
    ensemble.hosts
      .map((host, i) => [i > 0 ? ', ' : '', h('code', host === ensemble.connectedServer ? { class: 'current' } : null, host)])
      .flat(),
    ensemble.connectedServer ? ` (now ${ensemble.connectedServer}).` : '.',
  );
  if (ensemble.members.length === 0) {
    return h(
      'section.group-of-cards',
      { id: 'ensemble' },
      h('h2', null, 'Ensemble'),
      h('p.muted', null, 'No dynamic config: a standalone server, or an ensemble before ZooKeeper 3.5.'),
      hosts,
    );
  }
  return h(
    'section.group-of-cards',
    { id: 'ensemble' },
    h(
      'h2',
      null,
      'Ensemble ',
      h('span.count', null, String(ensemble.members.length)),
      ' ',
      h('span.muted', null, `version ${ensemble.version}`),
    ),
    hosts,
    h(
      'table.grid',
      null,
      h(
        'thead',
        null,
        h('tr', null, h('th', null, 'id'), h('th', null, 'role'), h('th', null, 'quorum / election'), h('th', null, 'client address')),
      ),
      h(
        'tbody',
        null,
        ensemble.members.map((m) => {
          const address = clientAddress(m);
          return h(
            'tr',
            { 'data-member': m.id },
            h('td', null, m.id),
            h('td', null, m.role),
            h('td', null, h('code', null, `${m.host}:${m.quorumPort}:${m.electionPort}`)),
            h(
              'td',
              null,
              address ? h('code', null, address) : '—',
              address !== null && address === ensemble.connectedServer ? h('span.badge', null, 'connected') : null,
            ),
          );
        }),
      ),
    ),
  );
}
