/**
 * The timeline of leadership and lock-holder changes since the page opened, built from the
 * successive overviews the page receives. Each election and lock is a lane; each term or tenure a
 * coloured segment labelled with its leader or holder; below, the changes as a list, newest first.
 *
 * It also remembers when the page saw each lock's holder node (each election's leader node) become
 * first: the layout cannot always tell when a waiter was granted (see `heldForExact` in the
 * report), but a change the page saw happened between two overviews, at the later one's `at`.
 *
 * Colours: each holder or leader label gets the next hue of a golden-angle sequence the first time
 * the page sees it (so two labels seen one after the other differ by about 137°), and keeps it.
 */
import type { Overview } from './api.js';
import { h } from './dom.js';
import { clock, dataLabel } from './format.js';

/** The golden angle: consecutive hues are far apart, and any few of them spread over the circle. */
const GOLDEN_ANGLE = 137.508;
/** A segment still running is never drawn narrower than this, so a new holder always shows. */
const MIN_CURRENT_PX = 44;

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

/** Since when a node is first: its ctime (proven by a report) or when the page saw it take over. */
export interface FirstKnown {
  at: number;
  how: 'exact' | 'seen';
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
  private readonly hues = new Map<string, number>();
  /**
   * Per lane: its first node now, and since when it is first: its ctime once a report proved it
   * (`exact`), or the overview in which the page saw it take over (`seen`); null while unknown.
   */
  private readonly firsts = new Map<string, { node: string | null; since: FirstKnown | null }>();

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
      this.noteFirst('election', e.path, e.leader?.name ?? null, at, e.leaderForExact ? (e.leader?.ctime ?? null) : null);
      seen.add(`election ${e.path}`);
    }
    for (const l of report.locks) {
      const label = l.holder ? dataLabel(l.holder.data, l.holder.name, 40) : null;
      this.note('lock', l.path, label, at);
      this.noteFirst('lock', l.path, l.holder?.name ?? null, at, l.heldForExact ? (l.holder?.ctime ?? null) : null);
      seen.add(`lock ${l.path}`);
    }
    // A recipe whose path vanished: its last segment ends, as "nobody".
    for (const [key, lane] of this.lanes) if (!seen.has(key)) this.note(lane.kind, lane.path, null, at);
  }

  /** Since when `node` is first at `path` (ms, the server's clock) as far as the page knows, or null. */
  firstSince(kind: Lane['kind'], path: string, node: string): FirstKnown | null {
    const f = this.firsts.get(`${kind} ${path}`);
    return f && f.node === node ? f.since : null;
  }

  /** The hue of a holder's or leader's label: assigned in the order the page first sees labels. */
  hueOf(label: string): number {
    let hue = this.hues.get(label);
    if (hue === undefined) {
      hue = (this.hues.size * GOLDEN_ANGLE) % 360;
      this.hues.set(label, hue);
    }
    return hue;
  }

  /** `exactCtime`: the first node's ctime when this overview's report proves it has been first since. */
  private noteFirst(kind: Lane['kind'], path: string, node: string | null, at: number, exactCtime: number | null): void {
    const key = `${kind} ${path}`;
    const known = this.firsts.get(key);
    const proven: FirstKnown | null = exactCtime === null ? null : { at: exactCtime, how: 'exact' };
    // The first overview: only a proof tells since when; a proof once seen holds while the node stays first.
    if (known === undefined) this.firsts.set(key, { node, since: proven });
    else if (known.node !== node) this.firsts.set(key, { node, since: node === null ? null : (proven ?? { at, how: 'seen' }) });
    else if (known.since === null && proven) known.since = proven;
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
    if (label !== null) this.hueOf(label);
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
            const attrs: Record<string, string> = {
              title: `${s.label ?? 'nobody'} from ${clock(s.from)}${s.to ? ` to ${clock(s.to)}` : ''}`,
              'data-segment': s.label ?? '',
            };
            if (s.to === null) attrs['data-current'] = '';
            const seg = h(s.label === null ? 'div.segment.none' : 'div.segment', attrs, s.label ?? '');
            seg.style.left = `${pct(s.from)}%`;
            const width = Math.max(0.5, pct(s.to ?? end) - pct(s.from));
            // The running segment reaches the track's end and is at least MIN_CURRENT_PX wide (drawn
            // over its predecessor's last pixels when it has only just begun), so a hand-over always shows.
            if (s.to === null) seg.style.width = `max(${width}%, ${MIN_CURRENT_PX}px)`;
            else seg.style.width = `${width}%`;
            if (s.to === null) seg.style.left = `min(${pct(s.from)}%, calc(100% - ${MIN_CURRENT_PX}px))`;
            if (s.label !== null) seg.style.setProperty('--hue', String(this.hueOf(s.label)));
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
