/**
 * The instruments, made from the instrumentation's current meter (again when a MeterProvider is
 * set), and the state behind the gauges. Durations are histograms in seconds; the gauges are
 * observable, read at each collection from what the channels last said.
 */
import { ValueType, type Attributes, type Counter, type Histogram, type Meter, type ObservableResult } from '@opentelemetry/api';
import {
  ATTR_ELECTION_PATH,
  ATTR_GROUP_PATH,
  ATTR_LEADER_RECIPE,
  ATTR_PARTICIPANT_ID,
  ATTR_SESSION_STATE,
  METRIC_GROUP_MEMBERS,
  METRIC_LEADERSHIP_HELD,
  METRIC_LOCK_HOLD_DURATION,
  METRIC_LOCK_WAIT_DURATION,
  METRIC_OPERATION_DURATION,
  METRIC_QUEUE_CONSUMED,
  METRIC_SESSION_STATE,
  METRIC_SESSION_TRANSITIONS,
} from './names.js';

/** The client's connection states (@tenure/client's ConnectionState): every one is reported, 0 when empty. */
const SESSION_STATES = ['CONNECTED', 'SUSPENDED', 'RECONNECTED', 'LOST', 'READ_ONLY'] as const;

// ZooKeeper answers in well under a millisecond on a LAN; lock waits last seconds to minutes.
const OPERATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

/** What the gauges report: kept across meter changes, fed by the channels. */
export class GaugeState {
  /** The last state of each session this process has seen; a LOST one is reported once, then dropped. */
  readonly sessions = new Map<bigint, string>();
  /** 1 while a participant leads an election, 0 once its term ended. */
  readonly leadership = new Map<string, { attributes: Attributes; held: number }>();
  /** The member count each group path last showed. */
  readonly groups = new Map<string, number>();

  observeSessions(result: ObservableResult): void {
    const counts = new Map<string, number>(SESSION_STATES.map((s) => [s, 0]));
    for (const state of this.sessions.values()) counts.set(state, (counts.get(state) ?? 0) + 1);
    for (const [state, n] of counts) result.observe(n, { [ATTR_SESSION_STATE]: state });
    for (const [id, state] of this.sessions) if (state === 'LOST') this.sessions.delete(id);
  }

  noteLeadership(recipe: string, path: string, id: string, held: boolean): void {
    const attributes = { [ATTR_ELECTION_PATH]: path, [ATTR_PARTICIPANT_ID]: id, [ATTR_LEADER_RECIPE]: recipe };
    this.leadership.set(`${recipe}\0${path}\0${id}`, { attributes, held: held ? 1 : 0 });
  }

  observeLeadership(result: ObservableResult): void {
    for (const { attributes, held } of this.leadership.values()) result.observe(held, attributes);
  }

  observeGroups(result: ObservableResult): void {
    for (const [path, n] of this.groups) result.observe(n, { [ATTR_GROUP_PATH]: path });
  }
}

export interface Instruments {
  operationDuration: Histogram;
  sessionTransitions: Counter;
  lockWait: Histogram;
  lockHold: Histogram;
  queueConsumed: Counter;
}

export function makeInstruments(meter: Meter, gauges: GaugeState): Instruments {
  meter
    .createObservableGauge(METRIC_SESSION_STATE, {
      description: 'Sessions of this process in each connection state (zookeeper.session.state).',
      unit: '{session}',
      valueType: ValueType.INT,
    })
    .addCallback((r) => gauges.observeSessions(r));
  meter
    .createObservableGauge(METRIC_LEADERSHIP_HELD, {
      description: 'Whether this participant leads the election (1) or not (0).',
      unit: '1',
      valueType: ValueType.INT,
    })
    .addCallback((r) => gauges.observeLeadership(r));
  meter
    .createObservableGauge(METRIC_GROUP_MEMBERS, {
      description: 'Members of the group, as a GroupMember of this process last saw them.',
      unit: '{member}',
      valueType: ValueType.INT,
    })
    .addCallback((r) => gauges.observeGroups(r));
  return {
    operationDuration: meter.createHistogram(METRIC_OPERATION_DURATION, {
      description: 'Duration of ZooKeeper client operations, by operation and outcome.',
      unit: 's',
      advice: { explicitBucketBoundaries: OPERATION_BUCKETS },
    }),
    sessionTransitions: meter.createCounter(METRIC_SESSION_TRANSITIONS, {
      description: 'Connection state transitions, by new and previous state.',
      unit: '{transition}',
      valueType: ValueType.INT,
    }),
    lockWait: meter.createHistogram(METRIC_LOCK_WAIT_DURATION, {
      description: 'Time from acquire() to the lease being granted (or the wait failing).',
      unit: 's',
      advice: { explicitBucketBoundaries: WAIT_BUCKETS },
    }),
    lockHold: meter.createHistogram(METRIC_LOCK_HOLD_DURATION, {
      description: 'Time a lease was held, from grant to release or loss.',
      unit: 's',
      advice: { explicitBucketBoundaries: WAIT_BUCKETS },
    }),
    queueConsumed: meter.createCounter(METRIC_QUEUE_CONSUMED, {
      description: 'Queue items handled by a consumer or an items() loop, by outcome.',
      unit: '{item}',
      valueType: ValueType.INT,
    }),
  };
}
