/**
 * Span, attribute and metric names, after OpenTelemetry's naming rules: lowercase dot-separated
 * namespaces, snake_case words, units in the instrument's `unit` (durations in seconds), no
 * `_total` suffix on counters, and the semantic conventions' own attributes where one fits
 * (`server.address`, `server.port`, `error.type`). Tenure's own attributes live under `zookeeper.`
 * for the protocol and `tenure.` for the recipes.
 */

export const ATTR_SERVER_ADDRESS = 'server.address';
export const ATTR_SERVER_PORT = 'server.port';
export const ATTR_ERROR_TYPE = 'error.type';

export const ATTR_OPERATION = 'zookeeper.operation';
export const ATTR_PATH = 'zookeeper.path';
export const ATTR_SESSION_ID = 'zookeeper.session.id';
export const ATTR_DATA_SIZE = 'zookeeper.data.size';
export const ATTR_OUTCOME = 'zookeeper.outcome';
export const ATTR_SESSION_STATE = 'zookeeper.session.state';
export const ATTR_SESSION_PREVIOUS_STATE = 'zookeeper.session.previous_state';

export const ATTR_LOCK_KIND = 'tenure.lock.kind';
export const ATTR_LOCK_PATH = 'tenure.lock.path';
export const ATTR_LOCK_COUNT = 'tenure.lock.count';
export const ATTR_LOCK_OUTCOME = 'tenure.lock.outcome';
export const ATTR_FENCING_TOKEN = 'tenure.fencing_token';
export const ATTR_LOCK_NODE = 'tenure.lock.node';

export const ATTR_ELECTION_PATH = 'tenure.leader.path';
export const ATTR_PARTICIPANT_ID = 'tenure.leader.participant_id';
export const ATTR_LEADER_RECIPE = 'tenure.leader.recipe';
export const ATTR_LEADER_NODE = 'tenure.leader.node';
export const ATTR_LEADERSHIP_END = 'tenure.leader.end';

export const ATTR_GROUP_PATH = 'tenure.group.path';

export const ATTR_QUEUE_PATH = 'tenure.queue.path';
export const ATTR_QUEUE_NODE = 'tenure.queue.node';
export const ATTR_QUEUE_INDEX = 'tenure.queue.index';
export const ATTR_QUEUE_VIA = 'tenure.queue.via';
export const ATTR_QUEUE_OUTCOME = 'tenure.queue.outcome';

export const SPAN_LOCK_ACQUIRE = 'tenure lock acquire';
export const SPAN_QUEUE_ITEM = 'tenure queue item';
export const SPAN_LEADERSHIP = 'tenure leadership';
export const EVENT_LEADERSHIP_TAKEN = 'tenure.leader.elected';
export const EVENT_LEADERSHIP_ENDED = 'tenure.leader.ended';

/** The span of one Client operation: `zookeeper getData`. */
export function operationSpanName(op: string): string {
  return `zookeeper ${op}`;
}

export const METRIC_OPERATION_DURATION = 'zookeeper.client.operation.duration';
export const METRIC_SESSION_STATE = 'zookeeper.client.session.state';
export const METRIC_SESSION_TRANSITIONS = 'zookeeper.client.session.transitions';
export const METRIC_LOCK_WAIT_DURATION = 'tenure.lock.wait.duration';
export const METRIC_LOCK_HOLD_DURATION = 'tenure.lock.hold.duration';
export const METRIC_LEADERSHIP_HELD = 'tenure.leader.held';
export const METRIC_GROUP_MEMBERS = 'tenure.group.members';
export const METRIC_QUEUE_CONSUMED = 'tenure.queue.consumed.items';
