/**
 * The timeline of leadership and lock-holder changes since the page opened, built from the
 * successive overviews the page receives. Each election and lock is a lane; each term or tenure a
 * coloured segment labelled with its leader or holder; below, the changes as a list, newest first.
 */
import type { Overview } from './api.js';
import { h } from './dom.js';
import { clock, dataLabel, hue } from './format.js';

interface Segment {
  label: string | null;
  from: number;
  to: number | null;
}

interface Lane {
  kind: 'election' | 'lock';
  path: string;
  segments: Segment[];
}

export interface Change {
  at: number;
  kind: 'election' | 'lock';
  path: string;
  from: string | null;
  to: string | null;
}

export class Timeline {
  readonly openedAt: number;
  private readonly lanes = new Map<string, Lane>();
  readonly changes: Change[] = [];
  private lastAt: number;

  /** `openedAt`: the `at` of the first overview the page received (the server's clock, as every `at`). */
  constructor(openedAt: number) {
    this.openedAt = openedAt;
    this.lastAt = openedAt;
  }

  observe(overview: Overview): void {
    const report = overview.report;
    if (!report) return;
    const at = overview.at;
    this.lastAt = Math.max(this.lastAt, at);
    const seen = new Set<string>();
    const lockPaths = new Set(report.locks.map((l) => l.path));
    for (const e of report.elections) {
      // A LeaderSelector's nodes are a mutex's: that path has its lane as a lock already.
      if (e.kind === 'leader-selector' && lockPaths.has(e.path)) continue;
      const label = e.leader ? e.leader.id || e.leader.name : null;
      this.note('election', e.path, label, at);
      seen.add(`election ${e.path}`);
    }
    for (const l of report.locks) {
      const label = l.holder ? dataLabel(l.holder.data, l.holder.name, 40) : null;
      this.note('lock', l.path, label, at);
      seen.add(`lock ${l.path}`);
    }
    // A recipe whose path vanished: its last segment ends, as "nobody".
    for (const [key, lane] of this.lanes) if (!seen.has(key)) this.note(lane.kind, lane.path, null, at);
  }

  private note(kind: Lane['kind'], path: string, label: string | null, at: number): void {
    const key = `${kind} ${path}`;
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { kind, path, segments: [] };
      this.lanes.set(key, lane);
    }
    const current = lane.segments.at(-1);
    if (current && current.label === label) return;
    if (current) {
      current.to = at;
      this.changes.push({ at, kind, path, from: current.label, to: label });
    }
    lane.segments.push({ label, from: Math.max(at, this.openedAt), to: null });
  }

  /** `now`: the current time on the server's clock (the last `at` plus the time since it came). */
  render(now: number = this.lastAt): HTMLElement {
    const start = this.openedAt;
    const end = Math.max(this.lastAt, now, start + 1_000);
    const span = end - start;
    const pct = (t: number): number => ((t - start) / span) * 100;
    const lanes = [...this.lanes.values()].sort((a, b) =>
      a.kind === b.kind ? a.path.localeCompare(b.path) : a.kind === 'election' ? -1 : 1,
    );
    const rows = lanes.map((lane) =>
      h(
        'div.lane',
        { 'data-timeline-lane': lane.path, 'data-kind': lane.kind },
        h('div.lane-name', null, h('span.badge', null, lane.kind === 'election' ? 'leader' : 'holder'), h('code', null, lane.path)),
        h(
          'div.lane-track',
          null,
          lane.segments.map((s) => {
            const seg = h(
              s.label === null ? 'div.segment.none' : 'div.segment',
              { title: `${s.label ?? 'nobody'} from ${clock(s.from)}${s.to ? ` to ${clock(s.to)}` : ''}` },
              s.label ?? '',
            );
            seg.style.left = `${pct(s.from)}%`;
            seg.style.width = `${Math.max(0.5, pct(s.to ?? end) - pct(s.from))}%`;
            if (s.label !== null) seg.style.setProperty('--hue', String(hue(s.label)));
            return seg;
          }),
        ),
      ),
    );
    const list = [...this.changes].reverse().slice(0, 200);
    return h(
      'section.card.timeline',
      { id: 'timeline' },
      h(
        'header',
        null,
        h('strong', null, 'Timeline'),
        h('span.count', null, `since the page opened at ${clock(start)} · ${this.changes.length} changes`),
      ),
      rows.length
        ? h('div.lanes', null, rows, h('div.axis', null, h('span', null, clock(start)), h('span', null, clock(end))))
        : h('p.muted', null, 'No elections or locks yet.'),
      h(
        'ol.changes',
        null,
        list.map((c) =>
          h(
            'li',
            { 'data-change': c.path },
            h('time', null, clock(c.at)),
            ' ',
            h('code', null, c.path),
            `: ${c.kind === 'election' ? 'leader' : 'holder'} `,
            h('span.from', null, c.from ?? 'nobody'),
            ' → ',
            h('strong.to', null, c.to ?? 'nobody'),
          ),
        ),
      ),
    );
  }
}
