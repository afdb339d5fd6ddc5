/**
 * The at-most-one-leader recorder. It timestamps every isLeader, every end of a term (the
 * leadership signal aborting, which comes first) and every notLeader, across all participants of
 * an election in this process, and checks as each event arrives:
 * - no participant becomes leader while another one's term is still running;
 * - fencing tokens never decrease, and a token is reused only by the same node (a term resumed
 *   on its node after a reconnect);
 * - each participant's events alternate (isLeader, then the end of that term).
 */
import type { Leadership } from '../src/index.js';

export type RecordedKind = 'isLeader' | 'ended' | 'notLeader';

export interface RecordedEvent {
  seq: number;
  /** ms since the recorder was created */
  t: number;
  who: string;
  kind: RecordedKind;
  token?: bigint;
  path?: string;
  end?: string;
}

export interface RecordedTerm {
  who: string;
  token: bigint;
  path: string;
  from: number;
  to: number | null;
  end?: string;
}

/** Anything with isLeader / notLeader events: LeaderLatch, LeaderSelector. */
export interface LeadershipSource {
  on(event: 'isLeader', fn: (l: Leadership) => void): unknown;
  on(event: 'notLeader', fn: (end: string) => void): unknown;
}

export class LeadershipRecorder {
  readonly events: RecordedEvent[] = [];
  readonly terms: RecordedTerm[] = [];
  readonly violations: string[] = [];
  private readonly t0: number;
  private readonly leading = new Map<string, RecordedTerm>();
  private maxToken: bigint | null = null;
  private maxTokenPath: string | null = null;

  /** `clock`: where timestamps come from (a ManualClock's now() for tests on manual time). */
  constructor(private readonly clock: () => number = () => performance.now()) {
    this.t0 = clock();
  }

  /** Records `source` under the name `who` (one name per participant object). */
  attach(who: string, source: LeadershipSource): void {
    source.on('isLeader', (l) => this.isLeader(who, l));
    source.on('notLeader', (end) => this.record(who, 'notLeader', { end }));
  }

  /** The participants leading now (at most one, or the recorder has a violation). */
  get leaders(): string[] {
    return [...this.leading.keys()];
  }

  get now(): number {
    return this.clock() - this.t0;
  }

  /** Throws with the violations and the tail of the timeline, if any. */
  assertSafe(): void {
    if (this.violations.length === 0) return;
    throw new Error(`leadership violations:\n${this.violations.join('\n')}\n\ntimeline (tail):\n${this.timeline(60)}`);
  }

  /** Failovers: terms whose successor belongs to another participant, with the gap between them. */
  handovers(): Array<{ from: string; to: string; gapMs: number }> {
    const out: Array<{ from: string; to: string; gapMs: number }> = [];
    for (let i = 1; i < this.terms.length; i++) {
      const a = this.terms[i - 1]!;
      const b = this.terms[i]!;
      if (a.who !== b.who && a.to !== null) out.push({ from: a.who, to: b.who, gapMs: b.from - a.to });
    }
    return out;
  }

  timeline(tail = Infinity): string {
    const lines = this.events.map((e) => {
      const extra = e.kind === 'isLeader' ? ` token=${e.token} ${e.path}` : e.end ? ` (${e.end})` : '';
      return `${e.t.toFixed(1).padStart(9)} ms  ${e.who.padEnd(12)} ${e.kind}${extra}`;
    });
    return lines.slice(-Math.min(tail, lines.length)).join('\n');
  }

  private isLeader(who: string, l: Leadership): void {
    const ev = this.record(who, 'isLeader', { token: l.fencingToken, path: l.path });
    for (const [other, term] of this.leading) {
      if (other === who) this.violations.push(`${ev.t.toFixed(1)} ms: ${who} isLeader again while its term (token ${term.token}) runs`);
      else
        this.violations.push(`${ev.t.toFixed(1)} ms: ${who} isLeader (token ${l.fencingToken}) while ${other} leads (token ${term.token})`);
    }
    if (this.maxToken !== null) {
      if (l.fencingToken < this.maxToken)
        this.violations.push(`${ev.t.toFixed(1)} ms: ${who} token ${l.fencingToken} < earlier token ${this.maxToken}`);
      if (l.fencingToken === this.maxToken && l.path !== this.maxTokenPath) {
        this.violations.push(
          `${ev.t.toFixed(1)} ms: ${who} token ${l.fencingToken} reused by another node (${l.path} vs ${this.maxTokenPath})`,
        );
      }
    }
    if (this.maxToken === null || l.fencingToken >= this.maxToken) {
      this.maxToken = l.fencingToken;
      this.maxTokenPath = l.path;
    }
    const term: RecordedTerm = { who, token: l.fencingToken, path: l.path, from: ev.t, to: null };
    this.leading.set(who, term);
    this.terms.push(term);
    const onEnd = (): void => {
      const reason = l.signal.reason as { end?: string } | undefined;
      const e = this.record(who, 'ended', { end: reason?.end ?? String(l.signal.reason) });
      term.to = e.t;
      term.end = reason?.end;
      if (this.leading.get(who) === term) this.leading.delete(who);
    };
    if (l.signal.aborted) onEnd();
    else l.signal.addEventListener('abort', onEnd, { once: true });
  }

  private record(who: string, kind: RecordedKind, extra: Partial<RecordedEvent>): RecordedEvent {
    const ev: RecordedEvent = { seq: this.events.length, t: this.now, who, kind, ...extra };
    this.events.push(ev);
    if (kind === 'notLeader' && this.leading.has(who)) {
      this.violations.push(`${ev.t.toFixed(1)} ms: ${who} notLeader before its leadership signal aborted`);
    }
    return ev;
  }
}
