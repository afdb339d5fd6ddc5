/**
 * The page: a header with the views and the connection, banners (how changes arrive, read-only or
 * not, who can reach the page), and one view at a time, chosen by the URL's hash (`#/locks`, ...;
 * the overview at `/` has none). Each overview update re-renders the current view from data.
 */
import { api, type Overview, type UiStatus } from './api.js';
import { byId, h, replace } from './dom.js';
import { clock } from './format.js';
import { connectLive } from './live.js';
import { Timeline } from './timeline.js';
import { electionsSection } from './view-elections.js';
import { locksSection } from './view-locks.js';
import { leasesSection, partitionsSection } from './view-kazoo.js';
import { groupsSection, servicesSection } from './view-members.js';
import { queuesSection, sessionsSection } from './view-queues.js';
import { ensembleSection } from './view-ensemble.js';
import { TreeView } from './view-tree.js';

const VIEWS = ['overview', 'tree', 'locks', 'elections', 'groups', 'services', 'queues', 'partitions', 'leases', 'sessions'] as const;
type View = (typeof VIEWS)[number];

let status: UiStatus;
let overview: Overview | null = null;
let timeline: Timeline | null = null;
let offline = false;
/** performance.now() when the last overview came: with its `at`, the server's clock now. */
let receivedAt = 0;

function serverNow(): number {
  return overview ? overview.at + (performance.now() - receivedAt) : Date.now();
}
let tree: TreeView;

function currentView(): View {
  const name = location.hash.replace(/^#\/?/, '');
  return (VIEWS as readonly string[]).includes(name) ? (name as View) : 'overview';
}

function renderNav(): void {
  const view = currentView();
  replace(
    byId('nav'),
    VIEWS.map((v) =>
      h(v === view ? 'a.active' : 'a', { href: v === 'overview' ? '#/' : `#/${v}`, 'data-nav': v }, v[0]!.toUpperCase() + v.slice(1)),
    ),
  );
}

function renderBanners(): void {
  const live =
    status.live === 'push'
      ? h('div.banner.live', { 'data-live-mode': 'push' }, '● Live: one persistent recursive watch pushes changes to this page.')
      : h(
          'div.banner.polling',
          { 'data-live-mode': 'polling' },
          `⟳ Polling every ${status.pollMs / 1000} s: ${status.liveReason ?? 'the server refused persistent watches'}.`,
        );
  const access = status.write
    ? h(
        'div.banner.write',
        { 'data-access': 'write' },
        '✎ Writes are enabled (--write): the Tree view can create, change and delete nodes.',
      )
    : h('div.banner.read-only', { 'data-access': 'read-only' }, 'Read-only: start with --write to allow changes.');
  const exposure = status.exposed
    ? h(
        'div.banner.exposed',
        { 'data-exposure': 'exposed' },
        `⚠ Reachable from other machines on ${status.listen}; basic auth is required (--ui-auth).`,
      )
    : status.auth
      ? h('div.banner', { 'data-exposure': 'loopback' }, 'Basic auth is on.')
      : null;
  const down = offline ? h('div.banner.offline', null, 'The page server cannot be reached; retrying…') : null;
  const walk = overview?.report?.walk;
  const truncated = walk?.truncated
    ? h(
        'div.banner.truncated',
        null,
        `The recipe walk stopped after ${walk.visited} nodes (limit ${walk.limit}): recipes beyond it are not shown.`,
      )
    : null;
  const errors = overview?.errors.length ? h('div.banner.offline', null, overview.errors.join('; ')) : null;
  replace(byId('banners'), live, access, exposure, down, truncated, errors);
  replace(
    byId('connection'),
    h('span', null, 'ZooKeeper '),
    h('code', null, status.zookeeper),
    overview ? h('span.muted', null, ` · updated ${clock(overview.at)}`) : null,
  );
}

function renderView(): void {
  const view = currentView();
  const container = byId('view');
  document.body.dataset.view = view;
  if (view === 'tree') {
    tree.mount(container);
    return;
  }
  const report = overview?.report;
  if (!overview || !report) {
    replace(container, h('p.muted', null, overview ? 'The recipes could not be read.' : 'Loading…'));
    return;
  }
  const timelineSection = timeline ? timeline.render(serverNow()) : null;
  const firstSince = timeline ? timeline.firstSince.bind(timeline) : undefined;
  switch (view) {
    case 'overview':
      return replace(
        container,
        locksSection(report, firstSince),
        h('div.pair', null, electionsSection(report, overview.observers ?? null, firstSince), timelineSection),
        groupsSection(report),
        servicesSection(report),
        queuesSection(report),
        report.partitions.length ? partitionsSection(report) : null,
        report.timedLeases.length ? leasesSection(report) : null,
      );
    case 'locks':
      return replace(container, locksSection(report, firstSince), timelineSection);
    case 'elections':
      return replace(container, electionsSection(report, overview.observers ?? null, firstSince), timelineSection);
    case 'groups':
      return replace(container, groupsSection(report));
    case 'services':
      return replace(container, servicesSection(report));
    case 'queues':
      return replace(container, queuesSection(report));
    case 'partitions':
      return replace(container, partitionsSection(report));
    case 'leases':
      return replace(container, leasesSection(report));
    case 'sessions':
      return replace(container, ensembleSection(overview.ensemble), sessionsSection(overview.sessions, status.sessionId));
  }
}

function onOverview(next: Overview): void {
  if (overview && next.version <= overview.version && next.at <= overview.at) return;
  overview = next;
  receivedAt = performance.now();
  timeline ??= new Timeline(next.at);
  timeline.observe(next);
  document.body.dataset.version = String(next.version);
  renderBanners();
  if (currentView() !== 'tree') renderView();
}

// The timeline's lanes grow with time, not only with changes.
setInterval(() => {
  const shown = document.getElementById('timeline');
  if (shown && timeline) shown.replaceWith(timeline.render(serverNow()));
}, 1_000);

async function boot(): Promise<void> {
  status = await api.status();
  tree = new TreeView(status);
  document.body.dataset.live = status.live;
  renderNav();
  renderBanners();
  renderView();
  window.addEventListener('hashchange', () => {
    renderNav();
    renderView();
  });
  connectLive(status, {
    status: (s) => {
      status = s;
      tree.setStatus(s);
      renderBanners();
    },
    overview: onOverview,
    tree: (change) => {
      if (currentView() === 'tree') void tree.refresh(change);
    },
    offline: (down) => {
      if (down === offline) return;
      offline = down;
      renderBanners();
    },
  });
}

void boot().catch((err: unknown) => {
  replace(byId('view'), h('p.error', null, `The page could not start: ${err instanceof Error ? err.message : String(err)}`));
});
